"""The clock the event machinery reads, as a structural Protocol.

The recorder stamps events with wall-clock time (names and ``firstTimestamp``/``lastTimestamp``),
while the correlator measures intervals (the aggregation window, the spam filter's token bucket)
on a monotonic clock so that a wall-clock jump cannot reset or freeze them. Defining only what
this package needs, instead of importing the project's ``workqueue`` clocks, keeps ``record``
independent of that package's timing; ``workqueue.RealClock``/``FakeClock`` satisfy it
structurally.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

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


class RealClock:
    """The system clocks: ``time.monotonic`` and ``datetime.now(UTC)``."""

    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> datetime:
        return datetime.now(UTC)
