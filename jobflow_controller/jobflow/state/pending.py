"""Pending (and the empty phase): the flow has started, nothing has run yet (state/pending.go)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobflow_controller.apis import Action, Phase
from jobflow_controller.jobflow.world import JobFlowActionFn, PlannedStatus


def pending_update_status(status: PlannedStatus, all_job_list: int) -> None:
    """Upstream's Pending rule, plus Pending → Succeed when every Job is already Completed.

    Upstream only decides Succeed in the Running state, so a flow whose last Completed update is
    consumed while it is still Pending moves to Running and then waits for an event that never
    comes (volcano-jobflow.md §2.18 #3). Checking completion first closes that stall; an empty
    `flows` list (0 == 0) keeps upstream's Pending, hence `all_job_list > 0`.

    A Job recorded Completed and since deleted counts as Completed (`all_completed_jobs`). A Job a
    retry policy re-creates is no failure (`failures`, docs/retry.md).
    """
    completed = status.all_completed_jobs()
    if all_job_list > 0 and len(completed) == all_job_list:
        status.phase = Phase.SUCCEED
    elif (status.running_jobs or completed) and not set(status.failed_jobs) - set(status.retrying_jobs):
        status.phase = Phase.RUNNING
    elif status.failures():
        status.phase = Phase.FAILED
    else:
        status.phase = Phase.PENDING


@dataclass(frozen=True)
class PendingState:
    job_flow: Mapping[str, Any]
    sync_job_flow: JobFlowActionFn

    def execute(self, action: Action) -> None:
        if action == Action.SYNC_JOB_FLOW:
            self.sync_job_flow(self.job_flow, pending_update_status)
