"""client-go's `util/retry`: `RetryOnConflict` and `OnError`, over tenacity.

A 409 Conflict on an update means another writer (a `kubectl annotate`, a GitOps tool, our own
earlier write the cache has not shown yet) changed the object between our read and our write. It
is not a failure of the work: the caller re-reads the object, recomputes what it writes, and tries
again a few milliseconds later. `DEFAULT_RETRY` is client-go's `retry.DefaultRetry` (5 steps, 10 ms,
factor 1.0, jitter 0.1): enough to ride out a burst of concurrent writers without holding a worker
for long; what still conflicts after that goes back to the queue (see `framework.handle_err`).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity

from jobflow_controller.kube.errors import is_conflict

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """`wait.Backoff`: `steps` attempts, the n-th sleep `duration * factor**n`, each +`jitter`x."""

    steps: int
    duration: float
    factor: float = 1.0
    jitter: float = 0.0

    def delay(self, attempt: int) -> float:
        """The sleep after the `attempt`-th failure (1-based), jittered upwards as wait.Jitter does."""
        base = self.duration * self.factor ** (attempt - 1)
        return base + (random.random() * self.jitter * base if self.jitter > 0 else 0.0)


#: retry.DefaultRetry: for writes that conflict with other writers.
DEFAULT_RETRY = Backoff(steps=5, duration=0.010, factor=1.0, jitter=0.1)
#: retry.DefaultBackoff: for callers that expect to wait on other controllers.
DEFAULT_BACKOFF = Backoff(steps=4, duration=0.010, factor=5.0, jitter=0.1)


def on_error(
    backoff: Backoff,
    retriable: Callable[[BaseException], bool],
    fn: Callable[[], T],
    *,
    stop: threading.Event | None = None,
) -> T:
    """Call `fn` until it succeeds, raises a non-retriable error, or `backoff.steps` are used up.

    The last error is raised as itself (not wrapped), so callers can still tell a conflict from
    anything else. A set `stop` ends the waiting at once and raises the last error.

    The first attempt is made here, without the retry policy: nearly every call succeeds at once,
    and a `tenacity.Retrying` leaves about 27 objects in reference cycles per call, garbage only
    the cyclic collector frees (one per status write and Job create: the soak's heap grew by
    them between full collections). Only a retriable failure builds the policy, for the attempts
    left, with the same sleeps (`backoff.delay(n)` after attempt n) and the same stop.
    """
    stop_event = stop or threading.Event()
    try:
        return fn()
    except Exception as err:
        if not retriable(err) or backoff.steps <= 1 or stop_event.is_set():
            raise
    stop_event.wait(backoff.delay(1))

    def sleep(seconds: float) -> None:
        stop_event.wait(seconds)

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(backoff.steps - 1) | tenacity.stop_when_event_set(stop_event),
        # Its attempt n is attempt n + 1 of the whole.
        wait=lambda state: backoff.delay(state.attempt_number + 1),
        retry=tenacity.retry_if_exception(retriable),
        sleep=sleep,
        reraise=True,
    )
    return retrying(fn)


def retry_on_conflict(backoff: Backoff, fn: Callable[[], T], *, stop: threading.Event | None = None) -> T:
    """`retry.RetryOnConflict`: retry `fn` while it raises a 409 Conflict (AlreadyExists is not one)."""
    return on_error(backoff, is_conflict, fn, stop=stop)
