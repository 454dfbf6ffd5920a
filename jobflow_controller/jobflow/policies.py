"""`choose_policy`: the flow policy of one sync, chosen once from the spec (flow_policy.py says what a policy is).

Upstream's rule (`FlowPolicy`); the failure-aware rules (`FailureAwarePolicy`, rules_policy.py,
docs/rules.md) for a JobFlow that sets one of their fields; and, for a JobFlow that sets `params`,
`when` or `matrix` (docs/params.md), `ParamsPolicy` (params_policy.py), the failure-aware rules with
conditions and many Jobs per flow; for a JobFlow a flow of which declares `results` (docs/results.md),
`ResultsPolicy` (results_policy.py), the params policy judging a Completed Job by its results too.

The hooks handed to it are those of the extensions the JobFlow uses (`JobFlowSpec.uses`, world.py; apis/jobflow.py
`extensions`), so a JobFlow that uses none gets upstream's rule with no hook at all, and no
extension's code runs in its sync.
"""

from __future__ import annotations

from jobflow_controller.apis.jobflow import Extension
from jobflow_controller.jobflow import lifecycle, patch, retry
from jobflow_controller.jobflow.flow_policy import UPSTREAM, FlowHooks, FlowPolicy
from jobflow_controller.jobflow.params_policy import ParamsPolicy
from jobflow_controller.jobflow.results_policy import ResultsPolicy
from jobflow_controller.jobflow.rules_policy import FailureAwarePolicy
from jobflow_controller.jobflow.world import World


def hooks_for(uses: frozenset[Extension]) -> FlowHooks:
    """The hooks of the extensions in `uses`, each at its named point; none for a JobFlow that uses none."""
    if not uses:
        return UPSTREAM
    return FlowHooks(
        lifecycle=lifecycle.HOOK if Extension.LIFECYCLE in uses else None,
        attempts=retry.HOOK if Extension.ATTEMPTS in uses else None,
        patch=patch.HOOK if Extension.PATCH in uses else None,
    )


def choose_policy(world: World, *, invalid: bool = False, rerun: bool = False) -> FlowPolicy:
    """The policy the spec asks for; a JobFlow that sets none of the new fields gets upstream's, and so
    does one whose spec can never run (`invalid`: only its status is kept, action.sync_job_flow_status).

    A re-run's sync (`rerun`, rerun.py) of a JobFlow under upstream's rule gets the failure-aware one
    instead: it evaluates the flows' outcomes (which upstream's rule does not), once, for the re-run to
    pick the Failed flows from; the re-run plans nothing else with it.
    """
    hooks = hooks_for(world.spec.uses)
    if invalid:
        return FlowPolicy(world, hooks)
    if world.spec.results is not None:
        return ResultsPolicy(world, hooks)
    if world.spec.params is not None:
        return ParamsPolicy(world, hooks)
    if world.spec.failure_aware or rerun:
        return FailureAwarePolicy(world, hooks)
    return FlowPolicy(world, hooks)
