"""Succeed: still synced (that is where `jobRetainPolicy: delete` deletes), phase unchanged."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobflow_controller.apis import Action
from jobflow_controller.jobflow.world import JobFlowActionFn, PlannedStatus


def succeed_update_status(status: PlannedStatus, all_job_list: int) -> None:
    """Upstream passes a no-op: a Succeeded flow never changes phase again."""


@dataclass(frozen=True)
class SucceedState:
    job_flow: Mapping[str, Any]
    sync_job_flow: JobFlowActionFn

    def execute(self, action: Action) -> None:
        if action == Action.SYNC_JOB_FLOW:
            self.sync_job_flow(self.job_flow, succeed_update_status)
