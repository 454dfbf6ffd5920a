"""The clock the event machinery reads, as a structural Protocol.

The recorder stamps events with wall-clock time (names and ``firstTimestamp``/``lastTimestamp``),
while the correlator measures intervals (the aggregation window, the spam filter's token bucket)
on a monotonic clock so that a wall-clock jump cannot reset or freeze them. The Protocol names only
what this package reads; the default is the project's one ``workqueue.RealClock``, and tests may
pass ``workqueue.FakeClock`` or any object with these two methods.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from workqueue import RealClock

__all__ = ["Clock", "RealClock"]


@runtime_checkable
class Clock(Protocol):
    """What the recorder and the correlator read from a clock."""

    def now(self) -> float:
        """Monotonic seconds, for measuring intervals."""
        ...

    def wall(self) -> datetime:
        """The current UTC time (timezone-aware), for timestamps and event names."""
        ...
