"""Ours, opt-in (docs/params.md): the fan-out of a matrix flow over its Jobs, decided as pure functions.

A matrix flow has one Job per combination i (0-based, product order), `<jobflow>-<flow>-<i>`
(`apis.params`). `next_indexes` is the fan-out rule: at most `maxParallel` of the flow's Jobs
unfinished at once, new indexes in index order, none after a failure. `matrix_outcome` is the flow's
outcome from its Jobs': Failed as soon as one failed (after its retries), Completed once all completed.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from jobflow_controller.apis.rules import Outcome


class JobState(StrEnum):
    """Where one Job of a flow stands, as the planner sees it."""

    ABSENT = "Absent"  # never created (or gone, with nothing to bring it back)
    UNFINISHED = "Unfinished"  # created and not ended, or being re-created by a retry
    COMPLETED = "Completed"
    FAILED = "Failed"  # ended Failed or Terminated, no retry left


def job_state(outcome: str | None, going: bool) -> JobState:
    """One Job's state from its outcome and whether it is going (outcomes.py's reading of it)."""
    if outcome == Outcome.COMPLETED:
        return JobState.COMPLETED
    if outcome == Outcome.FAILED:
        return JobState.FAILED
    return JobState.UNFINISHED if going else JobState.ABSENT


def matrix_outcome(states: Sequence[JobState]) -> str | None:
    """Failed as soon as one Job failed; Completed once every one completed; else None (not ended)."""
    if any(s == JobState.FAILED for s in states):
        return Outcome.FAILED
    if states and all(s == JobState.COMPLETED for s in states):
        return Outcome.COMPLETED
    return None


def next_indexes(states: Sequence[JobState], max_parallel: int) -> list[int]:
    """The never-created indexes to create now, in index order: room under `max_parallel`, none after a failure."""
    if any(s == JobState.FAILED for s in states):
        return []
    room = max_parallel - sum(1 for s in states if s == JobState.UNFINISHED)
    if room <= 0:
        return []
    return [i for i, s in enumerate(states) if s == JobState.ABSENT][:room]
