"""Ours, opt-in (docs/rules.md): the flow policy of a JobFlow that sets a failure-aware field.

The flows' outcomes (outcomes.py) answer the policy's questions: a flow has ended when it has an
outcome (Completed, Failed or Skipped); it is due when its rule is met and the flows are not halted
(a probe flow under `AllCompleted` is judged as upstream's flow is, its probe's verdict in); the
finally flows are created once nothing else can run; the phase is the outcomes' (in the phases
whose state has a rule: a Succeeded JobFlow keeps its phase, as upstream's no-op rule keeps it).
A shutdown or a passed deadline (lifecycle.py) halts the flows whatever the failure policy.
"""

from __future__ import annotations

from collections.abc import Mapping

from jobflow_controller.apis import UNFINISHED_PHASES
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.rules import Rule, rule_of
from jobflow_controller.jobflow import lifecycle, outcomes
from jobflow_controller.jobflow.finally_flows import finally_creates
from jobflow_controller.jobflow.flow_policy import UPSTREAM, FlowHooks, FlowPolicy
from jobflow_controller.jobflow.world import (
    Build,
    Deploy,
    JobCreate,
    Judge,
    PlannedStatus,
    SyncPlan,
    UpdateJobFlowStatusFn,
    WarningEvent,
    World,
)


class FailureAwarePolicy(FlowPolicy):
    """Due by each flow's rule over its targets' outcomes; the phase from the outcomes."""

    def __init__(self, world: World, hooks: FlowHooks = UPSTREAM) -> None:
        super().__init__(world, hooks)
        self.found = outcomes.evaluate(world, lifecycle.halt_reason(world), self.shape())

    def ended(self, flow: jf.Flow) -> str | None:
        return self.found.of.get(flow.name)

    def flow_outcomes(self) -> Mapping[str, str]:
        """The outcomes evaluated once for this sync (`found`)."""
        return self.found.of

    def is_due(self, flow: jf.Flow, out: Deploy, judge: Judge) -> bool:
        if flow.probe is not None and rule_of(flow) == Rule.ALL_COMPLETED:
            due = super().is_due(flow, out, judge)
            return due and not self.found.halted and flow.name not in self.found.of
        return self.found.is_due(flow.name)

    def closing(self, room: int, out: Deploy, build: Build) -> list[JobCreate | WarningEvent]:
        """The finally flows, once the others are settled (not after Terminate or a passed deadline)."""
        found = self.found
        if not found.settled or not found.finally_allowed or out.more:
            return []
        return finally_creates(self.world, found, room, out, build)

    def decide_phase(self, status: PlannedStatus, update_state_fn: UpdateJobFlowStatusFn, total: int) -> None:
        if jf.phase(self.world.job_flow) in UNFINISHED_PHASES:
            status.phase = outcomes.rules_phase(self.world, self.found, bool(status.running_jobs))
        else:
            update_state_fn(status, total)

    def record_outcomes(self, status: PlannedStatus, plan: SyncPlan) -> None:
        """`skippedJobs`, and a `Skipped` event for each flow newly Skipped."""
        status.skipped_jobs = [self.world.job_name(n) for n in self.found.skipped]
        plan.notices = outcomes.skip_notices(self.world, self.found)

    @property
    def stop(self) -> str | None:
        return self.found.stop

    @property
    def halted(self) -> bool:
        return self.found.halted
