"""Failed: terminal. Upstream neither syncs nor refreshes the status any more (state/failed.go)."""

from __future__ import annotations

from jobflow_controller.jobflow.state.base import State


class FailedState(State):
    """`execute` does nothing (State's)."""
