"""`choose_policy`: the flow policy of one sync, chosen once from the spec (flow_policy.py says what a policy is).

Upstream's rule (`FlowPolicy`); the failure-aware rules (`FailureAwarePolicy`, rules_policy.py,
docs/rules.md) for a JobFlow that sets one of their fields; and, for a JobFlow that sets `params`,
`when` or `matrix` (docs/params.md), `ParamsPolicy` (params_policy.py), the failure-aware rules with
conditions and many Jobs per flow; for a JobFlow a flow of which declares `results` (docs/results.md),
`ResultsPolicy` (results_policy.py), the params policy judging a Completed Job by its results too.
"""

from __future__ import annotations

from jobflow_controller.jobflow.flow_policy import FlowPolicy
from jobflow_controller.jobflow.params_policy import ParamsPolicy
from jobflow_controller.jobflow.plan import World
from jobflow_controller.jobflow.results_policy import ResultsPolicy
from jobflow_controller.jobflow.rules_policy import FailureAwarePolicy


def choose_policy(world: World, *, invalid: bool = False) -> FlowPolicy:
    """The policy the spec asks for; a JobFlow that sets none of the new fields gets upstream's, and so
    does one whose spec can never run (`invalid`: only its status is kept, action.sync_job_flow_status)."""
    if invalid:
        return FlowPolicy(world)
    if world.spec.results is not None:
        return ResultsPolicy(world)
    if world.spec.params is not None:
        return ParamsPolicy(world)
    return FailureAwarePolicy(world) if world.spec.failure_aware else FlowPolicy(world)
