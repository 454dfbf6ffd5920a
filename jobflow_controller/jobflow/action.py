"""The sync: create what is due, compute the status, write it (jobflow_controller_action.go).

Upstream's steps, in order: (1) a Succeeded flow with `jobRetainPolicy: delete` deletes its Jobs and
stops there; (2) `deploy_job` creates each flow's Job whose targets are all Completed; (3) the
status is computed from the Jobs the JobFlow's label selects; (4) the phase's rule is applied;
(5) the status is written with a PUT of the status subresource
(ours: a change that does not finish the JobFlow is paced by the status bucket, urgency.py).

Nothing read from an informer is ever modified: the status is built afresh and the PUT body is a
new dict (upstream writes into its cache; docs/deviations.md). Metrics count a transition only once
the status carrying it has been written.

A Job that already ran to completion is never created again, and a finished JobFlow (Succeed or
Failed) creates nothing (finished.py; docs/deviations.md row 8).

Ours, opt-in (`spec.flows[].retry`, docs/retry.md): a flow's Job that ends Failed or Terminated
while the JobFlow is Pending or Running is recorded as retried in the status, deleted once that
status is written, and created again (after the backoff, through `add_after`) once it is gone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.apis import JobPhase, Phase, RetainPolicy, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.builders import new_job
from jobflow_controller.apis.patch import PatchError, apply_patch
from jobflow_controller.apis.probe import Probe
from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION, RETRYING, RetryPolicy, job_attempt, retry_policies
from jobflow_controller.apis.status import Condition, JobFlowStatus, JobRunningHistory, JobStatus
from jobflow_controller.apis.timeutil import add_duration, format_duration, format_time, parse_time
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow import urgency
from jobflow_controller.jobflow.base import JobFlowControllerBase
from jobflow_controller.jobflow.finished import recorded_completed
from jobflow_controller.jobflow.state import UpdateJobFlowStatusFn, new_state
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError, from_status
from jobflow_controller.kube.informers import BY_CREATED_BY_JOB_FLOW
from jobflow_controller.kube.retry import DEFAULT_RETRY, retry_on_conflict
from jobflow_controller.validation.jobflow import validation_message

if TYPE_CHECKING:
    from jobflow_controller.apis import FlowRequest

log = structlog.get_logger(__name__)

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

#: Phases in which deploy creates nothing. Upstream never syncs Failed (or Terminating) at all, and
#: syncs Succeed with a no-op phase function, so a Job created then could never change the phase.
_FINISHED = frozenset({Phase.SUCCEED, Phase.FAILED})
#: The JobFlow phases in which a failed Job may be retried, and the Job phases that are retried.
_RETRYABLE_FLOW = frozenset({"", Phase.PENDING, Phase.RUNNING})
_RETRIED_JOB = frozenset({JobPhase.FAILED, JobPhase.TERMINATED})


@dataclass(frozen=True)
class _Retry:
    """A retry decided in this sync: recorded in the status, then the Job is deleted."""

    job: Obj
    attempt: int
    policy: RetryPolicy


class ActionMixin(JobFlowControllerBase):
    """The sync handler and what it calls."""

    # -- the sync handler -----------------------------------------------------------------------
    def handle_job_flow(self, req: FlowRequest) -> None:
        name = req.job_flow_name
        try:
            cached = self.job_flow_lister.job_flows(req.namespace).get(name)
        except NotFoundError:
            log.info(f"JobFlow {name} has been deleted.", jobflow=f"{req.namespace}/{name}")
            self.forget_job_flow(req.namespace, name)
            return
        except Exception as err:
            raise RuntimeError(f"get jobflow {name} failed for {err}") from err
        # Our own last status write, while the cache has not shown it yet (own_writes.py).
        cached = self.own_writes.newest(cached)

        # RetryOnConflict: a 409 on the status write means another writer (an annotation, a label,
        # our own earlier write the cache has not shown yet) got in first. The first attempt works
        # on the cached object; each retry re-reads it from the API server and syncs again, so the
        # status written is always computed from the object it replaces. Upstream returns the 409
        # and burns one of --max-requeue-num's retries on it.
        attempts = 0

        def attempt() -> None:
            nonlocal attempts
            attempts += 1
            job_flow = cached if attempts == 1 else self._get_latest_job_flow(req.namespace, name)
            if job_flow is not None:
                self._handle_job_flow_once(req, job_flow)

        retry_on_conflict(DEFAULT_RETRY, attempt)

    def _get_latest_job_flow(self, namespace: str, name: str) -> Obj | None:
        try:
            return self.clientset.job_flows(namespace).get(name)
        except NotFoundError:
            log.info(f"JobFlow {name} has been deleted.", jobflow=f"{namespace}/{name}")
            self.forget_job_flow(namespace, name)
            return None

    def _handle_job_flow_once(self, req: FlowRequest, job_flow: Obj) -> None:
        name = req.job_flow_name
        # A status computed and not written yet is where this sync starts (own_writes.py).
        job_flow = self.own_writes.with_pending(job_flow)
        # Patch problems are not the whole JobFlow's: they stop only their flow (InvalidPatch, below).
        problem = validation_message(job_flow, patches=False, retries=False)
        if problem is not None:
            # A JobFlow that can never finish: say so once per generation and wait for its spec to
            # change, which the update handler turns into a new request. Several syncs of one
            # generation (a JobTemplate's add racing the JobFlow's, the resync) would otherwise
            # each add a Warning, aggregated into a rising count.
            if self.invalid_warned.get((req.namespace, name)) != (meta.uid(job_flow), meta.generation(job_flow)):
                self.recorder.event(job_flow, c.EVENT_WARNING, c.REASON_INVALID, problem)
                self.invalid_warned[(req.namespace, name)] = (meta.uid(job_flow), meta.generation(job_flow))
            return
        self.invalid_warned.pop((req.namespace, name), None)

        state = new_state(job_flow, self.sync_job_flow)
        if state is None:
            raise RuntimeError(f"jobflow {name} state {{{jf.phase(job_flow)}}} is invalid")
        try:
            state.execute(req.action)
        except Exception as err:
            raise RuntimeError(
                f"sync jobflow {name} failed for {err}, event is {req.event}, action is {req.action}"
            ) from err

    def sync_job_flow(self, job_flow: Obj, update_state_fn: UpdateJobFlowStatusFn) -> None:
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        old_phase = jf.phase(job_flow)
        if jf.job_retain_policy(job_flow) == RetainPolicy.DELETE and old_phase == Phase.SUCCEED:
            try:
                self.delete_all_jobs_created_by_job_flow(job_flow)
            except Exception as err:
                log.error(f"Failed to delete jobs of JobFlow {ns}/{name}: {err}", jobflow=f"{ns}/{name}")
                raise
            return

        # Upstream returns here on the first failed create, writing no status at all; we go on so
        # that the other flows' progress is still recorded, and return the error afterwards.
        deploy_err: Exception | None = None
        try:
            self.deploy_job(job_flow)
        except Exception as err:  # noqa: BLE001 - reported after the status write
            log.error(f"Failed to create jobs of JobFlow {ns}/{name}: {err}", jobflow=f"{ns}/{name}")
            deploy_err = err

        self.warn_invalid_retry_policies(job_flow)
        status = self.get_all_job_status(job_flow)
        retries = self.plan_retries(job_flow, status)
        update_state_fn(status, len(jf.flows(job_flow)))
        if status.phase not in _RETRYABLE_FLOW and retries:
            # Another flow failed the JobFlow: nothing is re-created any more, so nothing is deleted.
            dropped = {meta.name(r.job) for r in retries}
            status.retrying_jobs = [n for n in status.retrying_jobs if n not in dropped]
            retries = []
        now = format_time(self.clock.wall())
        for retry in retries:
            _record_retry(status, retry, now)
        body = status.to_dict()
        stored_status = self.own_writes.stored_status(job_flow)
        if body == dict(stored_status):
            self.own_writes.written_pending(ns, name)
            self.status_lane.take(self.request_for(ns, name))  # nothing to write: a due reservation lapses
        elif retries or not self._status_write_waits(job_flow, body):
            # A status recording a retry is written at once: the Job is deleted only after it.
            updated = {**job_flow, "status": body}
            try:
                stored = self.clientset.job_flows(ns).update_status(updated)
            except Exception as err:
                log.error(f"Failed to update status of JobFlow {ns}/{name}: {err}", jobflow=f"{ns}/{name}")
                raise
            self.own_writes.wrote(updated, stored)
            self.own_writes.written_pending(ns, name)
            self._count_transition(ns, str((stored_status.get("state") or {}).get("phase") or ""), status.phase)
        # Only now that the status records each retry: a restart cannot lose or repeat one.
        for retry in retries:
            self.metrics.update_job_flow_job_retry(ns)
            self.recorder.eventf(
                job_flow,
                c.EVENT_NORMAL,
                c.REASON_RETRY_JOB,
                c.MESSAGE_RETRY_JOB,
                meta.name(retry.job),
                vcjob.phase(retry.job),
                format_duration(retry.policy.backoff),
                retry.attempt,
                retry.policy.max_retries,
            )
        self.delete_retried_jobs(job_flow, status.retrying_jobs)
        if deploy_err is not None:
            raise deploy_err

    def _status_write_waits(self, job_flow: Obj, body: dict[str, Any]) -> bool:
        """Whether the status change `body` is left to a later sync (then it is kept, and scheduled).

        Upstream writes every change at once: one PUT per Job phase change seen, each Job going
        through Pending, Running and Completed, so most of a JobFlow's writes say what the next
        one says again. Ours, for a change that does not finish the JobFlow: none while the
        JobFlow is queued again already (its next sync writes the newer status). Then, by
        default, as soon as the status bucket has a token for this JobFlow (urgency.py,
        --status-write-qps): at once while the controller keeps up, and past the burst in the
        status lane at the reserved time, with every change since. With --status-write-interval,
        at most that long after the oldest unwritten change instead. Succeed and Failed are
        written at once, and everything once the queue shuts down (no later sync may come; the
        drain syncs every JobFlow with a status waiting, see `JobFlowController.shut_down`). The
        status kept meanwhile is what the next sync builds on (`OwnWrites.with_pending`), so
        every phase a sync saw still shows in the histories.
        """
        if self.queue.shutting_down() or self.must_stop_now():
            return False
        if str((body.get("state") or {}).get("phase") or "") in _FINISHED:
            return False
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        req = self.request_for(ns, name)
        now = self.clock.now()
        queued_again = self.queue.added_while_processing(req)
        # With no interval: at once when the status bucket has a token for it, now or reserved
        # earlier (urgency.py).
        if self.status_write_interval <= 0 and not queued_again and self.status_lane.write_now(req):
            return False
        since = self.own_writes.defer(job_flow, body, now)
        if queued_again:
            return True
        if self.status_write_interval > 0:
            wait = since + self.status_write_interval - now
            if wait <= 0:
                return False
            self.queue.add_after(req, wait, priority=urgency.STATUS)
            return True
        self.status_lane.add(req)
        return True

    def _count_transition(self, ns: str, old: str, new: str) -> None:
        if new == old:
            return
        if new == Phase.SUCCEED:
            self.metrics.update_job_flow_succeed(ns)
        elif new == Phase.FAILED:
            self.metrics.update_job_flow_failed(ns)

    # -- step 2: create the Jobs that are due -----------------------------------------------------
    def deploy_job(self, job_flow: Obj) -> None:
        """Create, in spec order, each missing Job whose targets are all Completed.

        Existing Jobs are never touched, whatever their phase. The first error is raised once every
        flow has been tried (upstream stops at it).

        Upstream re-creates any missing Job, in Succeed too, so a Job deleted after it finished (by
        hand, or by `ttlSecondsAfterFinished`) runs again. Ours: a finished JobFlow creates nothing,
        and a Job the status records as Completed (or seen deleted while Completed) is done for good.
        A Job deleted before it completed is re-created, as upstream.
        """
        if jf.phase(job_flow) in _FINISHED:
            return
        ns = meta.namespace(job_flow)
        done = self.completed_job_names(job_flow)
        policies = retry_policies(job_flow).policies
        first_err: Exception | None = None
        for flow in jf.flows(job_flow):
            job_name = jf.job_name(meta.name(job_flow), flow.name)
            if job_name in done:
                continue  # it ran to completion, whether it still exists or not
            try:
                existing = self.job_lister.jobs(ns).get(job_name)
            except NotFoundError:
                existing = None
            if existing is not None:
                if not meta.is_controlled_by(existing, job_flow):
                    self.warn_resource_exists(job_flow, job_name)
                continue
            if self.create_expectations.pending(ns, job_name):
                continue  # ours, created moments ago; the informer has not shown it yet
            entry = _recorded_entry(job_flow, job_name)
            attempt = _retries_done(entry)
            policy = policies.get(flow.name)
            if _awaiting_recreate(entry):
                wait = self._retry_wait(entry, policy)
                if wait > 0:
                    self.queue.add_after(self.request_for(ns, meta.name(job_flow)), wait, priority=urgency.REACT)
                    continue
            try:
                if flow.targets is None or self.judge(job_flow, flow.targets, done, flow=flow):
                    if policy is not None and self._cache_is_behind(job_flow):
                        # The retries done, and whether one waits for its backoff, are read from
                        # this status: a cached copy behind our own last write (one recording a
                        # retry) would re-create the Job too early, under the wrong attempt. Sync
                        # again from the API server's copy (a conflict: retry_on_conflict GETs it).
                        raise from_status(
                            409, "Conflict", f"jobflow {meta.name(job_flow)}: cache behind, not creating {job_name}"
                        )
                    self.create_job(job_flow, flow.name, attempt)
                else:
                    self.check_patch(job_flow, flow.name)
            except Exception as err:  # noqa: BLE001 - the other flows still get their turn
                first_err = first_err or err
        if first_err is not None:
            raise first_err

    def judge(
        self, job_flow: Obj, targets: tuple[str, ...], completed: set[str] | None = None, *, flow: jf.Flow | None = None
    ) -> bool:
        """True only if every target's Job is ours and Completed (Completing is not enough).

        A Job of the target's name that this JobFlow does not control (someone else's, or an earlier
        JobFlow's of the same name) never satisfies a dependency: its phase says nothing of our flow.
        A target whose Job is gone (or only a squatter holds its name) satisfies it if the Job ran to
        completion (`completed`, from `completed_job_names`): upstream would run it again first.

        Ours: when `flow` has a `dependsOn.probe`, a target whose Job is not Completed yet is also
        met when the probe entries naming its tasks pass (probe.py, docs/probe.md); every target is
        then looked at, so all their checks start in one sync. Without a probe this is upstream's rule.
        """
        ns = meta.namespace(job_flow)
        done = self.completed_job_names(job_flow) if completed is None else completed
        probe = Probe() if flow is None or flow.probe is None else self.probe_of(job_flow, flow, targets)
        if probe is None:
            return False  # the probe cannot be judged; InvalidProbe said why
        met = True
        for target in targets:
            target_job_name = jf.job_name(meta.name(job_flow), target)
            try:
                job = self.job_lister.jobs(ns).get(target_job_name)
            except NotFoundError:
                if target_job_name in done:
                    continue
                log.info(f"No {target_job_name} Job found！", jobflow=f"{ns}/{meta.name(job_flow)}")  # noqa: RUF001 - upstream's
                ok = False
            else:
                if meta.is_controlled_by(job, job_flow):
                    ok = vcjob.phase(job) == JobPhase.COMPLETED or (
                        flow is not None and bool(probe) and self.probe_gate.target_met(job_flow, flow.name, probe, job)
                    )
                else:
                    ok = target_job_name in done
            if not ok:
                if not probe:
                    return False
                met = False
        return met

    def completed_job_names(self, job_flow: Obj) -> set[str]:
        """The Jobs of this JobFlow object that ran to completion: recorded so, or seen deleted so."""
        return recorded_completed(job_flow) | set(self.deleted_jobs.recall(job_flow))

    def create_job(self, job_flow: Obj, flow_name: str, attempt: int = 0) -> None:
        job_name = jf.job_name(meta.name(job_flow), flow_name)
        try:
            job = self.load_job_template_and_set_job(job_flow, flow_name, job_name)
        except PatchError as err:
            # Not an error of the sync: retrying cannot help until the JobFlow or the template
            # changes, and each of those enqueues the JobFlow (so does the resync).
            self.warn_invalid_patch(job_flow, flow_name, job_name, err)
            return
        if attempt > 0:
            job["metadata"]["annotations"][ATTEMPT_ANNOTATION] = str(attempt)
        ns = meta.namespace(job_flow)
        try:
            self.clientset.jobs(ns).create(job)
        except AlreadyExistsError:
            # The cache had not seen it yet. Upstream stops here; we look, because a Job someone
            # else made under our name would otherwise go unmentioned while the flow waits forever.
            self._check_existing_job(job_flow, job_name)
            return
        except ApiStatusError as err:
            if _is_refusal(err):
                self.recorder.eventf(
                    job_flow, c.EVENT_WARNING, c.REASON_FAILED_CREATE, c.MESSAGE_FAILED_CREATE, job_name, err
                )
            raise
        self.create_expectations.created(ns, job_name)
        self.recorder.eventf(job_flow, c.EVENT_NORMAL, c.REASON_CREATED, c.MESSAGE_CREATED, job_name)

    def _check_existing_job(self, job_flow: Obj, job_name: str) -> None:
        try:
            existing = self.clientset.jobs(meta.namespace(job_flow)).get(job_name)
        except NotFoundError:
            return  # deleted again already; the Job delete event brings the flow back
        if not meta.is_controlled_by(existing, job_flow):
            self.warn_resource_exists(job_flow, job_name)

    def warn_resource_exists(self, job_flow: Obj, job_name: str) -> None:
        """sample-controller's ErrResourceExists: name the squatting Job; the correlator dedups repeats."""
        log.warning(
            f"Job {job_name} already exists and is not controlled by JobFlow {meta.name(job_flow)}",
            jobflow=f"{meta.namespace(job_flow)}/{meta.name(job_flow)}",
        )
        self.recorder.eventf(job_flow, c.EVENT_WARNING, c.REASON_RESOURCE_EXISTS, c.MESSAGE_RESOURCE_EXISTS, job_name)

    def check_patch(self, job_flow: Obj, flow_name: str) -> None:
        """Say now, not once its targets completed, that a waiting flow's patch cannot apply.

        Only for a flow that has a patch and whose template exists (a missing one is reported when
        the flow is due, as upstream reports it).
        """
        patch = jf.flow_patch(job_flow, flow_name)
        if patch is None:
            return
        try:
            template = self.job_template_lister.job_templates(meta.namespace(job_flow)).get(flow_name)
        except NotFoundError:
            return
        try:
            apply_patch(jf.spec(template), patch)
        except PatchError as err:
            self.warn_invalid_patch(job_flow, flow_name, jf.job_name(meta.name(job_flow), flow_name), err)

    def warn_invalid_patch(self, job_flow: Obj, flow_name: str, job_name: str, err: PatchError) -> None:
        """One Warning naming the Job, the flow, the template and the problem; the correlator dedups repeats."""
        log.warning(
            f"The patch of flow {flow_name} does not apply to its JobTemplate: {err}",
            jobflow=f"{meta.namespace(job_flow)}/{meta.name(job_flow)}",
        )
        self.recorder.eventf(
            job_flow,
            c.EVENT_WARNING,
            c.REASON_INVALID_PATCH,
            c.MESSAGE_INVALID_PATCH,
            job_name,
            flow_name,
            flow_name,
            err,
        )

    def load_job_template_and_set_job(self, job_flow: Obj, flow_name: str, job_name: str) -> dict[str, Any]:
        template = self.job_template_lister.job_templates(meta.namespace(job_flow)).get(flow_name)
        return new_job(job_flow, flow_name, job_name, template)

    # -- retries (ours, docs/retry.md) ------------------------------------------------------------
    def plan_retries(self, job_flow: Obj, status: JobFlowStatus) -> list[_Retry]:
        """The flows' Jobs that ended Failed or Terminated and have retries left, in spec order.

        Each is added to `status.retrying_jobs`, so the phase rules do not count it as a failure.
        The retries done come from the status (the `Retrying` histories), never from memory.
        """
        if jf.phase(job_flow) not in _RETRYABLE_FLOW:
            return []
        policies = retry_policies(job_flow).policies
        if not policies:
            return []
        jobs = {meta.name(j): j for j in self.get_all_jobs_created_by_job_flow(job_flow)}
        out: list[_Retry] = []
        for flow in jf.flows(job_flow):
            policy = policies.get(flow.name)
            job_name = jf.job_name(meta.name(job_flow), flow.name)
            job = jobs.get(job_name)
            if policy is None or job is None or job_name in status.retrying_jobs:
                continue
            if vcjob.phase(job) not in _RETRIED_JOB or meta.metadata(job).get("deletionTimestamp"):
                continue
            done = _retries_done(_find_entry(status.job_status_list, job_name))
            if done >= policy.max_retries:
                continue
            status.retrying_jobs.append(job_name)
            out.append(_Retry(job=job, attempt=done + 1, policy=policy))
        return out

    def warn_invalid_retry_policies(self, job_flow: Obj) -> None:
        """One Warning naming each bad policy in force (the correlator dedups repeats); those flows get no retries.

        Only a JobFlow stored while the webhook was off (or failing open) can hold one.
        """
        problems = [] if jf.phase(job_flow) in _FINISHED else retry_policies(job_flow).problems
        if not problems:
            return
        message = "; ".join(problems)
        log.warning(f"Invalid retry policy: {message}", jobflow=f"{meta.namespace(job_flow)}/{meta.name(job_flow)}")
        self.recorder.eventf(job_flow, c.EVENT_WARNING, c.REASON_INVALID_RETRY, c.MESSAGE_INVALID_RETRY, message)

    def delete_retried_jobs(self, job_flow: Obj, names: list[str]) -> None:
        """Delete (by uid) the Jobs the status records as retried that the cache still holds."""
        if not names:
            return
        ns = meta.namespace(job_flow)
        for job in self.get_all_jobs_created_by_job_flow(job_flow):
            if meta.name(job) not in names or meta.metadata(job).get("deletionTimestamp"):
                continue
            try:
                self.clientset.jobs(ns).delete(meta.name(job), uid=meta.uid(job) or None)
            except NotFoundError:
                continue  # gone already; its delete event brings the JobFlow back
            except ConflictError:
                # The uid precondition failed: the name holds another Job now (the re-created
                # one, which the cache has not shown yet). It is never deleted.
                continue

    def _retry_wait(self, entry: JobStatus | None, policy: RetryPolicy | None) -> float:
        """Seconds until the backoff since the retry was recorded has passed (0: create now)."""
        if entry is None or policy is None or not entry.running_histories:
            return 0.0
        started = entry.running_histories[-1].start_timestamp
        if not started:
            return 0.0
        elapsed = (self.clock.wall() - parse_time(started)).total_seconds()
        return max(0.0, policy.backoff - elapsed)

    def _cache_is_behind(self, job_flow: Obj) -> bool:
        """Whether the API server holds a newer JobFlow than `job_flow` (one GET).

        Asked only before creating a Job for a flow with a retry policy, so once per Job created:
        never for a JobFlow without one, which behaves exactly as upstream.
        """
        latest = self._get_latest_job_flow(meta.namespace(job_flow), meta.name(job_flow))
        return latest is not None and meta.resource_version(latest) != meta.resource_version(job_flow)

    # -- step 3: the status ---------------------------------------------------------------------
    def get_all_jobs_created_by_job_flow(self, job_flow: Obj) -> list[Obj]:
        ns = meta.namespace(job_flow)
        # Upstream: list the namespace with `volcano.sh/createdByJobFlow in (<ns>.<name>)`. The
        # label-value index gives the same Jobs without scanning the namespace on every sync.
        value = meta.generate_object_string(ns, meta.name(job_flow))
        # Ours: only the Jobs this JobFlow controls (by uid). The label alone also matches Jobs of
        # an earlier JobFlow of the same name that the garbage collector has not removed yet, and
        # anyone can set it; upstream counts those too.
        jobs = [
            j
            for j in self.job_lister.by_label_index(BY_CREATED_BY_JOB_FLOW, value, ns)
            if meta.is_controlled_by(j, job_flow)
        ]
        # Upstream's order is a map's (random); creation order makes the status lists stable.
        return sorted(jobs, key=lambda j: (meta.creation_timestamp(j) or "", meta.name(j)))

    def has_jobs_left(self, job_flow: Obj) -> bool:
        """Whether the cache still holds a Job this JobFlow controls (retain policy `delete`)."""
        return bool(self.get_all_jobs_created_by_job_flow(job_flow))

    def get_all_job_status(self, job_flow: Obj) -> JobFlowStatus:
        """Upstream's status from the Jobs that exist, plus what tells a deleted Completed Job apart.

        The six lists and `conditions` name the Jobs that exist, as upstream's. `jobStatusList` keeps
        an entry for a Job that is gone (upstream never prunes it); an entry whose state is Completed
        is the record that the Job ran, so it is never created again. A Job seen deleted while
        Completed before any status recorded it gets that entry now, from its last state.
        `deleted_completed_jobs` (not written) lets the phase rules count those Jobs as Completed.
        """
        jobs = self.get_all_jobs_created_by_job_flow(job_flow)
        buckets: dict[str, list[str]] = {phase: [] for phase in _BUCKETS}
        status = JobFlowStatus(phase=jf.phase(job_flow))
        job_status_list = [JobStatus.from_dict(e) for e in jf.job_status_list(job_flow)]
        now = format_time(self.clock.wall())
        for job in jobs:
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
            previous = _find_entry(job_status_list, name)
            if previous is not None and job_attempt(job) < _retries_done(previous):
                # The Job deleted for a retry, not gone yet: its entry is the retry's record.
                status.retrying_jobs.append(name)
                continue
            _merge_job_status(job_status_list, _job_status_entry(job, job_status_list, now))
        existing = {meta.name(j) for j in jobs}
        recorded = recorded_completed(job_flow)
        deleted = self.deleted_jobs.recall(job_flow)
        for name, last in deleted.items():
            if name not in existing and name not in recorded:
                _merge_job_status(job_status_list, _job_status_entry(last, job_status_list, now))
        done = recorded | set(deleted)
        for flow in jf.flows(job_flow):
            name = jf.job_name(meta.name(job_flow), flow.name)
            if name in done and name not in existing and name not in status.deleted_completed_jobs:
                status.deleted_completed_jobs.append(name)
        status.pending_jobs = buckets[JobPhase.PENDING]
        status.running_jobs = buckets[JobPhase.RUNNING]
        status.failed_jobs = buckets[JobPhase.FAILED]
        status.completed_jobs = buckets[JobPhase.COMPLETED]
        status.terminated_jobs = buckets[JobPhase.TERMINATED]
        status.job_status_list = job_status_list
        return status

    # -- step 1: retain policy ------------------------------------------------------------------
    def delete_all_jobs_created_by_job_flow(self, job_flow: Obj) -> None:
        ns = meta.namespace(job_flow)
        for job in self.get_all_jobs_created_by_job_flow(job_flow):
            try:
                self.clientset.jobs(ns).delete(meta.name(job))
            except NotFoundError:
                continue  # the cache lagged behind a deletion: the Job is gone, which is the goal
            except Exception as err:
                log.error(
                    f"Failed to delete job of JobFlow {ns}/{meta.name(job_flow)}: {err}",
                    jobflow=f"{ns}/{meta.name(job_flow)}",
                )
                raise


def _job_status_entry(job: Obj, job_status_list: list[JobStatus], now: str) -> JobStatus:
    """A Job's `jobStatusList` entry: start = creation, end = creation + runningDuration."""
    name, phase = meta.name(job), vcjob.phase(job)
    created = meta.creation_timestamp(job)
    duration = vcjob.running_duration(job)
    end = None
    if duration and created:
        end = format_time(add_duration(parse_time(created), duration))
    histories = get_running_histories(job_status_list, name, phase, now)
    return JobStatus(
        name=name,
        state=phase,
        start_timestamp=created,
        end_timestamp=end,
        # Upstream's retryCount, plus the flow's retries (0 without a retry policy): docs/retry.md.
        restart_count=vcjob.retry_count(job) + sum(1 for h in histories if h.state == RETRYING),
        running_histories=histories,
    )


def _find_entry(job_status_list: list[JobStatus], job_name: str) -> JobStatus | None:
    for entry in job_status_list:
        if entry.name == job_name:
            return entry
    return None


def _recorded_entry(job_flow: Obj, job_name: str) -> JobStatus | None:
    for raw in jf.job_status_list(job_flow):
        if raw.get("name") == job_name:
            return JobStatus.from_dict(raw)
    return None


def _retries_done(entry: JobStatus | None) -> int:
    """The retries recorded for a Job: its `Retrying` history entries."""
    return 0 if entry is None else sum(1 for h in entry.running_histories if h.state == RETRYING)


def _awaiting_recreate(entry: JobStatus | None) -> bool:
    """Retried, and the re-created Job not seen yet: the last history entry is still `Retrying`."""
    return entry is not None and bool(entry.running_histories) and entry.running_histories[-1].state == RETRYING


def _record_retry(status: JobFlowStatus, retry: _Retry, now: str) -> None:
    """Close the Job's last history entry and open a `Retrying` one; count it in restartCount."""
    entry = _find_entry(status.job_status_list, meta.name(retry.job))
    if entry is None:  # pragma: no cover - the Job exists, so get_all_job_status made its entry
        return
    if entry.running_histories and not entry.running_histories[-1].end_timestamp:
        entry.running_histories[-1].end_timestamp = now
    entry.running_histories.append(JobRunningHistory(state=RETRYING, start_timestamp=now))
    entry.restart_count = vcjob.retry_count(retry.job) + _retries_done(entry)


def _merge_job_status(job_status_list: list[JobStatus], entry: JobStatus) -> None:
    """Replace the entry of the same name in place, or append it (upstream's merge; never pruned)."""
    for i, existing in enumerate(job_status_list):
        if existing.name == entry.name:
            job_status_list[i] = entry
            return
    job_status_list.append(entry)


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


def _is_refusal(err: ApiStatusError) -> bool:
    """A 4xx that the user can act on (quota, admission, validation), not a conflict or a throttle.

    Those get a Warning event at once; server errors and throttling are the API server's weather,
    retried quietly.
    """
    return 400 <= err.code < 500 and err.code not in (409, 429)
