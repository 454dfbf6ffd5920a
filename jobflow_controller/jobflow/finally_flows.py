"""Ours, opt-in (docs/rules.md): the `spec.finally` Jobs, created together once nothing else can run.

Each is `<jobflow>-<name>` from the JobTemplate `name` (with its `patch`, as a flow's), annotated
`flow.volcano.sh/jobflow-outcome` with what the flows came to, so that a notifier knows. Called by
`deploy_job` when the outcomes say the flows are settled; the Job is built by the same function as
a flow's (`build`, action.py's `load_job_template_and_set_job`), handed in to keep one direction.
"""

from __future__ import annotations

from jobflow_controller.apis import meta
from jobflow_controller.apis.rules import OUTCOME_ANNOTATION
from jobflow_controller.jobflow.outcomes import Outcomes
from jobflow_controller.jobflow.world import Build, Deploy, FlowJob, JobCreate, WarningEvent, World, resource_exists


def finally_creates(
    world: World, found: Outcomes, room: int, out: Deploy, build: Build
) -> list[JobCreate | WarningEvent]:
    """The finally Jobs not made yet, at most `room` of them (`out.more` when some are left)."""
    steps: list[JobCreate | WarningEvent] = []
    for flow in world.spec.finally_flows:
        job_name = world.job_name(flow.name)
        if job_name in world.completed or flow.name in found.finally_of or job_name in world.expected:
            continue
        existing = world.named_jobs.get(job_name)
        if existing is not None:
            if not meta.is_controlled_by(existing, world.job_flow):
                steps.append(resource_exists(job_name))
            continue
        if room <= 0:
            out.more = True
            break
        room -= 1
        steps.append(build(world, FlowJob(flow, job_name, annotations=((OUTCOME_ANNOTATION, str(found.verdict)),))))
    return steps
