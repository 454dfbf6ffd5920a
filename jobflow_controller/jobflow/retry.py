"""Ours, opt-in (`spec.flows[].retry`, docs/retry.md): the retry of a flow's failed Job, decided purely.

Plugged into the flow policy as its attempts hook (`HOOK`, flow_policy.py `AttemptsHook`) for a JobFlow
that uses retries or re-runs: `unmade` asks `backoff_left` before re-creating a retried flow's Job;
before the phase rule, `plan_retries` picks the Jobs to retry, and after it `record_retry` writes
each into the status; and the Jobs the status records as retried are deleted after the status is
written (`jobs_to_delete`, carried out by sync.py).

A flow's Job that ends Failed or Terminated while the JobFlow is Pending or Running is recorded as
retried in the status, deleted once that status is written, and created again (after the backoff)
once it is gone. The retries done come from the status (the `Retrying` histories), never from
memory, so a restarted controller neither loses nor repeats one.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from jobflow_controller.apis import FINISHED_PHASES, UNFINISHED_PHASES, JobPhase, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.meta import format_time, parse_time
from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION, RECREATING, RERUN, RETRYING, RetryPolicy, job_attempt
from jobflow_controller.apis.status import JobRunningHistory, JobStatus, JobStatusIndex
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.world import PlannedStatus, Retry, SyncPlan, WarningEvent, World

Obj = Mapping[str, Any]

#: The shortest wait before a retried Job is created again, whatever `backoff` says (`0s` included):
#: a Job that fails at once must not turn into a delete and a create as fast as the API allows.
RETRY_BACKOFF_FLOOR = 1.0
#: The longest the doubling goes (Kubernetes Jobs cap their pod-failure backoff at six minutes); a
#: `backoff` above it is waited as it is, never shortened.
RETRY_BACKOFF_CAP = 360.0

#: The JobFlow phases in which a failed Job may be retried (apis' UNFINISHED_PHASES), and the Job
#: phases that are retried.
_RETRIED_JOB = frozenset({JobPhase.FAILED, JobPhase.TERMINATED})


def retries_done(entry: JobStatus | None) -> int:
    """The retries recorded for a Job: its `Retrying` history entries."""
    return 0 if entry is None else sum(1 for h in entry.running_histories if h.state == RETRYING)


def recreations(entry: JobStatus | None) -> int:
    """The times the Job was created again, by retries and re-runs: the next Job's attempt."""
    return 0 if entry is None else sum(1 for h in entry.running_histories if h.state in RECREATING)


def awaiting_recreate(entry: JobStatus | None) -> bool:
    """Retried or re-run, and the new Job not seen yet: the last history entry is still `Retrying`/`Rerun`."""
    return entry is not None and bool(entry.running_histories) and entry.running_histories[-1].state in RECREATING


def retry_delay(policy: RetryPolicy, retry_number: int) -> float:
    """The wait before retry `retry_number` (1, 2, ...): `backoff` doubling each retry, from a floor.

    As Kubernetes Jobs back off a failing pod (10 s, 20 s, 40 s, ... up to six minutes), with the
    flow's `backoff` as the first wait and `RETRY_BACKOFF_FLOOR` under it.
    """
    base = max(policy.backoff, RETRY_BACKOFF_FLOOR)
    return max(base, min(base * 2.0 ** max(0, retry_number - 1), RETRY_BACKOFF_CAP))


def backoff_left(entry: JobStatus | None, policy: RetryPolicy | None, now: datetime) -> float:
    """Seconds until the wait of the retry recorded last has passed (0: create now)."""
    if entry is None or policy is None or not entry.running_histories or entry.running_histories[-1].state == RERUN:
        return 0.0
    started = entry.running_histories[-1].start_timestamp
    if not started:
        return 0.0
    elapsed = (now - parse_time(started)).total_seconds()
    return max(0.0, retry_delay(policy, retries_done(entry)) - elapsed)


def invalid_policy_warning(world: World, phase: str) -> WarningEvent | None:
    """One WarningEvent naming each bad policy in force; those flows get no retries.

    Only a JobFlow stored while the webhook was off (or failing open) can hold one.
    """
    problems = [] if phase in FINISHED_PHASES else world.spec.retry.problems
    if not problems:
        return None
    return WarningEvent(c.REASON_INVALID_RETRY, c.MESSAGE_INVALID_RETRY, ("; ".join(problems),))


def plan_retries(world: World, phase: str, status: PlannedStatus, plan: SyncPlan) -> list[Retry]:
    """The flows' Jobs that ended Failed or Terminated and have retries left, in spec order.

    Each is added to `status.retrying_jobs`, so the phase rules do not count it as a failure. The
    policies in force that are malformed get their Warning (`plan.retry_warning`).
    """
    plan.retry_warning = invalid_policy_warning(world, phase)
    policies = world.spec.retry.policies
    if phase not in UNFINISHED_PHASES or not policies:
        return []
    jobs = {meta.name(j): j for j in world.jobs}
    entries = JobStatusIndex(status.job_status_list)
    out: list[Retry] = []
    for flow, job_name in ((f, n) for f in world.spec.flows for n in world.flow_job_names(f.name)):
        policy = policies.get(flow.name)
        job = jobs.get(job_name)
        if policy is None or job is None or job_name in status.retrying_jobs:
            continue
        if vcjob.phase(job) not in _RETRIED_JOB or meta.metadata(job).get("deletionTimestamp"):
            continue
        done = retries_done(entries.first(job_name))
        if done >= policy.max_retries:
            continue
        status.retrying_jobs.append(job_name)
        delay = retry_delay(policy, done + 1)
        out.append(Retry(job=job, attempt=done + 1, max_retries=policy.max_retries, backoff=delay))
    return out


def unless_ended(status: PlannedStatus, retries: list[Retry], ended: bool) -> list[Retry]:
    """`retries`, or none once another flow failed the JobFlow (or the flows halted): nothing is
    re-created any more, so nothing is deleted, and the Jobs count as failed again."""
    if not ended or not retries:
        return retries
    dropped = {meta.name(r.job) for r in retries}
    status.retrying_jobs = [n for n in status.retrying_jobs if n not in dropped]
    return []


def record_retries(world: World, status: PlannedStatus, plan: SyncPlan, retries: list[Retry]) -> None:
    """Each retry into the status (`record_retry`), and into the plan: its event after the write, then
    the Jobs the status records as retried deleted."""
    now = format_time(world.now)
    for one in retries:
        record_retry(status, one, now)
    plan.retries = retries
    plan.retry_deletes = jobs_to_delete(world, status.retrying_jobs)


def record_retry(status: PlannedStatus, retry: Retry, now: str) -> None:
    """Close the Job's last history entry and open a `Retrying` one; count it in restartCount."""
    entry = JobStatusIndex(status.job_status_list).first(meta.name(retry.job))
    if entry is None:  # pragma: no cover - the Job exists, so get_all_job_status made its entry
        return
    open_history(entry, RETRYING, now)
    entry.restart_count = vcjob.retry_count(retry.job) + recreations(entry)


def open_history(entry: JobStatus, state: str, now: str) -> None:
    """Close the entry's last history entry (end = now) and open one in `state` (a retry, a re-run)."""
    if entry.running_histories and not entry.running_histories[-1].end_timestamp:
        entry.running_histories[-1].end_timestamp = now
    entry.running_histories.append(JobRunningHistory(state=state, start_timestamp=now))


def jobs_to_delete(world: World, retrying: list[str]) -> list[Obj]:
    """The Jobs the status records as retried that the cache still holds, not being deleted yet."""
    if not retrying:
        return []
    names = set(retrying)
    return [j for j in world.jobs if meta.name(j) in names and not meta.metadata(j).get("deletionTimestamp")]


class _AttemptsHook:
    """Retries and re-runs at the flow policy's named points (flow_policy.py `AttemptsHook`)."""

    def attempt(self, entry: JobStatus | None) -> int:
        return recreations(entry)

    def wait(self, world: World, flow: jf.Flow, entry: JobStatus | None) -> float:
        if not awaiting_recreate(entry):
            return 0.0
        return backoff_left(entry, world.spec.retry.policies.get(flow.name), world.now)

    def fresh_read(self, world: World, flow: jf.Flow) -> bool:
        return flow.name in world.spec.retry.policies

    def superseded(self, job: Obj, entry: JobStatus | None) -> bool:
        return entry is not None and job_attempt(job) < recreations(entry)

    def mark(self, job: dict[str, Any], attempt: int) -> None:
        if attempt > 0:
            job["metadata"]["annotations"][ATTEMPT_ANNOTATION] = str(attempt)

    def plan_retries(self, world: World, status: PlannedStatus, plan: SyncPlan) -> None:
        plan.retries = plan_retries(world, jf.phase(world.job_flow), status, plan)

    def record_retries(self, world: World, status: PlannedStatus, plan: SyncPlan, ended: bool) -> None:
        record_retries(world, status, plan, unless_ended(status, plan.retries, ended))


HOOK = _AttemptsHook()
