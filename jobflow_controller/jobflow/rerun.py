"""Ours, opt-in (docs/lifecycle.md): re-run a JobFlow from its failure, once per request.

`kubectl jobflow retry NAME [--flow F]...` (or plain kubectl) sets the annotation
`flow.volcano.sh/retry-request` to `{"id": ..., "flows": [...]}`. For a request whose id the
status has not recorded, this plans one status write, in any phase (Failed included, which
otherwise syncs nothing): the named flows (by default every Failed and Skipped one), every flow
downstream of them and the finally flows get a `Rerun` history entry (so they are created again,
as a retry re-creates a Job, and their restartCount rises), the JobFlow goes back to Running, and
the request's id is recorded. Their Jobs are deleted once that status is written; the Completed
flows upstream are kept. The next syncs run them as any flow.
"""

from __future__ import annotations

from jobflow_controller.apis import Phase, meta
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.lifecycle import RetryRequest
from jobflow_controller.apis.meta import format_time
from jobflow_controller.apis.retry import RERUN
from jobflow_controller.apis.rules import Outcome
from jobflow_controller.jobflow import action, retry
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.flow_policy import FlowPolicy
from jobflow_controller.jobflow.policies import choose_policy
from jobflow_controller.jobflow.status_writer import fit_status
from jobflow_controller.jobflow.world import Notice, SyncPlan, World


def chosen_flows(world: World, request: RetryRequest, policy: FlowPolicy | None = None) -> list[str]:
    """The flows to re-run, in spec order: those named (or Failed and Skipped) and all downstream.

    What the flows came to is the sync's one policy's (`flow_outcomes`: the re-run's sync evaluates
    them once, policies.py `choose_policy(rerun=True)`), never evaluated again here.
    """
    names = [f.name for f in world.spec.flows]
    if request.flows:
        picked = {n for n in request.flows if n in names}
    else:
        found = (policy or choose_policy(world, rerun=True)).flow_outcomes()
        picked = {n for n, o in found.items() if o in (Outcome.FAILED, Outcome.SKIPPED)}
    grew = True
    while grew:
        grew = False
        for flow in world.spec.flows:
            if flow.name not in picked and any(t in picked for t in flow.targets or ()):
                picked.add(flow.name)
                grew = True
    return [n for n in names if n in picked]


def plan_rerun(world: World, request: RetryRequest, policy: FlowPolicy | None = None) -> SyncPlan:
    """The status that records the re-run, and the Jobs to delete after it is written."""
    policy = policy or choose_policy(world, rerun=True)
    flows = chosen_flows(world, request, policy)
    status = action.get_all_job_status(world, policy)
    status.retry_request = request.id
    if not flows:
        return fit_status(
            SyncPlan(status=status, notices=[Notice(c.REASON_RETRIED, c.MESSAGE_RETRIED_NOTHING)]), world.job_flow
        )
    by_name = {f.name: f for f in world.spec.flows}
    job_names = {world.job_name(n) for n in flows}  # a Skipped flow is listed under this name
    job_names.update(n for name in flows for n in policy.rerun_jobs(by_name[name]))
    job_names.update(world.job_name(f.name) for f in world.spec.finally_flows)
    now = format_time(world.now)
    for entry in status.job_status_list:
        if entry.name not in job_names or retry.awaiting_recreate(entry):
            continue
        retry.open_history(entry, RERUN, now)
        entry.restart_count += 1
    existing = {meta.name(j) for j in world.jobs} & job_names
    status.retrying_jobs = sorted(existing)
    status.skipped_jobs = [n for n in jf.skipped_jobs(world.job_flow) if n not in job_names]
    status.phase = Phase.RUNNING
    status.finished_at = None
    plan = SyncPlan(status=status, notices=[Notice(c.REASON_RETRIED, c.MESSAGE_RETRIED, (", ".join(flows),))])
    plan.write_at_once = True
    plan.retry_deletes = retry.jobs_to_delete(world, status.retrying_jobs)
    return fit_status(plan, world.job_flow)
