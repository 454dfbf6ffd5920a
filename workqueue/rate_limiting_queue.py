"""The rate-limiting queue (client-go ``util/workqueue/rate_limiting_queue.go``).

A delaying queue that asks a rate limiter how long to wait before a retry. The controller pattern is:

* on failure, ``add_rate_limited(key)``: the limiter records a failure and the key comes back after
  its delay;
* on success, ``forget(key)``: only the limiter's history is cleared, so the next failure starts the
  backoff again. The key stays in the queue if it is there;
* always, ``done(key)``: ``forget`` does not replace it, and a key never marked done is never handed
  out again.

``num_requeues`` is the limiter's count of ``when`` calls since the last ``forget``, which is what a
controller compares with its maximum number of retries.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol, TypeVar

from workqueue.clock import Clock
from workqueue.delaying_queue import DelayingInterface, DelayingQueue
from workqueue.metrics import DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD, MetricsProvider
from workqueue.queue import QueueStorage
from workqueue.rate_limiters import RateLimiter

__all__ = ["RateLimitingInterface", "RateLimitingQueue"]

T = TypeVar("T", bound=Hashable)


class RateLimitingInterface(DelayingInterface[T], Protocol[T]):
    """client-go ``TypedRateLimitingInterface``."""

    def add_rate_limited(self, item: T) -> None: ...

    def forget(self, item: T) -> None: ...

    def num_requeues(self, item: T) -> int: ...


class RateLimitingQueue(DelayingQueue[T]):
    """A ``DelayingQueue`` whose retries are spaced by ``rate_limiter``."""

    def __init__(
        self,
        rate_limiter: RateLimiter[T],
        *,
        name: str = "",
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
        queue: QueueStorage[T] | None = None,
        unfinished_work_update_period: float = DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
    ) -> None:
        super().__init__(
            name=name,
            clock=clock,
            metrics_provider=metrics_provider,
            queue=queue,
            unfinished_work_update_period=unfinished_work_update_period,
        )
        self._rate_limiter = rate_limiter

    @property
    def rate_limiter(self) -> RateLimiter[T]:
        return self._rate_limiter

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the limiter's delay; the limiter counts a failure even if shutting down."""
        self.add_after(item, self._rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Clear ``item``'s backoff history; it neither removes the item nor replaces ``done``."""
        self._rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self._rate_limiter.num_requeues(item)
