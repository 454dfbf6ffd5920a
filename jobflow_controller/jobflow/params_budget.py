"""Ours (docs/params.md, apis/expansion.py): the expansion budgets, at their two points of the sync.

- `when_over_budget`, when the params policy is built: the flows whose `when` inputs would expand
  past a string's budget; `jobs_over_budget`, the first time a sync has a Job to create: those whose
  Jobs, added up in spec order with the flows before them, would take the JobFlow's Jobs past its
  budget (a sync with nothing to create, most of them, never scans a template). Measured from the
  templates and patches (never built), every matrix index counted; a flow whose template is missing
  is left to upstream's rule.
- `expanded_job`, where a Job is built (action.py's `load_job_template_and_set_job`): the exact
  string and Job budgets on the built body, then the expansion, then Kubernetes' annotations total.

Either way the flow gets a Warning `InvalidParams` naming it, and no Job.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from jobflow_controller.apis import expansion
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.expansion import JobReferences
from jobflow_controller.apis.params import ParamsSpec
from jobflow_controller.apis.substitution import expand_job
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.world import FlowJob, WarningEvent, World

#: A flow's variables for its Job of one matrix index (None: the flow's one Job): ParamsPolicy's.
Variables = Callable[[str, int | None], Mapping[str, str]]


def when_over_budget(world: World, params: ParamsSpec, when_variables: Variables) -> dict[str, str]:
    """{flow name: the budget it exceeds} for the flows whose `when` inputs must not be expanded."""
    out: dict[str, str] = {}
    for flow in (*world.spec.flows, *world.spec.finally_flows):
        expressions = params.when.get(flow.name)
        if expressions and flow.name not in out:
            problem = expansion.when_problem(tuple(e.input for e in expressions), when_variables(flow.name, None))
            if problem is not None:
                out[flow.name] = problem
    return out


def jobs_over_budget(world: World, params: ParamsSpec, variables: Variables, skip: Collection[str]) -> dict[str, str]:
    """{flow name: the JobFlow's budget} for the flows whose Jobs, added up in spec order with the flows'
    before them, would take the JobFlow past it (flows in `skip`, already refused, are not counted).
    Scans the templates: asked only by a sync that has a Job to create."""
    out: dict[str, str] = {}
    total = 0
    for flow in (*world.spec.flows, *world.spec.finally_flows):
        template = world.templates.get(flow.name)
        if template is None or flow.name in skip or flow.name in out:
            continue
        refs = JobReferences.of(jf.spec(template), flow.patch)
        if not refs.strings:
            continue
        matrix = params.matrices.get(flow.name)
        indexes: list[int | None] = [None] if matrix is None else list(range(0 if matrix.oversized else matrix.size))
        total += sum(max(0, refs.growth(variables(flow.name, i)).added) for i in indexes)
        problem = expansion.job_flow_problem(total)
        if problem is not None:
            out[flow.name] = problem
    return out


def expanded_job(job: dict[str, Any], made: FlowJob) -> dict[str, Any] | WarningEvent:
    """`job` (new_job's body) expanded with `made.variables`, or the `InvalidParams` WarningEvent when
    the expansion would exceed a string's or the Job's budget (measured before it is built)."""
    assert made.variables is not None
    metadata = job["metadata"]
    refs = JobReferences.of(job.get("spec"), metadata.get("labels"), metadata.get("annotations"))
    problem = expansion.job_problem(refs.growth(made.variables))
    return invalid_params(made, problem) if problem is not None else expand_job(job, made.variables)


def annotations_over(job: Mapping[str, Any], made: FlowJob) -> WarningEvent | None:
    """The `InvalidParams` WarningEvent for a built Job whose annotations are over Kubernetes' total."""
    problem = expansion.annotations_problem(job["metadata"]["annotations"])
    return invalid_params(made, problem) if problem is not None else None


def invalid_params(made: FlowJob, problem: str) -> WarningEvent:
    """One WarningEvent naming the Job, the flow and the budget; the correlator dedups repeats."""
    return WarningEvent(c.REASON_INVALID_PARAMS, c.MESSAGE_INVALID_PARAMS, (made.job_name, made.flow.name, problem))
