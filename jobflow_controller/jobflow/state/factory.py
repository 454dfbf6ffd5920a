"""`NewState`: the phase → state table (state/factory.go)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis import Phase
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.jobflow.state.base import JobFlowActionFn, State
from jobflow_controller.jobflow.state.failed import FailedState
from jobflow_controller.jobflow.state.pending import PendingState
from jobflow_controller.jobflow.state.running import RunningState
from jobflow_controller.jobflow.state.succeed import SucceedState
from jobflow_controller.jobflow.state.terminating import TerminatingState

_STATES: dict[str, type[State]] = {
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
