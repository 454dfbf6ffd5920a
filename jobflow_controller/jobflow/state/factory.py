"""`NewState`: the `State` every phase implements, and the phase → state table (state/factory.go).

As upstream's package, each phase is its own module holding its struct (the JobFlow, and here the
controller's sync, which upstream keeps in a package variable) and its `execute`; this module imports
them, and they import only the two function types (world.py), so there is no import circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from jobflow_controller.apis import Action, Phase
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.jobflow.state.failed import FailedState
from jobflow_controller.jobflow.state.pending import PendingState
from jobflow_controller.jobflow.state.running import RunningState
from jobflow_controller.jobflow.state.succeed import SucceedState
from jobflow_controller.jobflow.state.terminating import TerminatingState
from jobflow_controller.jobflow.world import JobFlowActionFn


class State(Protocol):
    """A phase of the JobFlow: `execute` runs the sync with the phase's rule, or does nothing."""

    def execute(self, action: Action) -> None: ...


_STATES: dict[str, type[PendingState | RunningState | SucceedState | TerminatingState | FailedState]] = {
    "": PendingState,
    Phase.PENDING: PendingState,
    Phase.RUNNING: RunningState,
    Phase.SUCCEED: SucceedState,
    Phase.TERMINATING: TerminatingState,
    Phase.FAILED: FailedState,
}


def new_state(job_flow: Mapping[str, Any], sync_job_flow: JobFlowActionFn) -> State | None:
    """The state for the JobFlow's phase; None for a phase outside the enum (upstream errors then)."""
    cls = _STATES.get(jf.phase(job_flow))
    return cls(job_flow, sync_job_flow) if cls else None
