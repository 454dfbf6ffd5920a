"""The work-queue key shared by both controllers (pkg/controllers/apis/request.go)."""

from __future__ import annotations

from dataclasses import dataclass

from jobflow_controller.apis.constants import Action, Event


@dataclass(frozen=True)
class FlowRequest:
    """A hashable, immutable request: equal requests collapse to one queue item, as in Go."""

    namespace: str
    job_flow_name: str = ""
    job_template_name: str = ""
    action: Action = Action.NONE
    event: Event = Event.NONE

    def __str__(self) -> str:
        # Upstream's String(): the template, then "<jobflow>/<namespace>" (sic, in that order).
        return f"JobTemplate: {self.job_template_name}, JobFlow: {self.job_flow_name}/{self.namespace}"
