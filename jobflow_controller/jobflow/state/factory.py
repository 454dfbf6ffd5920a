"""`NewState`: the phase → state table (state/factory.go)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from jobflow_controller.apis import Action, Phase
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.status import JobFlowStatus

#: Applies a phase's transition rule to a freshly computed status; `all_job_list` is len(spec.flows).
UpdateJobFlowStatusFn = Callable[[JobFlowStatus, int], None]
#: The controller's sync: given the JobFlow and the phase's status function.
JobFlowActionFn = Callable[[Mapping[str, Any], UpdateJobFlowStatusFn], None]


class State(Protocol):
    def execute(self, action: Action) -> None: ...


def new_state(job_flow: Mapping[str, Any], sync_job_flow: JobFlowActionFn) -> State | None:
    """The state for the JobFlow's phase; None for a phase outside the enum (upstream errors then)."""
    from jobflow_controller.jobflow.state.failed import FailedState
    from jobflow_controller.jobflow.state.pending import PendingState
    from jobflow_controller.jobflow.state.running import RunningState
    from jobflow_controller.jobflow.state.succeed import SucceedState
    from jobflow_controller.jobflow.state.terminating import TerminatingState

    phase = jf.phase(job_flow)
    states: dict[str, type[_Base]] = {
        "": PendingState,
        Phase.PENDING: PendingState,
        Phase.RUNNING: RunningState,
        Phase.SUCCEED: SucceedState,
        Phase.TERMINATING: TerminatingState,
        Phase.FAILED: FailedState,
    }
    cls = states.get(phase)
    return cls(job_flow, sync_job_flow) if cls else None


class _Base:
    def __init__(self, job_flow: Mapping[str, Any], sync_job_flow: JobFlowActionFn) -> None:
        self.job_flow = job_flow
        self.sync_job_flow = sync_job_flow

    def execute(self, action: Action) -> None:  # pragma: no cover - every state overrides it
        raise NotImplementedError
