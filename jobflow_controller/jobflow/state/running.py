"""Running: at least one Job ran or completed (state/running.go)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobflow_controller.apis import Action, Phase
from jobflow_controller.jobflow.world import JobFlowActionFn, PlannedStatus


def running_update_status(status: PlannedStatus, all_job_list: int) -> None:
    """Succeed once every flow's Job is Completed; Failed on any Failed or Terminated Job.

    A Job recorded Completed and since deleted (a TTL) still counts as Completed; upstream counts
    only `completedJobs`, which names the Jobs that exist, and re-runs the deleted one instead.
    A Failed or Terminated Job that a retry policy re-creates is no failure (docs/retry.md).
    """
    if len(status.all_completed_jobs()) == all_job_list:
        status.phase = Phase.SUCCEED
    elif status.failures():
        status.phase = Phase.FAILED


@dataclass(frozen=True)
class RunningState:
    job_flow: Mapping[str, Any]
    sync_job_flow: JobFlowActionFn

    def execute(self, action: Action) -> None:
        if action == Action.SYNC_JOB_FLOW:
            self.sync_job_flow(self.job_flow, running_update_status)
