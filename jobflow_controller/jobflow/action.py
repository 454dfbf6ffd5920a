"""The sync's decisions, in upstream's order and names (jobflow_controller_action.go), as pure functions.

`sync_job_flow` takes what one sync sees (`World`, world.py) and the phase's status rule and returns
what to do (`SyncPlan`): (1) a Succeeded flow with `jobRetainPolicy: delete` deletes its Jobs and
stops there (`delete_all_jobs_created_by_job_flow`); (2) `deploy_job` creates each flow's Job that
is due (upstream: its targets are all Completed, `judge`); (3) `get_all_job_status` computes the
status from the Jobs the JobFlow controls, with `get_running_histories`; (4) the phase's rule is
applied; (5) the status is written. No I/O and no clock here: sync.py reads the world and carries
the plan out, in order.

What a flow *is* (its Jobs, whether it is due, whether it ended, the JobFlow's phase) is the flow
policy's (flow_policy.py), chosen once per sync; upstream's functions ask it and test no feature.
The other extensions plug into that policy at its named points (flow_policy.py `FlowHooks`): retry.py
(around the phase rule, and a Job's attempt), lifecycle.py (once the phase is known), patch.py (a
flow's patch); upstream's functions here call none of them. Each row of docs/deviations.md names the
function that implements it.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from functools import partial
from typing import Any

from informers.errors import NotFoundError
from jobflow_controller.apis import FLOW_GROUP, JobPhase, Phase, RetainPolicy, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.builders import new_job
from jobflow_controller.apis.meta import add_duration, format_time, parse_time
from jobflow_controller.apis.retry import RECREATING
from jobflow_controller.apis.status import Condition, JobRunningHistory, JobStatus, JobStatusIndex
from jobflow_controller.jobflow.flow_policy import FlowPolicy
from jobflow_controller.jobflow.policies import choose_policy
from jobflow_controller.jobflow.world import (
    Deploy,
    FlowJob,
    JobCreate,
    PlannedStatus,
    SyncPlan,
    UpdateJobFlowStatusFn,
    WarningEvent,
    World,
)

Obj = Mapping[str, Any]

#: Phases with a status list of their own; any other phase ("" included) is an unKnowJob.
#: Completing and Terminating have a bucket but no exported list, so they show in none (as upstream).
_BUCKETS = (
    JobPhase.PENDING,
    JobPhase.RUNNING,
    JobPhase.COMPLETING,
    JobPhase.COMPLETED,
    JobPhase.TERMINATING,
    JobPhase.TERMINATED,
    JobPhase.FAILED,
)

#: The most Jobs one sync creates (ours): a 500-flow JobFlow whose layer of 100 comes due would
#: otherwise hold a worker for 100 creates (seconds at the default client QPS) while every other
#: JobFlow waits; it creates them 25 at a time, going back in the queue between.
MAX_CREATES_PER_SYNC = 25

#: How many recent `runningHistories` entries a Job keeps besides its first and its `Retrying` ones.
MAX_RUNNING_HISTORIES = 8


def sync_job_flow(world: World, update_state_fn: UpdateJobFlowStatusFn, policy: FlowPolicy | None = None) -> SyncPlan:
    """Upstream's `syncJobFlow`, decided: what to delete, create and write for this JobFlow.

    The flow policy is the one chosen for the sync (sync.py, before the probe checks; policies.py);
    between upstream's steps, its two named points (`before_phase`, `after_phase`) are where the
    extensions the JobFlow uses act (retries, lifecycle): none, for a JobFlow that uses none.
    """
    phase = jf.phase(world.job_flow)
    if world.spec.retain_policy == RetainPolicy.DELETE and phase == Phase.SUCCEED:
        return SyncPlan(retain_deletes=delete_all_jobs_created_by_job_flow(world))
    policy = policy or choose_policy(world)
    plan = SyncPlan(deploy=deploy_job(world, policy))  # upstream's deployJob
    status = get_all_job_status(world, policy)  # upstream's getAllJobStatus
    policy.before_phase(status, plan)
    policy.decide_phase(status, update_state_fn, len(world.spec.flows))  # upstream's updateStateFn
    policy.after_phase(status, plan)
    plan.status = status
    return plan


def sync_job_flow_status(
    world: World, update_state_fn: UpdateJobFlowStatusFn, policy: FlowPolicy | None = None
) -> SyncPlan:
    """The status alone, for a JobFlow whose spec can never run (ours: `InvalidJobFlow`).

    Upstream syncs such a JobFlow like any other and writes its status (Pending, with no Job ever
    created); so do we, from the Jobs it has, by upstream's rule, and create, delete and retry nothing.
    """
    status = get_all_job_status(world, policy or choose_policy(world, invalid=True))
    status.skipped_jobs = jf.skipped_jobs(world.job_flow)
    update_state_fn(status, len(world.spec.flows))
    return SyncPlan(status=status)


# -- step 2: create the Jobs that are due ---------------------------------------------------------
def deploy_job(world: World, policy: FlowPolicy) -> Deploy:
    """Create, in spec order, each missing Job whose flow is due (upstream: all its targets Completed).

    Existing Jobs are never touched, whatever their phase. Upstream re-creates any missing Job, in
    Succeed too; ours: a finished JobFlow creates nothing, and a Job the status records as
    Completed (or seen deleted while Completed) is done for good (observe.py `DeletedJobs`). A Job deleted
    before it completed is re-created, as upstream. A JobFlow being deleted creates nothing either:
    the garbage collector deleting its Jobs would otherwise have them re-created. The policy says
    which Jobs are unmade, which are due, and what comes once nothing else can run.
    """
    out = Deploy()
    if not policy.may_create():
        return out
    creates = 0
    for made in policy.unmade(out):
        if creates == MAX_CREATES_PER_SYNC:
            out.more = True  # the rest in the next sync, queued at once behind what waits already
            break
        if policy.is_due(made.flow, out, judge):
            creates += 1
            out.steps.append(load_job_template_and_set_job(world, made, policy))
        else:
            warning = policy.waiting(made.flow)
            if warning is not None:
                out.steps.append(warning)
    out.steps.extend(
        policy.closing(MAX_CREATES_PER_SYNC - creates, out, partial(load_job_template_and_set_job, policy=policy))
    )
    return out


def flows_to_judge(world: World, policy: FlowPolicy) -> list[jf.Flow]:
    """The flows whose targets `deploy_job` judges in this world, by the sync's policy (their probes are
    checked first)."""
    if not policy.may_create():
        return []
    flows: dict[str, jf.Flow] = {}
    for made in policy.unmade(Deploy()):
        if made.flow.targets is not None:
            flows.setdefault(made.flow.name, made.flow)
    return list(flows.values())


def judge(
    world: World, flow: jf.Flow, done: AbstractSet[str], missing: list[str], passed: AbstractSet[str] = frozenset()
) -> bool:
    """True only if every target's Job is ours and Completed (Completing is not enough).

    A Job of the target's name that this JobFlow does not control never satisfies a dependency. A
    target whose Job is gone (or only a squatter holds its name) satisfies it if the Job ran to
    completion (`done`): upstream would run it again first. A missing target is named in `missing`.
    `passed` (empty under upstream's rule) names the targets whose Job counts as Completed already
    (an extension's verdict: a probe flow's, probes/gate.py).
    """
    for target in flow.targets or ():
        target_job_name = world.job_name(target)
        job = world.named_jobs.get(target_job_name)
        if job is None:
            if target_job_name in done:
                continue
            missing.append(target_job_name)
            return False
        if meta.is_controlled_by(job, world.job_flow):
            if vcjob.phase(job) != JobPhase.COMPLETED and target not in passed:
                return False
        elif target_job_name not in done:
            return False
    return True


def load_job_template_and_set_job(
    world: World, made: FlowJob, policy: FlowPolicy | None = None
) -> JobCreate | WarningEvent:
    """The Job to create for `made`; its template missing is the create's error, as upstream's lister says.

    What the extensions change in the Job (or why they refuse it: a WarningEvent, which is no error of
    the sync: retrying cannot help until the JobFlow or the template changes, and each of those
    enqueues the JobFlow) is the policy's (`refused`, `finish_job`; nothing under upstream's rule).
    """
    flow, job_name = made.flow, made.job_name
    template = world.templates.get(flow.name)
    if template is None:
        error = NotFoundError.for_resource(FLOW_GROUP, "jobtemplate", flow.name)
        return JobCreate(flow.name, job_name, None, error=error, fresh_read=made.fresh_read)
    policy = policy or choose_policy(world)
    refused = policy.refused(made)
    if refused is not None:
        return refused
    job = new_job(world.job_flow, flow.name, job_name, template)
    finished = policy.finish_job(made, job)
    if isinstance(finished, WarningEvent):
        return finished
    return JobCreate(flow.name, job_name, finished, fresh_read=made.fresh_read)


# -- step 3: the status -----------------------------------------------------------------------------
def get_all_job_status(world: World, policy: FlowPolicy) -> PlannedStatus:
    """Upstream's status from the Jobs that exist, plus what tells a deleted Completed Job apart.

    The six lists and `conditions` name the Jobs that exist, as upstream's. `jobStatusList` keeps
    an entry for a Job that is gone (upstream never prunes it); an entry whose state is Completed
    is the record that the Job ran, so it is never created again. A Job seen deleted while
    Completed before any status recorded it gets that entry now, from its last state.
    `deleted_completed_jobs` (not written) lets the phase rules count those Jobs as Completed; a
    Job its next attempt supersedes (the policy says) keeps its entry as that attempt's record.
    """
    buckets: dict[str, list[str]] = {phase: [] for phase in _BUCKETS}
    status = policy.new_status()
    entries = JobStatusIndex([JobStatus.from_dict(e) for e in jf.job_status_list(world.job_flow)])
    now = format_time(world.now)
    for job in world.jobs:
        name, phase = meta.name(job), vcjob.phase(job)
        if phase in buckets:
            buckets[phase].append(name)
        else:
            status.un_know_jobs.append(name)
        status.conditions[name] = Condition(
            phase=phase,
            create_timestamp=meta.creation_timestamp(job),
            running_duration=vcjob.running_duration(job),
            task_status_count=dict(vcjob.task_status_count(job) or {}) or None,
        )
        if policy.superseded(job, entries.first(name)):
            status.retrying_jobs.append(name)
            continue
        entries.merge(_job_status_entry(job, entries.named(name), now))
    existing = {meta.name(j) for j in world.jobs}
    for name, last in world.deleted_completed.items():
        if name not in existing and name not in world.recorded_completed and name in world.completed:
            entries.merge(_job_status_entry(last, entries.named(name), now))
    done = world.completed
    listed: set[str] = set()
    for flow in world.spec.flows:
        for name in policy.jobs(flow):
            if name in done and name not in existing and name not in listed:
                listed.add(name)
                status.deleted_completed_jobs.append(name)
    status.pending_jobs = buckets[JobPhase.PENDING]
    status.running_jobs = buckets[JobPhase.RUNNING]
    status.failed_jobs = buckets[JobPhase.FAILED]
    status.completed_jobs = buckets[JobPhase.COMPLETED]
    status.terminated_jobs = buckets[JobPhase.TERMINATED]
    status.job_status_list = entries.entries
    return status


def get_running_histories(
    job_status_list: list[JobStatus], job_name: str, phase: str, now: str
) -> list[JobRunningHistory]:
    """Open a history entry on the first sight of a phase and close the previous one (end = now).

    Works on copies: the entries come from the cached JobFlow's status.
    """
    histories: list[JobRunningHistory] = []
    first_sight = True
    for entry in job_status_list:
        if entry.name != job_name or not entry.running_histories:
            continue
        first_sight = False
        histories = [JobRunningHistory(h.state, h.start_timestamp, h.end_timestamp) for h in entry.running_histories]
        if histories[-1].state != phase:
            histories[-1].end_timestamp = now
            histories.append(JobRunningHistory(state=phase, start_timestamp=now))
    if first_sight and phase:
        histories.append(JobRunningHistory(state=phase, start_timestamp=now))
    return histories


def bounded_histories(histories: list[JobRunningHistory]) -> list[JobRunningHistory]:
    """At most the first entry, every `Retrying` one and the last `MAX_RUNNING_HISTORIES` others (ours).

    Upstream appends an entry per phase change for ever, so a Job that flaps grows its JobFlow's
    status without bound, towards etcd's request limit. The first entry (when the Job was first
    seen) and the recent ones are what a reader wants; the `Retrying` entries are the record of the
    retries done (retry.py counts them), so none of them is ever dropped (at most maxRetries).
    """
    if len(histories) <= MAX_RUNNING_HISTORIES + 1:
        return histories
    keep = {0} | {i for i, h in enumerate(histories) if h.state in RECREATING}
    others = [i for i in range(1, len(histories)) if i not in keep]
    keep |= set(others[-MAX_RUNNING_HISTORIES:])
    return [h for i, h in enumerate(histories) if i in keep]


# -- step 1: retain policy --------------------------------------------------------------------------
def delete_all_jobs_created_by_job_flow(world: World) -> list[Obj]:
    """Every Job this JobFlow controls: `jobRetainPolicy: delete` removes them once it Succeeded."""
    return list(world.jobs)


def _job_status_entry(job: Obj, job_status_list: list[JobStatus], now: str) -> JobStatus:
    """A Job's `jobStatusList` entry: start = creation, end = creation + runningDuration."""
    name, phase = meta.name(job), vcjob.phase(job)
    created = meta.creation_timestamp(job)
    duration = vcjob.running_duration(job)
    end = None
    if duration and created:
        end = format_time(add_duration(parse_time(created), duration))
    histories = bounded_histories(get_running_histories(job_status_list, name, phase, now))
    return JobStatus(
        name=name,
        state=phase,
        start_timestamp=created,
        end_timestamp=end,
        # Upstream's retryCount, plus the flow's retries (0 without a retry policy): docs/retry.md.
        restart_count=vcjob.retry_count(job) + sum(1 for h in histories if h.state in RECREATING),
        running_histories=histories,
    )
