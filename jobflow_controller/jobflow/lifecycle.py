"""Ours, opt-in (docs/lifecycle.md): suspend, shutdown and deadlines, decided purely for one sync.

Plugged into the flow policy as its lifecycle hook (`HOOK`, flow_policy.py `LifecycleHook`) for a JobFlow
that uses the lifecycle: `halt_reason` before the outcomes are evaluated (a shutdown or a passed
JobFlow deadline stops the flows, outcomes.py), `suspended` by `may_create` (a suspended JobFlow
creates nothing), and `apply` once the phase is known (`after_phase`):
it stamps `suspendedSince` and `finishedAt`, says `Suspended`/`Resumed`/why the JobFlow ended, and
lists the Jobs to terminate (a shutdown, the JobFlow's deadline, a flow's deadline) with a
`TerminateJob` Command, as Volcano terminates a Job.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from jobflow_controller.apis import FINISHED_PHASES, JobPhase, Phase, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.lifecycle import Shutdown
from jobflow_controller.apis.meta import format_time, parse_time
from jobflow_controller.apis.status import JobFlowStatus
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.world import Notice, PlannedStatus, SyncPlan, Termination, WarningEvent, World

#: Why a JobFlow stops early: its shutdown, or its deadline (which stops it as Terminate does).
DEADLINE = "DeadlineExceeded"
#: Job phases with nothing left to terminate: ended, or on their way to an end.
_NOT_TERMINATED = frozenset(
    {JobPhase.COMPLETED, JobPhase.COMPLETING, JobPhase.FAILED, JobPhase.TERMINATED, JobPhase.TERMINATING}
)


def carry_stamps(job_flow: Mapping[str, Any], status: JobFlowStatus) -> None:
    """The lifecycle stamps of the stored status, which a sync's fresh status keeps."""
    stored = jf.status(job_flow)
    status.suspended_since = str(stored["suspendedSince"]) if stored.get("suspendedSince") else None
    status.finished_at = str(stored["finishedAt"]) if stored.get("finishedAt") else None
    status.retry_request = str(stored["retryRequest"]) if stored.get("retryRequest") else None


def deadline_left(world: World) -> float | None:
    """Seconds until the JobFlow's `activeDeadlineSeconds` passes (<= 0: passed); None without one."""
    seconds = world.spec.lifecycle.active_deadline_seconds
    created = meta.creation_timestamp(world.job_flow)
    if seconds is None or not created:
        return None
    return (parse_time(created) + timedelta(seconds=seconds) - world.now).total_seconds()


def halt_reason(world: World) -> str | None:
    """Terminate, DeadlineExceeded or Stop: what stops this JobFlow's flows, if anything."""
    lifecycle = world.spec.lifecycle
    if lifecycle.shutdown == Shutdown.TERMINATE:
        return Shutdown.TERMINATE
    left = deadline_left(world)
    if left is not None and left <= 0:
        return DEADLINE
    return Shutdown.STOP if lifecycle.shutdown == Shutdown.STOP else None


def suspended(world: World) -> bool:
    return world.spec.lifecycle.suspend


def apply(world: World, status: JobFlowStatus, plan: SyncPlan, halt: str | None) -> None:
    """Stamps, events and terminations of one sync, once its status (and phase) is computed."""
    _suspension(world, status, plan)
    old, new = jf.phase(world.job_flow), status.phase
    if new in FINISHED_PHASES and old not in FINISHED_PHASES:
        ttl = world.spec.lifecycle.ttl_seconds_after_finished
        if ttl is not None:
            status.finished_at = format_time(world.now)
            plan.deploy.requeue_in(float(ttl))  # then the TTL deletes it (lifecycle_actions.py)
        if new == Phase.FAILED and halt is not None:
            plan.notices.append(_ended(halt))
    if new not in FINISHED_PHASES:
        status.finished_at = None
    left = deadline_left(world)
    if left is not None and left > 0 and new not in FINISHED_PHASES:
        plan.deploy.requeue_in(left)
    if halt in (Shutdown.TERMINATE, DEADLINE):
        warning = WarningEvent(c.REASON_DEADLINE_EXCEEDED, c.MESSAGE_JOB_FLOW_DEADLINE, (_deadline(world),))
        for job in world.jobs:
            if vcjob.phase(job) not in _NOT_TERMINATED and not _deleting(job):
                plan.terminations.append(Termination(job, warning if halt == DEADLINE else None))
    _flow_deadlines(world, plan)


def _suspension(world: World, status: JobFlowStatus, plan: SyncPlan) -> None:
    if suspended(world) and status.phase not in FINISHED_PHASES:
        if status.suspended_since is None:
            status.suspended_since = format_time(world.now)
            plan.notices.append(Notice(c.REASON_SUSPENDED, c.MESSAGE_SUSPENDED))
    elif status.suspended_since is not None:
        status.suspended_since = None
        if not suspended(world):
            plan.notices.append(Notice(c.REASON_RESUMED, c.MESSAGE_RESUMED))


def _flow_deadlines(world: World, plan: SyncPlan) -> None:
    """Terminate each flow's Job that runs past its `activeDeadlineSeconds` (from the Job's creation)."""
    deadlines = world.spec.lifecycle.flow_deadlines
    if not deadlines:
        return
    terminating = {meta.uid(t.job) for t in plan.terminations}
    for flow, job_name in ((f, n) for f in world.spec.flows for n in world.flow_job_names(f.name)):
        seconds = deadlines.get(flow.name)
        job = world.named_jobs.get(job_name)
        if seconds is None or job is None or not meta.is_controlled_by(job, world.job_flow):
            continue
        created = meta.creation_timestamp(job)
        if not created or vcjob.phase(job) in _NOT_TERMINATED or _deleting(job) or meta.uid(job) in terminating:
            continue
        left = (parse_time(created) + timedelta(seconds=seconds) - world.now).total_seconds()
        if left > 0:
            plan.deploy.requeue_in(left)
            continue
        args = (meta.name(job), flow.name, seconds)
        plan.terminations.append(
            Termination(job, WarningEvent(c.REASON_DEADLINE_EXCEEDED, c.MESSAGE_FLOW_DEADLINE, args))
        )


def _ended(halt: str) -> Notice:
    if halt == Shutdown.STOP:
        return Notice(c.REASON_STOPPED, c.MESSAGE_STOPPED)
    if halt == Shutdown.TERMINATE:
        return Notice(c.REASON_TERMINATED, c.MESSAGE_TERMINATED)
    return Notice(c.REASON_DEADLINE_EXCEEDED, c.MESSAGE_ENDED_DEADLINE, warning=True)


def _deadline(world: World) -> int:
    return world.spec.lifecycle.active_deadline_seconds or 0


def _deleting(job: Mapping[str, Any]) -> bool:
    return bool(meta.metadata(job).get("deletionTimestamp"))


class _LifecycleHook:
    """The lifecycle at the flow policy's named points (flow_policy.py `LifecycleHook`)."""

    def may_create(self, world: World) -> bool:
        return not suspended(world)

    def carry_stamps(self, world: World, status: PlannedStatus) -> None:
        carry_stamps(world.job_flow, status)

    def apply(self, world: World, status: PlannedStatus, plan: SyncPlan, stop: str | None) -> None:
        apply(world, status, plan, stop)


HOOK = _LifecycleHook()
