"""Clocks: the time source every queue, limiter and loop is handed instead of reading time itself.

client-go injects ``k8s.io/utils/clock`` so that tests step time instead of sleeping. This module is
that seam for the whole project: ``RealClock`` reads the monotonic clock, ``FakeClock`` only moves
when a test calls ``step``/``set_time`` and wakes whoever waits on it once their deadline has passed.

Time is a float number of seconds. ``now()`` is monotonic (never wall time, which can jump), and
``wall()`` exists separately for the few places that need a timestamp to show to people.

The two blocking primitives are what the threads of this project wait with:

* ``sleep(seconds, stop)``, an interruptible sleep for loops driven by a stop ``threading.Event``
  (Go's ``select`` on a timer and ``stopCh``);
* ``wait_until(cond, deadline)``, a ``threading.Condition`` wait that also ends at an absolute
  deadline on this clock (Go's ``select`` on a timer and a channel). The deadline is absolute so that
  a fake clock stepped between a caller reading ``now()`` and starting to wait cannot make the
  caller oversleep.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

__all__ = ["DEFAULT_FAKE_EPOCH", "Clock", "FakeClock", "RealClock"]

#: What ``FakeClock.wall()`` reads before any time has been stepped.
DEFAULT_FAKE_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)

# How often a fake-clock sleeper re-checks its stop event: threading.Event cannot notify anyone else's
# condition, so stop is polled. Only fake clocks poll, and only while they have a stop event.
_STOP_POLL_INTERVAL = 0.005


class Clock(Protocol):
    """The time source injected everywhere time matters (``clock.WithTicker`` in client-go)."""

    def now(self) -> float:
        """Monotonic seconds; only differences between two readings mean anything."""
        ...

    def since(self, t: float) -> float:
        """Seconds elapsed since ``t``, a value earlier returned by ``now()``."""
        ...

    def wall(self) -> datetime:
        """Timezone-aware UTC time, for timestamps shown to people or written to the API."""
        ...

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        """Wait ``seconds`` of this clock's time; return True if it ended early because ``stop`` was set."""
        ...

    def wait_until(self, cond: threading.Condition, deadline: float) -> bool:
        """Wait on ``cond`` (held by the caller) until notified or this clock reaches ``deadline``.

        Returns False if the deadline had passed when it returned, True otherwise (notified, or
        woken spuriously): like ``Condition.wait``, callers re-check their predicate in a loop.
        """
        ...


def _clamp_timeout(seconds: float) -> float:
    # threading refuses timeouts above TIMEOUT_MAX (OverflowError), and a limiter may hand out
    # durations of centuries (Go's InfDuration), so clamp; nobody waits that long in one call.
    return min(max(seconds, 0.0), threading.TIMEOUT_MAX)


class RealClock:
    """``time.monotonic()`` for intervals and the system clock for ``wall()``."""

    def now(self) -> float:
        return time.monotonic()

    def since(self, t: float) -> float:
        return time.monotonic() - t

    def wall(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        if stop is None:
            if seconds > 0:
                time.sleep(_clamp_timeout(seconds))
            return False
        return stop.wait(_clamp_timeout(seconds))

    def wait_until(self, cond: threading.Condition, deadline: float) -> bool:
        timeout = deadline - time.monotonic()
        if timeout <= 0:
            return False
        return cond.wait(_clamp_timeout(timeout))


@dataclass(eq=False)
class _Waiter:
    deadline: float
    cond: threading.Condition
    fired: bool = field(default=False)


class FakeClock:
    """A clock that only moves when told to, for exact tests that never sleep for real.

    Like ``k8s.io/utils/clock/testing.FakeClock``: ``step``/``set_time`` move the time and wake every
    waiter whose deadline is now at or before it, and ``has_waiters()`` tells a test that some thread
    is blocked on this clock, so the test can step only once that thread is waiting.
    """

    def __init__(self, start: float = 0.0, *, epoch: datetime = DEFAULT_FAKE_EPOCH) -> None:
        if epoch.tzinfo is None:
            raise ValueError("FakeClock epoch must be timezone-aware")
        self._lock = threading.Lock()
        self._start = start
        self._now = start
        self._epoch = epoch.astimezone(UTC)
        self._waiters: list[_Waiter] = []

    def now(self) -> float:
        return self._now

    def since(self, t: float) -> float:
        return self._now - t

    def wall(self) -> datetime:
        """The fixed epoch plus the fake seconds elapsed since construction."""
        return self._epoch + timedelta(seconds=self._now - self._start)

    def step(self, seconds: float) -> None:
        """Advance the time by ``seconds`` and wake the waiters that are now due."""
        with self._lock:
            due = self._set_locked(self._now + seconds)
        self._wake(due)

    def set_time(self, t: float) -> None:
        """Jump to ``t`` (forwards or backwards) and wake the waiters that are now due."""
        with self._lock:
            due = self._set_locked(t)
        self._wake(due)

    def has_waiters(self) -> bool:
        """True while some thread is blocked in ``sleep`` or ``wait_until`` on this clock."""
        with self._lock:
            return bool(self._waiters)

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        cond = threading.Condition(threading.Lock())
        with cond:
            waiter = self._register(self._now + seconds, cond)
            try:
                while True:
                    if stop is not None and stop.is_set():
                        return True
                    if waiter is None or waiter.fired:
                        return False
                    cond.wait(_STOP_POLL_INTERVAL if stop is not None else None)
            finally:
                self._unregister(waiter)

    def wait_until(self, cond: threading.Condition, deadline: float) -> bool:
        waiter = self._register(deadline, cond)
        if waiter is None:
            return False
        try:
            cond.wait()
        finally:
            self._unregister(waiter)
        return not waiter.fired

    def _register(self, deadline: float, cond: threading.Condition) -> _Waiter | None:
        # The caller holds ``cond``; ``_wake`` needs it to notify, so a waiter registered here cannot
        # miss its wake-up between registering and starting to wait.
        with self._lock:
            if deadline <= self._now:
                return None
            waiter = _Waiter(deadline, cond)
            self._waiters.append(waiter)
            return waiter

    def _unregister(self, waiter: _Waiter | None) -> None:
        if waiter is None:
            return
        with self._lock:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _set_locked(self, t: float) -> list[_Waiter]:
        self._now = t
        due = [w for w in self._waiters if w.deadline <= t]
        if due:
            self._waiters = [w for w in self._waiters if w.deadline > t]
            for w in due:
                w.fired = True
        return due

    @staticmethod
    def _wake(due: list[_Waiter]) -> None:
        # Outside the clock's lock: waiters take the clock's lock while holding their condition.
        for w in due:
            with w.cond:
                w.cond.notify_all()
