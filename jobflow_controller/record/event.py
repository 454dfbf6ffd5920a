"""EventBroadcaster and EventRecorder (client-go ``tools/record/event.go``).

The shape is client-go's, on threads:

* ``EventRecorder.event``/``eventf`` builds a core/v1 Event dict and hands it to the broadcaster
  without blocking. The broadcaster's incoming queue holds ``MAX_QUEUED_EVENTS`` (1000) events;
  when it is full the event is dropped with a log line (``watch.DropIfChannelFull``), because
  recording an event must never stall a controller's worker.
* One distribution thread copies each event to every watcher. Each watcher (the API sink, the
  logger) has its own 1000-slot buffer and thread, so a slow API server never delays the log
  and vice versa; a full buffer drops, again like client-go.
* ``start_recording_to_sink`` gives its watcher a fresh :class:`EventCorrelator` and writes with
  :func:`record_to_sink`: correlate, then create or patch, retried on transport errors up to 12
  attempts, 10 s apart with a random first sleep, through tenacity with a sleep that ``shutdown``
  interrupts.
* ``shutdown`` stops intake, lets everything already queued reach the watchers, cancels retry
  sleeps (client-go cancels its context at the same point), and waits a bounded time for the
  watchers to finish writing what they hold.
"""

from __future__ import annotations

import copy
import json
import queue
import random
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
import tenacity

from ._gofmt import sprintf
from .clock import Clock, RealClock
from .events_cache import CorrelatorOptions, EventCorrelator
from .sink import EventSink, SinkError
from .types import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    Event,
    EventSource,
    format_time,
    unix_nano,
)

__all__ = [
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "DEFAULT_SLEEP_DURATION",
    "MAX_QUEUED_EVENTS",
    "MAX_TRIES_PER_EVENT",
    "EventBroadcaster",
    "EventRecorder",
    "EventWatcher",
    "KindResolver",
    "ObjectReferenceError",
    "generate_event_name",
    "get_reference",
    "record_to_sink",
    "validate_event_type",
]

_log = structlog.get_logger(__name__)

#: Attempts per event write before giving up.
MAX_TRIES_PER_EVENT = 12
#: Seconds between write attempts (the first sleep is a random fraction of it).
DEFAULT_SLEEP_DURATION = 10.0
#: Capacity of the broadcaster's incoming queue and of each watcher's buffer.
MAX_QUEUED_EVENTS = 1000
#: How long ``shutdown`` waits, by default, for queued events to be written.
DEFAULT_SHUTDOWN_TIMEOUT = 5.0

#: Resolves ``(apiVersion, kind)`` for an object dict that lacks them (the role of client-go's
#: scheme); return None when unknown.
KindResolver = Callable[[Mapping[str, Any]], tuple[str, str] | None]

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_REFERENCE_FIELDS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


class ObjectReferenceError(ValueError):
    """The object cannot be turned into an ``involvedObject`` reference."""


class EventRecorder(Protocol):
    """``record.EventRecorder``: what controllers call to report events about objects.

    ``obj`` is the API's JSON dict of the object (``apiVersion``, ``kind``, ``metadata``), or an
    ``ObjectReference`` dict, which is used as is.
    """

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None: ...

    def eventf(self, obj: Mapping[str, Any], event_type: str, reason: str, message_fmt: str, *args: Any) -> None: ...

    def annotated_eventf(
        self,
        obj: Mapping[str, Any],
        annotations: Mapping[str, str] | None,
        event_type: str,
        reason: str,
        message_fmt: str,
        *args: Any,
    ) -> None: ...


def validate_event_type(event_type: str) -> bool:
    """Only ``Normal`` and ``Warning`` exist; anything else is a programming error."""
    return event_type in (EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING)


def generate_event_name(ref_name: str, unix_nanos: int) -> str:
    """``<name>.<hex unix nanos>``, or a random UUID when that is not a valid DNS subdomain."""
    name = f"{ref_name}.{unix_nanos:x}"
    if len(name) > _DNS1123_SUBDOMAIN_MAX_LENGTH or not _DNS1123_SUBDOMAIN.match(name):
        return str(uuid.uuid4())
    return name


def get_reference(obj: Mapping[str, Any], scheme: KindResolver | None = None) -> dict[str, str]:
    """Build the ``involvedObject`` for ``obj`` (``ref.GetReference``).

    It carries kind, namespace, name, uid, apiVersion and resourceVersion; ``kubectl describe``
    finds events through a field selector on name, namespace, kind and uid, so all four must be
    the object's own. Empty fields are omitted, as Go's ``omitempty`` does.
    """
    if not isinstance(obj, Mapping):
        raise ObjectReferenceError(f"object of type {type(obj).__name__} is not an API object dict")
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        if obj.get("kind") and obj.get("name"):
            return {field: str(obj[field]) for field in _REFERENCE_FIELDS if obj.get(field)}
        raise ObjectReferenceError("object has neither metadata nor the fields of an ObjectReference")
    api_version = str(obj.get("apiVersion") or "")
    kind = str(obj.get("kind") or "")
    if (not api_version or not kind) and scheme is not None:
        resolved = scheme(obj)
        if resolved is not None:
            api_version, kind = resolved
    if not api_version or not kind:
        raise ObjectReferenceError("object has no apiVersion/kind and the scheme does not know it")
    ref = {
        "kind": kind,
        "namespace": str(metadata.get("namespace") or ""),
        "name": str(metadata.get("name") or ""),
        "uid": str(metadata.get("uid") or ""),
        "apiVersion": api_version,
        "resourceVersion": str(metadata.get("resourceVersion") or ""),
    }
    return {field: value for field, value in ref.items() if value}


def _object_key(ref: Mapping[str, Any]) -> str:
    """``klog.KRef`` rendering: ``namespace/name``, or ``name`` when cluster-scoped."""
    namespace = str(ref.get("namespace") or "")
    name = str(ref.get("name") or "")
    return f"{namespace}/{name}" if namespace else name


def _event_fields(event: Mapping[str, Any]) -> dict[str, Any]:
    """Log fields naming an event without dumping it."""
    metadata = event.get("metadata") or {}
    ref = event.get("involvedObject") or {}
    return {
        "eventName": _object_key(metadata),
        "object": _object_key(ref),
        "kind": ref.get("kind", ""),
        "reason": event.get("reason", ""),
        "count": event.get("count"),
    }


def _go_quote(value: Any) -> str:
    return json.dumps("" if value is None else str(value), ensure_ascii=False)


def _go_syntax_reference(ref: Mapping[str, Any]) -> str:
    """``%#v`` of a ``v1.ObjectReference``, as ``StartLogging`` prints it."""
    fields = (
        ("Kind", "kind"),
        ("Namespace", "namespace"),
        ("Name", "name"),
        ("UID", "uid"),
        ("APIVersion", "apiVersion"),
        ("ResourceVersion", "resourceVersion"),
        ("FieldPath", "fieldPath"),
    )
    inner = ", ".join(f"{go}:{_go_quote(ref.get(key, ''))}" for go, key in fields)
    return f"v1.ObjectReference{{{inner}}}"


# --------------------------------------------------------------------------------------------
# Writing to the sink


@dataclass(frozen=True)
class _Outcome:
    """One write attempt: ``done`` ends the loop (written or given up); ``err`` is why not."""

    done: bool
    err: BaseException | None = None


class _BroadcasterStopped(Exception):
    """Raised from the retry sleep when the broadcaster shuts down, to abandon the event."""


def _record_event(
    sink: EventSink,
    event: Event,
    patch: Mapping[str, Any] | None,
    update_existing: bool,
    correlator: EventCorrelator,
) -> _Outcome:
    """One attempt at writing ``event`` (client-go ``recordEvent``)."""
    new_event: Any = None
    err: BaseException | None = None
    if update_existing:
        try:
            new_event = sink.patch(event, patch or {})
        except Exception as exc:  # noqa: BLE001 - any sink failure is classified below
            err = exc
    # The stored event may have expired (events have a TTL); then it is created anew.
    if not update_existing or (isinstance(err, SinkError) and err.not_found):
        event["metadata"].pop("resourceVersion", None)
        err = None
        try:
            new_event = sink.create(event)
        except Exception as exc:  # noqa: BLE001 - any sink failure is classified below
            err = exc
    if err is None:
        if isinstance(new_event, Mapping):
            correlator.update_state(dict(new_event))
            return _Outcome(done=True)
        err = TypeError(f"sink returned {type(new_event).__name__}, not an Event")
    if isinstance(err, SinkError) and not err.retriable:
        if err.status is None:
            _log.error("Unable to construct event (will not retry!)", err=str(err), **_event_fields(event))
        elif err.already_exists or err.namespace_terminating:
            _log.debug("Server rejected event (will not retry!)", err=str(err), **_event_fields(event))
        else:
            _log.error("Server rejected event (will not retry!)", err=str(err), **_event_fields(event))
        return _Outcome(done=True, err=err)
    return _Outcome(done=False, err=err)


def record_to_sink(
    sink: EventSink,
    event: Event,
    correlator: EventCorrelator,
    sleep_duration: float,
    stop: threading.Event,
    *,
    rand: Callable[[], float] = random.random,
) -> None:
    """Correlate ``event`` and write the result, retrying transport failures.

    Up to ``MAX_TRIES_PER_EVENT`` attempts; the first sleep is ``sleep_duration * rand()`` so
    that many clients do not hammer a recovering API server in step, later ones are exactly
    ``sleep_duration``. Setting ``stop`` abandons the event at the next sleep.
    """
    event = copy.deepcopy(event)
    result = correlator.event_correlate(event)
    if result.skip or result.event is None:
        return
    to_write = result.event
    update_existing = int(to_write.get("count") or 0) > 1

    def wait(state: tenacity.RetryCallState) -> float:
        return sleep_duration * rand() if state.attempt_number == 1 else sleep_duration

    def sleep(seconds: float) -> None:
        if stop.wait(seconds):
            raise _BroadcasterStopped

    def last_error(state: tenacity.RetryCallState) -> BaseException | None:
        outcome = state.outcome.result() if state.outcome is not None else None
        return outcome.err if isinstance(outcome, _Outcome) else None

    def before_sleep(state: tenacity.RetryCallState) -> None:
        err = last_error(state)
        _log.error(
            "Unable to write event (may retry after sleeping)",
            err=str(err),
            errType=type(err).__name__,
            attempt=state.attempt_number,
            sleepSeconds=round(state.upcoming_sleep, 3),
            **_event_fields(to_write),
        )

    def give_up(state: tenacity.RetryCallState) -> _Outcome:
        if stop.is_set():
            _log.error("Unable to write event (broadcaster is shut down)", **_event_fields(to_write))
        else:
            _log.error(
                "Unable to write event (retry limit exceeded!)",
                err=str(last_error(state)),
                attempts=state.attempt_number,
                **_event_fields(to_write),
            )
        return _Outcome(done=False)

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(MAX_TRIES_PER_EVENT) | tenacity.stop_when_event_set(stop),
        wait=wait,
        sleep=sleep,
        retry=tenacity.retry_if_result(lambda outcome: not outcome.done),
        before_sleep=before_sleep,
        retry_error_callback=give_up,
    )
    try:
        retrying(_record_event, sink, to_write, result.patch, update_existing, correlator)
    except _BroadcasterStopped:
        _log.error("Unable to write event (broadcaster is shut down)", **_event_fields(to_write))


# --------------------------------------------------------------------------------------------
# Broadcasting


class EventWatcher:
    """One consumer of the broadcaster's events with its own buffer and thread.

    ``stop`` detaches it; events already buffered are still handled, as a closed Go channel
    still yields what it holds.
    """

    def __init__(
        self,
        broadcaster: EventBroadcaster,
        handler: Callable[[Event], None],
        name: str,
        capacity: int,
    ) -> None:
        self._broadcaster = broadcaster
        self._handler = handler
        self._name = name
        self._capacity = capacity
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    @property
    def name(self) -> str:
        return self._name

    def stop(self) -> None:
        """Stop receiving events; what is buffered is still handled."""
        if self._broadcaster._remove_watcher(self):
            self._close()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the watcher's thread to finish; True when it did."""
        if self._thread.ident is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def pending(self) -> int:
        """Events buffered but not handled yet."""
        return self._queue.qsize()

    def _start(self) -> None:
        self._thread.start()

    def _offer(self, event: Event) -> None:
        # Only the distribution thread offers, so the size check cannot race another producer.
        if self._queue.qsize() >= self._capacity:
            _log.error(
                "Unable to deliver event: watcher buffer full, dropped event",
                watcher=self._name,
                **_event_fields(event),
            )
            return
        self._queue.put(event)

    def _close(self) -> None:
        self._queue.put(None)

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            try:
                self._handler(event)
            except Exception:  # noqa: BLE001 - one bad event must not kill the watcher
                _log.exception("Event handler failed", watcher=self._name, **_event_fields(event))


class _EventNamer:
    """Event names from the clock, strictly increasing per broadcaster.

    ``datetime`` has microsecond resolution where Go has nanoseconds, so two events about one
    object in the same microsecond would otherwise share a name and the second would be
    rejected as AlreadyExists. Bumping by one nanosecond keeps names unique and ordered.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def next_nanos(self, nanos: int) -> int:
        with self._lock:
            if nanos <= self._last:
                nanos = self._last + 1
            self._last = nanos
            return nanos


class _RecorderImpl:
    """``recorderImpl``: builds events for one source and hands them to the broadcaster."""

    def __init__(
        self,
        broadcaster: EventBroadcaster,
        source: EventSource,
        clock: Clock,
        namer: _EventNamer,
        scheme: KindResolver | None,
    ) -> None:
        self._broadcaster = broadcaster
        self._source = source
        self._clock = clock
        self._namer = namer
        self._scheme = scheme

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        self._generate_event(obj, None, event_type, reason, message)

    def eventf(self, obj: Mapping[str, Any], event_type: str, reason: str, message_fmt: str, *args: Any) -> None:
        self._generate_event(obj, None, event_type, reason, sprintf(message_fmt, *args))

    def annotated_eventf(
        self,
        obj: Mapping[str, Any],
        annotations: Mapping[str, str] | None,
        event_type: str,
        reason: str,
        message_fmt: str,
        *args: Any,
    ) -> None:
        self._generate_event(obj, annotations, event_type, reason, sprintf(message_fmt, *args))

    def _generate_event(
        self,
        obj: Mapping[str, Any],
        annotations: Mapping[str, str] | None,
        event_type: str,
        reason: str,
        message: str,
    ) -> None:
        try:
            ref = get_reference(obj, self._scheme)
        except ObjectReferenceError as err:
            _log.error(
                "Could not construct reference, will not report event",
                err=str(err),
                eventType=event_type,
                reason=reason,
                message=message,
            )
            return
        if not validate_event_type(event_type):
            _log.error("Unsupported event type", eventType=event_type, reason=reason, object=_object_key(ref))
            return
        self._broadcaster._action_or_drop(self._make_event(ref, annotations, event_type, reason, message))

    def _make_event(
        self,
        ref: dict[str, str],
        annotations: Mapping[str, str] | None,
        event_type: str,
        reason: str,
        message: str,
    ) -> Event:
        wall = self._clock.wall()
        stamp = format_time(wall)
        metadata: dict[str, Any] = {
            "name": generate_event_name(ref.get("name", ""), self._namer.next_nanos(unix_nano(wall))),
            # Cluster-scoped objects have no namespace; their events live in "default".
            "namespace": ref.get("namespace") or "default",
        }
        if annotations:
            metadata["annotations"] = dict(annotations)
        # Field order is core/v1 Event's, so the JSON reads like client-go's. No eventTime:
        # core/v1 recorders leave it unset, which keeps the API server's legacy validation
        # (eventTime would also require action, reportingComponent and reportingInstance).
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": metadata,
            "involvedObject": dict(ref),
            "reason": reason,
            "message": message,
            "source": self._source.to_dict(),
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": event_type,
            "reportingComponent": self._source.component,
            "reportingInstance": self._source.host,
        }


class EventBroadcaster:
    """``record.EventBroadcaster``: fans recorded events out to the sink and the log.

    ``sleep_duration`` is the retry interval of sink writes (10 s; tests pass 0), ``clock``
    stamps events and drives the correlators, ``rand`` draws the first retry's jitter.
    The distribution thread starts with the broadcaster, as in client-go; call
    :meth:`shutdown` to stop it.
    """

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        sleep_duration: float = DEFAULT_SLEEP_DURATION,
        correlator_options: CorrelatorOptions | None = None,
        max_queued_events: int = MAX_QUEUED_EVENTS,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self._clock: Clock = clock or RealClock()
        self._sleep_duration = sleep_duration
        self._correlator_options = correlator_options
        self._capacity = max_queued_events
        self._rand = rand
        self._namer = _EventNamer()
        self._incoming: queue.Queue[Event | None] = queue.Queue(maxsize=max_queued_events)
        self._lock = threading.Lock()
        self._watchers: list[EventWatcher] = []
        self._started_watchers: list[EventWatcher] = []
        self._watcher_seq = 0
        self._stopped = False
        # Cancelled at shutdown once queued events are distributed: retry sleeps end early.
        self._cancel = threading.Event()
        self._distributor = threading.Thread(target=self._distribute, name="event-broadcaster", daemon=True)
        self._distributor.start()

    # -- consumers ---------------------------------------------------------------------------

    def start_event_watcher(self, handler: Callable[[Event], None]) -> EventWatcher:
        """Call ``handler`` (on a dedicated thread) with every event recorded from now on.

        The event dict is shared with the other watchers: read it, never modify it.
        """
        with self._lock:
            self._watcher_seq += 1
            watcher = EventWatcher(self, handler, f"event-watcher-{self._watcher_seq}", self._capacity)
            if self._stopped:
                stopped = True
            else:
                stopped = False
                self._watchers.append(watcher)
                self._started_watchers.append(watcher)
                watcher._start()
        if stopped:
            _log.error("Unable to start event watcher: broadcaster already stopped", watcher=watcher.name)
        return watcher

    def start_recording_to_sink(self, sink: EventSink) -> EventWatcher:
        """Write every event to ``sink`` through a correlator of its own."""
        correlator = EventCorrelator(self._clock, self._correlator_options)

        def handler(event: Event) -> None:
            record_to_sink(sink, event, correlator, self._sleep_duration, self._cancel, rand=self._rand)

        return self.start_event_watcher(handler)

    def start_logging(self, logf: Callable[[str], None]) -> EventWatcher:
        """Pass each event to ``logf`` in client-go's ``StartLogging`` format (Volcano uses it)."""

        def handler(event: Event) -> None:
            ref = event.get("involvedObject") or {}
            logf(
                f"Event({_go_syntax_reference(ref)}): type: '{event.get('type', '')}' "
                f"reason: '{event.get('reason', '')}' {event.get('message', '')}"
            )

        return self.start_event_watcher(handler)

    def start_structured_logging(self, verbosity: int = 0) -> EventWatcher:
        """Log each event as ``Event occurred`` with key=value fields.

        klog's ``V(verbosity)`` maps onto levels: 0 logs at info, anything higher at debug.
        """
        at_info = verbosity <= 0

        def handler(event: Event) -> None:
            ref = event.get("involvedObject") or {}
            fields = {
                "object": _object_key(ref),
                "fieldPath": ref.get("fieldPath", ""),
                "kind": ref.get("kind", ""),
                "apiVersion": ref.get("apiVersion", ""),
                "type": event.get("type", ""),
                "reason": event.get("reason", ""),
                "message": event.get("message", ""),
            }
            # Resolve the logger method per call: binding it once would freeze the structlog
            # configuration in force when the watcher started.
            if at_info:
                _log.info("Event occurred", **fields)
            else:
                _log.debug("Event occurred", **fields)

        return self.start_event_watcher(handler)

    # -- producers ---------------------------------------------------------------------------

    def new_recorder(
        self,
        source_component: str,
        source_host: str = "",
        *,
        scheme: KindResolver | None = None,
    ) -> EventRecorder:
        """A recorder whose events come from ``source_component`` (``kubectl describe``'s From)."""
        source = EventSource(source_component, source_host)
        return _RecorderImpl(self, source, self._clock, self._namer, scheme)

    # -- lifecycle ---------------------------------------------------------------------------

    def shutdown(self, timeout: float | None = DEFAULT_SHUTDOWN_TIMEOUT) -> bool:
        """Stop intake and flush: True when every queued event was handled within ``timeout``.

        Events recorded afterwards are dropped with a log. Each event still queued gets its
        write attempt, but retry sleeps are cut short, so a dead API server costs at most one
        attempt per event, and never more than ``timeout`` in total (None waits without bound).
        """
        deadline = None if timeout is None else time.monotonic() + timeout

        def remaining() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        with self._lock:
            first = not self._stopped
            self._stopped = True
            watchers = list(self._started_watchers)
        if first:
            try:
                self._incoming.put(None, timeout=remaining())
            except queue.Full:
                _log.error("Unable to stop event broadcaster: incoming queue stayed full")
        self._distributor.join(remaining())
        self._cancel.set()
        flushed = not self._distributor.is_alive()
        for watcher in watchers:
            flushed = watcher.join(remaining()) and flushed
        if not flushed:
            _log.warning(
                "Event broadcaster shut down before all events were written",
                queued=self._incoming.qsize(),
                buffered=sum(w.pending() for w in watchers),
            )
        return flushed

    def _action_or_drop(self, event: Event) -> None:
        """Enqueue without blocking; drop (and say so) when stopped or full."""
        with self._lock:
            stopped = self._stopped
            sent = False
            if not stopped:
                try:
                    self._incoming.put_nowait(event)
                    sent = True
                except queue.Full:
                    pass
        if stopped:
            _log.error(
                "Unable to record event: will not retry!",
                err="broadcaster already stopped",
                **_event_fields(event),
            )
        elif not sent:
            _log.error(
                "Unable to record event: too many queued events, dropped event",
                **_event_fields(event),
            )

    def _remove_watcher(self, watcher: EventWatcher) -> bool:
        with self._lock:
            if watcher in self._watchers:
                self._watchers.remove(watcher)
                return True
            return False

    def _distribute(self) -> None:
        while True:
            event = self._incoming.get()
            if event is None:
                break
            with self._lock:
                watchers = list(self._watchers)
            for watcher in watchers:
                watcher._offer(event)
        with self._lock:
            watchers = list(self._watchers)
            self._watchers.clear()
        for watcher in watchers:
            watcher._close()
