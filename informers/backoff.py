"""Exponential backoff with jitter and a periodic reset (apimachinery ``wait.Backoff`` +
``DelayWithReset``), as the reflector uses between list/watch attempts.

client-go's defaults: 0.8 s, doubling, capped at 30 s, jitter factor 1.0 (each delay uniform in
``[d, 2d)``), and a reset to 0.8 s when more than 2 minutes have passed since the manager last
(re)started its sequence. Successive delays are therefore ``[0.8, 1.6)``, ``[1.6, 3.2)``, ... ,
``[25.6, 51.2)``, then ``[30, 60)`` forever (until the reset). The reset is measured from the start
of the sequence, not from the last failure, exactly as upstream.

This is written out rather than delegated to tenacity because the reflector needs the *delay
value* at arbitrary points (between attempts, on a retriable watch error) with an injected clock
and random source, which is what makes its tests exact.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass

from informers.clock import REAL_CLOCK, Clock

DEFAULT_BACKOFF_INIT = 0.8
DEFAULT_BACKOFF_MAX = 30.0
DEFAULT_BACKOFF_RESET = 120.0
DEFAULT_BACKOFF_FACTOR = 2.0
DEFAULT_BACKOFF_JITTER = 1.0


def jitter(duration: float, max_factor: float, rand: Callable[[], float] = random.random) -> float:
    """``duration + rand() * max_factor * duration`` (``wait.Jitter``); factor <= 0 means 1.0."""
    if max_factor <= 0.0:
        max_factor = 1.0
    return duration + rand() * max_factor * duration


@dataclass(slots=True)
class Backoff:
    """The mutable state of one backoff sequence (``wait.Backoff``).

    ``steps`` is how many more times the duration may grow; reaching ``cap`` ends growth.
    """

    duration: float
    factor: float = 0.0
    jitter: float = 0.0
    steps: int = 0
    cap: float = 0.0

    def step(self, rand: Callable[[], float] = random.random) -> float:
        """Return the current delay (jittered) and advance the sequence."""
        if self.steps < 1:
            if self.jitter > 0:
                return jitter(self.duration, self.jitter, rand)
            return self.duration
        self.steps -= 1
        duration = self.duration
        if self.factor != 0:
            self.duration = self.duration * self.factor
            if self.cap > 0 and self.duration > self.cap:
                self.duration = self.cap
                self.steps = 0
        if self.jitter > 0:
            duration = jitter(duration, self.jitter, rand)
        return duration


class BackoffManager:
    """Hands out the next delay of a :class:`Backoff`, restarting it every ``reset_interval``."""

    def __init__(
        self,
        initial: float = DEFAULT_BACKOFF_INIT,
        maximum: float = DEFAULT_BACKOFF_MAX,
        reset_interval: float = DEFAULT_BACKOFF_RESET,
        factor: float = DEFAULT_BACKOFF_FACTOR,
        jitter_factor: float = DEFAULT_BACKOFF_JITTER,
        *,
        clock: Clock | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        steps = math.ceil(maximum / initial) if initial > 0 else 0
        self._initial = Backoff(initial, factor, jitter_factor, steps, maximum)
        self._backoff = self._copy_initial()
        self._reset_interval = reset_interval
        self._clock = clock or REAL_CLOCK
        self._rand = rand
        self._lock = threading.Lock()
        self._last_start = self._clock.now()

    def _copy_initial(self) -> Backoff:
        b = self._initial
        return Backoff(b.duration, b.factor, b.jitter, b.steps, b.cap)

    def next_delay(self) -> float:
        """The delay before the next attempt; restarts the sequence if the reset interval passed."""
        with self._lock:
            now = self._clock.now()
            if self._reset_interval == 0:
                self._backoff = self._copy_initial()
            elif now - self._last_start > self._reset_interval:
                self._backoff = self._copy_initial()
                self._last_start = now
            return self._backoff.step(self._rand)

    def backoff(self, stop: threading.Event | None = None) -> bool:
        """Sleep the next delay on the manager's clock; True if ``stop`` interrupted it."""
        return self._clock.sleep(self.next_delay(), stop)
