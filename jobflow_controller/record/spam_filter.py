"""The correlator's spam filter (``EventSourceObjectSpamFilter`` of ``events_cache.go``).

A token bucket per source + object + type (``flowcontrol``'s passive token bucket: try, never
wait), so a controller failing in a loop cannot flood etcd with events about one object.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .clock import Clock
from .lru import LRUCache
from .types import Event

__all__ = ["EventSourceObjectSpamFilter", "EventSpamKeyFunc", "TokenBucketPassiveRateLimiter"]

#: Returns the key under which the spam filter keeps a token bucket.
EventSpamKeyFunc = Callable[[Event], str]


class TokenBucketPassiveRateLimiter:
    """``flowcontrol.NewTokenBucketPassiveRateLimiterWithClock``: try, never wait.

    The bucket starts full (``burst`` tokens) and refills at ``qps`` tokens per second of the
    injected monotonic clock, capped at ``burst``. A failed ``try_accept`` consumes nothing, as
    ``rate.Limiter.AllowN`` leaves its state untouched when it says no.
    """

    __slots__ = ("_burst", "_clock", "_last", "_qps", "_tokens")

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        self._qps = qps
        self._burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last: float | None = None

    def try_accept(self) -> bool:
        now = self._clock.now()
        tokens = self._tokens_at(now)
        if tokens < 1.0:
            return False
        self._tokens = tokens - 1.0
        self._last = now
        return True

    def is_full(self) -> bool:
        """Whether the bucket has refilled to `burst`: it is then as good as a new one."""
        return self._tokens_at(self._clock.now()) >= self._burst

    def _tokens_at(self, now: float) -> float:
        if self._last is None:
            return float(self._burst)
        elapsed = max(0.0, now - self._last)
        return min(float(self._burst), self._tokens + elapsed * self._qps)


class EventSourceObjectSpamFilter:
    """Skips events once a source has spent its token budget on one object (and type)."""

    def __init__(
        self,
        lru_cache_size: int,
        burst: int,
        qps: float,
        clock: Clock,
        spam_key_func: EventSpamKeyFunc,
    ) -> None:
        self._cache: LRUCache[TokenBucketPassiveRateLimiter] = LRUCache(lru_cache_size)
        self._burst = burst
        self._qps = qps
        self._clock = clock
        self._spam_key_func = spam_key_func
        self._lock = threading.Lock()

    def filter(self, event: Event) -> bool:
        """True when the event must be skipped."""
        key = self._spam_key_func(event)
        with self._lock:
            limiter = self._cache.get(key)
            if limiter is None:
                limiter = TokenBucketPassiveRateLimiter(self._qps, self._burst, self._clock)
            skip = not limiter.try_accept()
            self._cache.add(key, limiter)
            # A full bucket found later would be replaced by a new one, full too: dropping it
            # changes nothing but memory. Only the least recently used are looked at, so one
            # still refilling keeps those behind it until it is full.
            while (oldest := self._cache.oldest()) is not None and oldest is not limiter and oldest.is_full():
                self._cache.pop_oldest()
        return skip
