"""What every phase module shares: the `State` each one implements, and the two function types.

Its own module so that the phase modules and the phase table (`factory.py`) import it and never
each other: upstream's `state` package has no import circle either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jobflow_controller.apis import Action
from jobflow_controller.jobflow.plan import PlannedStatus

#: Applies a phase's transition rule to a freshly computed status; `all_job_list` is len(spec.flows).
UpdateJobFlowStatusFn = Callable[[PlannedStatus, int], None]
#: The controller's sync: given the JobFlow and the phase's status function.
JobFlowActionFn = Callable[[Mapping[str, Any], UpdateJobFlowStatusFn], None]


class State:
    """A phase of the JobFlow: `execute` runs the sync with the phase's rule, or does nothing."""

    def __init__(self, job_flow: Mapping[str, Any], sync_job_flow: JobFlowActionFn) -> None:
        self.job_flow = job_flow
        self.sync_job_flow = sync_job_flow

    def execute(self, action: Action) -> None:
        """The terminal phases (Failed, Terminating) keep this: upstream syncs nothing there."""
        return None
