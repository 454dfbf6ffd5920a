"""The clock the informer machinery reads time from.

Resync timers, reflector backoff and the "very short watch" check all go through an injected
:class:`Clock`, so tests can drive them with a fake clock instead of sleeping. The protocol is
structural: ``workqueue``'s clocks satisfy it without this package importing them.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic time plus an interruptible sleep."""

    def now(self) -> float:
        """Seconds on a monotonic scale (only differences are meaningful)."""
        ...

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        """Wait ``seconds``; return True early (and at once) if ``stop`` is or becomes set."""
        ...


class RealClock:
    """The wall clock: ``time.monotonic`` and ``Event.wait``."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        # threading refuses timeouts above TIMEOUT_MAX; nobody needs to wait that long in one call.
        seconds = min(max(seconds, 0.0), threading.TIMEOUT_MAX)
        if stop is None:
            if seconds > 0:
                time.sleep(seconds)
            return False
        if stop.is_set():
            return True
        return stop.wait(seconds)


REAL_CLOCK = RealClock()
