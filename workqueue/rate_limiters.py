"""Rate limiters (client-go ``util/workqueue/default_rate_limiters.go``): how long to wait before a retry.

A limiter answers ``when(item)``, the delay before ``item`` may be retried, and every ``when`` call is
counted as a failure: it changes the limiter's state. ``forget(item)`` clears that item's history
(call it once the item succeeded, or its backoff keeps growing), and ``num_requeues(item)`` is the
number of ``when`` calls since the last ``forget``, not a count of actual requeues.

Delays are float seconds.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from workqueue.clock import Clock, RealClock

__all__ = [
    "INF_DURATION",
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
]

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)

#: The longest Go ``time.Duration`` (``math.MaxInt64`` ns, about 292 years), in seconds. Go's
#: ``rate.InfDuration`` is this value, and the exponential limiter clamps at it.
INF_DURATION = (2**63 - 1) / 1e9


class RateLimiter(Protocol[T_contra]):
    """client-go ``TypedRateLimiter``."""

    def when(self, item: T_contra) -> float:
        """Record a failure of ``item`` and return how long to wait before retrying it."""
        ...

    def forget(self, item: T_contra) -> None:
        """Clear ``item``'s failure history; it does not touch any queue."""
        ...

    def num_requeues(self, item: T_contra) -> int:
        """Failures recorded for ``item`` since it was last forgotten."""
        ...


class ItemExponentialFailureRateLimiter(Generic[T]):
    """Per item, ``base_delay * 2**failures``, capped at ``max_delay``.

    The exponent is read before it is incremented, so the first delay is exactly ``base_delay``. The
    product is computed in floating point and clamped, so a thousand failures give ``max_delay``
    rather than an overflow or a negative duration.
    """

    def __init__(self, base_delay: float, max_delay: float) -> None:
        self._lock = threading.Lock()
        self._failures: dict[T, int] = {}
        self._base_delay = base_delay
        self._max_delay = max_delay

    def when(self, item: T) -> float:
        with self._lock:
            exp = self._failures.get(item, 0)
            self._failures[item] = exp + 1
        try:
            backoff = math.ldexp(self._base_delay, exp)
        except OverflowError:
            return self._max_delay
        if backoff > INF_DURATION:
            return self._max_delay
        if backoff > self._max_delay:
            return self._max_delay
        return backoff

    def num_requeues(self, item: T) -> int:
        with self._lock:
            return self._failures.get(item, 0)

    def forget(self, item: T) -> None:
        with self._lock:
            self._failures.pop(item, None)


class ItemFastSlowRateLimiter(Generic[T]):
    """Per item, ``fast_delay`` for the first ``max_fast_attempts`` failures, ``slow_delay`` after."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self._lock = threading.Lock()
        self._failures: dict[T, int] = {}
        self._fast_delay = fast_delay
        self._slow_delay = slow_delay
        self._max_fast_attempts = max_fast_attempts

    def when(self, item: T) -> float:
        with self._lock:
            failures = self._failures.get(item, 0) + 1
            self._failures[item] = failures
        if failures <= self._max_fast_attempts:
            return self._fast_delay
        return self._slow_delay

    def num_requeues(self, item: T) -> int:
        with self._lock:
            return self._failures.get(item, 0)

    def forget(self, item: T) -> None:
        with self._lock:
            self._failures.pop(item, None)


class BucketRateLimiter(Generic[T]):
    """An overall token bucket (``golang.org/x/time/rate``) with reserve semantics.

    The bucket starts full (``burst`` tokens) and refills at ``qps`` tokens per second. ``when`` never
    rejects: it always takes a token, now or in the future, and returns how long until that token
    exists, so delays accumulate while calls outpace ``qps``. Tokens are never given back: ``forget``
    does nothing and ``num_requeues`` is always 0, because the bucket is not per item.

    ``qps`` may be ``math.inf`` (no limit). With ``burst < 1`` no reservation can succeed and the delay
    is ``INF_DURATION``, as in Go.
    """

    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        self._lock = threading.Lock()
        self._clock: Clock = clock if clock is not None else RealClock()
        self._limit = qps
        self._burst = burst
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, item: T) -> float:
        return self._reserve()

    def num_requeues(self, item: T) -> int:
        return 0

    def forget(self, item: T) -> None:
        pass

    def delay(self) -> float:
        """How long a reservation made now would wait, without making one (rate.Limiter.TokensAt)."""
        if self._limit == math.inf:
            return 0.0
        if self._burst < 1:
            return INF_DURATION
        with self._lock:
            return self._next_token(self._clock.now())[1]

    def _reserve(self) -> float:
        if self._limit == math.inf:
            return 0.0
        with self._lock:
            now = self._clock.now()
            tokens, wait = self._next_token(now)
            if self._burst < 1:
                return INF_DURATION
            self._last = now
            self._tokens = tokens
            return wait

    def _next_token(self, now: float) -> tuple[float, float]:
        """The tokens left once the next one is taken at `now`, and how long until it exists."""
        tokens = self._advance(now) - 1.0
        return tokens, self._duration_from_tokens(-tokens) if tokens < 0 else 0.0

    def _advance(self, now: float) -> float:
        last = self._last
        if last is None:
            # Go's limiter starts with a zero "last" time, so its first refill fills the bucket.
            return float(self._burst)
        elapsed = max(now - last, 0.0)
        delta = elapsed * self._limit if self._limit > 0 else 0.0
        return min(self._tokens + delta, float(self._burst))

    def _duration_from_tokens(self, tokens: float) -> float:
        if self._limit <= 0:
            return INF_DURATION
        return min(tokens / self._limit, INF_DURATION)


class MaxOfRateLimiter(Generic[T]):
    """The largest delay of several limiters; every limiter is consulted on every call.

    Calling every ``when`` matters: combined with a bucket, each retry takes a global token even when
    the per-item backoff is the larger delay.
    """

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        self._limiters = limiters

    def when(self, item: T) -> float:
        longest = 0.0
        for limiter in self._limiters:
            delay = limiter.when(item)
            if delay > longest:
                longest = delay
        return longest

    def num_requeues(self, item: T) -> int:
        most = 0
        for limiter in self._limiters:
            most = max(most, limiter.num_requeues(item))
        return most

    def forget(self, item: T) -> None:
        for limiter in self._limiters:
            limiter.forget(item)


class WithMaxWaitRateLimiter(Generic[T]):
    """Another limiter's delay, but never more than ``max_delay``."""

    def __init__(self, limiter: RateLimiter[T], max_delay: float) -> None:
        self._limiter = limiter
        self._max_delay = max_delay

    def when(self, item: T) -> float:
        delay = self._limiter.when(item)
        if delay > self._max_delay:
            return self._max_delay
        return delay

    def num_requeues(self, item: T) -> int:
        return self._limiter.num_requeues(item)

    def forget(self, item: T) -> None:
        self._limiter.forget(item)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter[T]:
    """client-go's default: per-item exponential 5 ms..1000 s, by max with a 10 qps / burst 100 bucket.

    ``clock`` drives the bucket only (Go's bucket always reads the wall clock); leave it None outside
    tests.
    """
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock=clock),
    )


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter[T]:
    """client-go's per-item default: exponential 1 ms..1000 s, with no overall bucket."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)
