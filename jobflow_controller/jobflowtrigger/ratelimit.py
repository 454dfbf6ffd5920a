"""A token bucket per trigger: how often one trigger may fire, by HTTP or by resource events.

Each trigger gets ``RATE`` firings a second with bursts of ``BURST`` (docs/triggers.md, "Limits");
beyond it an HTTP caller gets 429 with ``Retry-After`` and a resource event is dropped with a
``TriggerFailed`` Warning. The buckets are kept for at most ``MAX_BUCKETS`` triggers (the least
recently used forgotten first: a forgotten bucket is a full one, so forgetting never lets more
through than a new trigger would get). The clock is injected, so the tests are exact.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Final

RATE: Final = 1.0
BURST: Final = 5
MAX_BUCKETS: Final = 4096


class TriggerRateLimiter:
    """``allow(key)``: take a token from ``key``'s bucket; ``retry_after(key)``: seconds to the next."""

    def __init__(
        self,
        rate: float = RATE,
        burst: int = BURST,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_buckets: int = MAX_BUCKETS,
    ) -> None:
        self.rate, self.burst = rate, burst
        self._clock = clock
        self._max = max_buckets
        self._buckets: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def _tokens(self, key: Hashable, now: float) -> float:
        tokens, stamp = self._buckets.get(key, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - stamp) * self.rate)

    def allow(self, key: Hashable) -> bool:
        with self._lock:
            now = self._clock()
            tokens = self._tokens(key, now)
            allowed = tokens >= 1.0
            self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)
            self._buckets.move_to_end(key)
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
            return allowed

    def retry_after(self, key: Hashable) -> float:
        with self._lock:
            tokens = self._tokens(key, self._clock())
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._buckets.pop(key, None)
