"""The event correlator: aggregation, deduplication and the spam filter (``events_cache.go``).

A controller that fails in a loop would otherwise write one Event object per failure and flood
etcd and ``kubectl describe``. Every event therefore passes, in this order, through:

1. the **aggregator**, which notices ten *different* messages with the same source, object, type
   and reason inside a sliding ten-minute window and from then on replaces them with one event
   whose message is ``(combined from similar events): <latest message>``;
2. the **logger** (dedup), which turns a repeat of an identical event into an increment of
   ``count`` on the event already stored, sent as a strategic-merge PATCH;
3. the **spam filter**, a token bucket per source + object + type (25 burst, one token every
   five minutes), which skips events beyond that budget. It runs last, so skipped repeats still
   advance the cached count, exactly as in client-go.

Keys are the same field concatenations as client-go's; the caches are LRUs of 4096 entries so a
controller that touches many objects forgets the oldest rather than growing without bound. Ours:
what can no longer change a decision (an aggregate record past its window, a spam bucket refilled
to its burst) is dropped as the correlator goes, and the LRUs keep keys as digests (lru.py). The
spam filter's token buckets (spam_filter.py) and the LRU (lru.py) are modules of their own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from .clock import Clock, RealClock
from .event_logger import EventLogger
from .lru import LRUCache
from .spam_filter import EventSourceObjectSpamFilter, EventSpamKeyFunc, TokenBucketPassiveRateLimiter
from .types import Event, format_time, unix_nano
from .types import field_map as _sub
from .types import field_str as _str

__all__ = [
    "DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS",
    "DEFAULT_AGGREGATE_MAX_EVENTS",
    "DEFAULT_SPAM_BURST",
    "DEFAULT_SPAM_QPS",
    "MAX_LRU_CACHE_ENTRIES",
    "CorrelatorOptions",
    "EventAggregator",
    "EventAggregatorKeyFunc",
    "EventAggregatorMessageFunc",
    "EventCorrelateResult",
    "EventCorrelator",
    "EventSourceObjectSpamFilter",
    "EventSpamKeyFunc",
    "TokenBucketPassiveRateLimiter",
    "event_aggregator_by_reason_func",
    "event_aggregator_by_reason_message_func",
    "get_event_key",
    "get_spam_key",
]

_log = structlog.get_logger(__name__)

#: Size of each LRU cache (spam filter, aggregator, logger).
MAX_LRU_CACHE_ENTRIES = 4096
#: Distinct messages with the same aggregate key before events are combined.
DEFAULT_AGGREGATE_MAX_EVENTS = 10
#: The aggregation window: a gap longer than this resets the count of distinct messages.
DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS = 600
#: Events a source may emit about one object (and type) before it is throttled.
DEFAULT_SPAM_BURST = 25
#: Refill rate of the spam filter's token bucket: one event per five minutes.
DEFAULT_SPAM_QPS = 1.0 / 300.0

#: Returns ``(aggregateKey, localKey)``: events sharing the first are "similar"; the second tells
#: them apart (client-go uses the message).
EventAggregatorKeyFunc = Callable[[Event], tuple[str, str]]
#: Builds the message of the combined event.
EventAggregatorMessageFunc = Callable[[Event], str]
#: Returns True when the event must be skipped.
EventFilterFunc = Callable[[Event], bool]


def get_event_key(event: Mapping[str, Any]) -> str:
    """The dedup key: identical events (message and fieldPath included) share it.

    The involved object's resourceVersion is deliberately absent, so an event about an object
    that changed in between still counts as a repeat.
    """
    source = _sub(event, "source")
    ref = _sub(event, "involvedObject")
    return "".join(
        (
            _str(source, "component"),
            _str(source, "host"),
            _str(ref, "kind"),
            _str(ref, "namespace"),
            _str(ref, "name"),
            _str(ref, "fieldPath"),
            _str(ref, "uid"),
            _str(ref, "apiVersion"),
            _str(event, "type"),
            _str(event, "reason"),
            _str(event, "message"),
        )
    )


def get_spam_key(event: Mapping[str, Any]) -> str:
    """The spam filter's key: source + involved object + type (type since client-go v0.31)."""
    source = _sub(event, "source")
    ref = _sub(event, "involvedObject")
    return "".join(
        (
            _str(source, "component"),
            _str(source, "host"),
            _str(ref, "kind"),
            _str(ref, "namespace"),
            _str(ref, "name"),
            _str(ref, "uid"),
            _str(ref, "apiVersion"),
            _str(event, "type"),
        )
    )


def event_aggregator_by_reason_func(event: Mapping[str, Any]) -> tuple[str, str]:
    """Aggregate by everything but the message (and fieldPath); tell events apart by message."""
    source = _sub(event, "source")
    ref = _sub(event, "involvedObject")
    aggregate_key = "".join(
        (
            _str(source, "component"),
            _str(source, "host"),
            _str(ref, "kind"),
            _str(ref, "namespace"),
            _str(ref, "name"),
            _str(ref, "uid"),
            _str(ref, "apiVersion"),
            _str(event, "type"),
            _str(event, "reason"),
            _str(event, "reportingComponent"),
            _str(event, "reportingInstance"),
        )
    )
    return aggregate_key, _str(event, "message")


def event_aggregator_by_reason_message_func(event: Mapping[str, Any]) -> str:
    """The combined event's message, as ``kubectl describe`` users know it."""
    return "(combined from similar events): " + _str(event, "message")


@dataclass(slots=True)
class _AggregateRecord:
    """The distinct messages seen under one aggregate key, and when the last one arrived.

    The messages are kept as their hashes in a tuple (at most `max_events` of them): only their
    number matters, and a set of three strings cost five times the memory.
    """

    local_keys: tuple[int, ...]
    last_timestamp: float


class EventAggregator:
    """Combines similar events (same aggregate key, different messages) into one.

    The window is an inactivity window: every similar event refreshes it, so a steady trickle
    of distinct messages keeps being aggregated for as long as it lasts.
    """

    def __init__(
        self,
        lru_cache_size: int,
        key_func: EventAggregatorKeyFunc,
        message_func: EventAggregatorMessageFunc,
        max_events: int,
        max_interval_in_seconds: float,
        clock: Clock,
    ) -> None:
        self._cache: LRUCache[_AggregateRecord] = LRUCache(lru_cache_size)
        self._key_func = key_func
        self._message_func = message_func
        self._max_events = max_events
        self._max_interval = float(max_interval_in_seconds)
        self._clock = clock
        self._lock = threading.Lock()

    def event_aggregate(self, new_event: Event) -> tuple[Event, str]:
        """Return the event to record and the key the logger must cache it under.

        Below the threshold the event is returned unchanged with its dedup key. At the threshold
        a new combined event is returned with the aggregate key, so its repeats are counted
        together whatever their messages.
        """
        now = self._clock.now()
        event_key = get_event_key(new_event)
        aggregate_key, local_key = self._key_func(new_event)
        with self._lock:
            record = self._cache.get(aggregate_key)
            if record is None or now - record.last_timestamp > self._max_interval:
                record = _AggregateRecord(local_keys=(), last_timestamp=now)
            record.last_timestamp = now
            local = hash(local_key)
            if local not in record.local_keys:
                record.local_keys = (*record.local_keys, local)
            self._cache.add(aggregate_key, record)
            self._forget_expired(now)
            if len(record.local_keys) < self._max_events:
                return new_event, event_key
            # Keep the set one below the threshold so the next similar event aggregates too.
            record.local_keys = record.local_keys[:-1]
        wall = self._clock.wall()
        stamp = format_time(wall)
        ref = dict(_sub(new_event, "involvedObject"))
        combined: Event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{_str(ref, 'name')}.{unix_nano(wall):x}",
                "namespace": _str(_sub(new_event, "metadata"), "namespace"),
            },
            "involvedObject": ref,
            "reason": _str(new_event, "reason"),
            "message": self._message_func(new_event),
            "source": dict(_sub(new_event, "source")),
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": _str(new_event, "type"),
            # client-go does not copy ReportingController/ReportingInstance into the combined
            # event; core/v1 JSON still carries the (empty) fields.
            "reportingComponent": "",
            "reportingInstance": "",
        }
        return combined, aggregate_key

    def _forget_expired(self, now: float) -> None:
        """Drop the records whose window has passed: one found later would be started afresh
        (above), so dropping it changes nothing but memory. The least recently used record is
        the one touched longest ago, so the expired ones are the oldest few."""
        while (oldest := self._cache.oldest()) is not None and now - oldest.last_timestamp > self._max_interval:
            self._cache.pop_oldest()


@dataclass(frozen=True)
class CorrelatorOptions:
    """``record.CorrelatorOptions``; a zero (or None) field takes the client-go default."""

    lru_cache_size: int = 0
    burst_size: int = 0
    qps: float = 0.0
    key_func: EventAggregatorKeyFunc | None = None
    message_func: EventAggregatorMessageFunc | None = None
    max_events: int = 0
    max_interval_in_seconds: float = 0
    clock: Clock | None = None
    spam_key_func: EventSpamKeyFunc | None = None


@dataclass(frozen=True)
class EventCorrelateResult:
    """The outcome of correlating one event.

    ``skip`` means the spam filter dropped it; otherwise ``event`` is what to write and
    ``patch`` (non-None only when ``event['count'] > 1``) the PATCH for the stored event.
    """

    event: Event | None = None
    patch: dict[str, Any] | None = None
    skip: bool = False


class EventCorrelator:
    """Aggregate → dedup → spam filter, with one set of caches per sink."""

    def __init__(self, clock: Clock | None = None, options: CorrelatorOptions | None = None) -> None:
        opts = options or CorrelatorOptions()
        used_clock: Clock = opts.clock or clock or RealClock()
        lru_size = opts.lru_cache_size or MAX_LRU_CACHE_ENTRIES
        self._aggregator = EventAggregator(
            lru_size,
            opts.key_func or event_aggregator_by_reason_func,
            opts.message_func or event_aggregator_by_reason_message_func,
            opts.max_events or DEFAULT_AGGREGATE_MAX_EVENTS,
            opts.max_interval_in_seconds or DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS,
            used_clock,
        )
        self._logger = EventLogger(lru_size)
        self._spam_filter = EventSourceObjectSpamFilter(
            lru_size,
            opts.burst_size or DEFAULT_SPAM_BURST,
            opts.qps or DEFAULT_SPAM_QPS,
            used_clock,
            opts.spam_key_func or get_spam_key,
        )
        self._filter_func: EventFilterFunc = self._spam_filter.filter

    def event_correlate(self, new_event: Event) -> EventCorrelateResult:
        """Decide what to write for ``new_event``; the input is never modified."""
        aggregate_event, cache_key = self._aggregator.event_aggregate(new_event)
        observed_event, patch = self._logger.event_observe(aggregate_event, cache_key)
        if self._filter_func(observed_event):
            _log.debug(
                "Event skipped by the spam filter",
                reason=observed_event.get("reason"),
                count=observed_event.get("count"),
            )
            return EventCorrelateResult(skip=True)
        return EventCorrelateResult(event=observed_event, patch=patch)

    def update_state(self, event: Event) -> None:
        """Record the server's copy after a successful write, so the next repeat PATCHes it."""
        self._logger.update_state(event, get_event_key(event))
