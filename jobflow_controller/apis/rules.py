"""Ours, opt-in (docs/rules.md): the failure-aware fields of a JobFlow, read from its spec.

`spec.failurePolicy`, `spec.flows[].dependsOn.rule`, `spec.flows[].continueOnFailure` and
`spec.finally`. A JobFlow that sets none of them is upstream's and is planned by upstream's rule
alone; `failure_aware` is the switch. Values the admission webhook would refuse (stored while it
was off) make the JobFlow invalid in the controller too (validation/), so the planner reads only
valid values here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.jobflow import Outcome as Outcome  # the flow's outcome is the JobFlow API's
from jobflow_controller.apis.meta import Obj

#: The annotation on each finally Job: what the JobFlow's flows came to (Succeed or Failed).
OUTCOME_ANNOTATION = "flow.volcano.sh/jobflow-outcome"


class Rule(StrEnum):
    """`dependsOn.rule`: when a flow runs, over its targets' outcomes."""

    ALL_COMPLETED = "AllCompleted"
    ANY_COMPLETED = "AnyCompleted"
    ALL_FAILED = "AllFailed"
    ANY_FAILED = "AnyFailed"
    ALL_DONE = "AllDone"
    NONE_FAILED = "NoneFailed"


class FailurePolicy(StrEnum):
    FAIL_FAST = "FailFast"
    RUN_TO_COMPLETION = "RunToCompletion"


#: The rules that run a flow after a target failed: a failure such a flow waits on is handled.
HANDLING_RULES = frozenset({Rule.ANY_COMPLETED, Rule.ALL_FAILED, Rule.ANY_FAILED, Rule.ALL_DONE})


def failure_policy(job_flow: Obj) -> str:
    return str(jf.spec(job_flow).get("failurePolicy") or FailurePolicy.FAIL_FAST)


def finally_flows(job_flow: Obj) -> list[jf.Flow]:
    """`spec.finally` as flows without targets (a name and an optional patch each)."""
    raw = jf.spec(job_flow).get("finally")
    if not isinstance(raw, list):
        return []
    return [
        jf.Flow(name=str(f.get("name") or ""), targets=None, patch=f.get("patch"))
        for f in raw
        if isinstance(f, Mapping)
    ]


def failure_aware(job_flow: Obj, flows: Sequence[jf.Flow] | None = None) -> bool:
    """Whether the JobFlow sets any of the fields; without them it is planned as upstream's.

    `flows`: its `jf.flows`, when the caller has them parsed already.
    """
    spec = jf.spec(job_flow)
    if spec.get("failurePolicy") or spec.get("finally"):
        return True
    return any(f.rule is not None or f.continue_on_failure for f in (jf.flows(job_flow) if flows is None else flows))


def rule_of(flow: jf.Flow) -> str:
    return flow.rule or Rule.ALL_COMPLETED


def template_names(job_flow: Obj) -> set[str]:
    """The JobTemplates a JobFlow names: its flows' and its finally flows'."""
    return {f.name for f in jf.flows(job_flow)} | {f.name for f in finally_flows(job_flow)}
