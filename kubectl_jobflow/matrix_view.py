"""A matrix flow (docs/params.md) in `kubectl jobflow`: one node for its Jobs `<jobflow>-<flow>-<i>`.

The node's phase is what the Jobs came to together (Failed as soon as one failed, Completed once all
completed, Running while one is going, else what a flow without a Job shows: Waiting or NotCreated),
its counts say how many Jobs are in each phase, its duration is the longest Job's and its restarts
the Jobs' sum. `view.py` keeps the Jobs' own rows with the node, for a view that opens it (the web view).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

#: The order the counts are listed in (any other phase after these, by name).
COUNT_ORDER = ("Completed", "Running", "Pending", "Failed", "Terminated", "Waiting", "NotCreated")
_FAILED = frozenset({"Failed", "Terminated"})


class JobRow(Protocol):
    """What the node reads of each Job's row (`view.FlowRow`)."""

    @property
    def phase(self) -> str: ...

    @property
    def duration(self) -> float | None: ...

    @property
    def restarts(self) -> int | None: ...


@dataclass(frozen=True)
class MatrixSummary:
    phase: str
    duration: float | None
    restarts: int | None
    counts: tuple[tuple[str, int], ...]


def summarize(rows: Sequence[JobRow], idle: frozenset[str]) -> MatrixSummary:
    """The node from its Jobs' rows; `idle`: the phases of a Job not created (Waiting, NotCreated)."""
    phases = [r.phase for r in rows]
    counts = Counter(phases)
    ordered = sorted(counts, key=lambda p: (COUNT_ORDER.index(p) if p in COUNT_ORDER else len(COUNT_ORDER), p))
    started = [r for r in rows if r.duration is not None]
    if any(p in _FAILED for p in phases):
        phase = "Failed"
    elif phases and all(p == "Completed" for p in phases):
        phase = "Completed"
    elif all(p in idle for p in phases):
        phase = phases[0] if phases else "Waiting"
    else:
        phase = "Running"
    return MatrixSummary(
        phase,
        max((r.duration or 0.0 for r in started), default=None) if started else None,
        sum(r.restarts or 0 for r in rows) if started else None,
        tuple((p, counts[p]) for p in ordered),
    )


def counts_note(total: int, counts: Sequence[tuple[str, int]]) -> str:
    """`6 Jobs: 4 Completed, 2 Running`."""
    listed = ", ".join(f"{n} {p}" for p, n in counts)
    return f"{total} Job{'s' if total != 1 else ''}: {listed}"
