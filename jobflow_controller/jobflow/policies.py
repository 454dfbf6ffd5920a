"""`choose_policy`: the flow policy of one sync, chosen once from the spec (flow_policy.py says what a policy is).

Upstream's rule (`FlowPolicy`); the failure-aware rules (`FailureAwarePolicy`, rules_policy.py,
docs/rules.md) for a JobFlow that sets one of their fields; and, for a JobFlow that sets `params`,
`when` or `matrix` (docs/params.md), `ParamsPolicy` (params_policy.py), the failure-aware rules with
conditions and many Jobs per flow; for a JobFlow a flow of which declares `results` (docs/results.md),
`ResultsPolicy` (results_policy.py), the params policy judging a Completed Job by its results too.
"""

from __future__ import annotations

from jobflow_controller.jobflow import lifecycle, retry
from jobflow_controller.jobflow.flow_policy import FlowHooks, FlowPolicy
from jobflow_controller.jobflow.params_policy import ParamsPolicy
from jobflow_controller.jobflow.plan import World
from jobflow_controller.jobflow.results_policy import ResultsPolicy
from jobflow_controller.jobflow.rules_policy import FailureAwarePolicy

#: Every JobFlow's extensions at the policy's named points: the lifecycle (suspend, the status's stamps)
#: and the attempts (retries, re-runs). Each answers as upstream for a JobFlow that sets none of its fields.
HOOKS = FlowHooks(lifecycle=lifecycle.HOOK, attempts=retry.HOOK)


def choose_policy(world: World, *, invalid: bool = False) -> FlowPolicy:
    """The policy the spec asks for; a JobFlow that sets none of the new fields gets upstream's, and so
    does one whose spec can never run (`invalid`: only its status is kept, action.sync_job_flow_status)."""
    if invalid:
        return FlowPolicy(world, HOOKS)
    if world.spec.results is not None:
        return ResultsPolicy(world, HOOKS)
    if world.spec.params is not None:
        return ParamsPolicy(world, HOOKS)
    return FailureAwarePolicy(world, HOOKS) if world.spec.failure_aware else FlowPolicy(world, HOOKS)
