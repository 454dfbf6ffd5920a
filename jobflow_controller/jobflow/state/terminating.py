"""Terminating: declared by the API, never set by upstream; a no-op (state/terminating.go)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobflow_controller.apis import Action
from jobflow_controller.jobflow.world import JobFlowActionFn


@dataclass(frozen=True)
class TerminatingState:
    job_flow: Mapping[str, Any]
    sync_job_flow: JobFlowActionFn

    def execute(self, action: Action) -> None:
        """Nothing: upstream syncs nothing in this phase."""
