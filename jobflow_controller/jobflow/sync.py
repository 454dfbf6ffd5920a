"""The sync handler's I/O: read one JobFlow's world from the caches, decide (action.py), act in order.

`handle_job_flow` is upstream's `handleJobFlow`: get the JobFlow from the lister, pick its state
(state/) and execute it; the state calls back `sync_job_flow` with its phase's rule. That observes the
`World` (observe.py), asks action.py for the `SyncPlan`, and carries it out here, the one place that
calls the API for a sync: deletes (retain policy) or creates in spec order, the Warnings, then the
status through the `StatusWriter`, then what follows a recorded retry.

Nothing read from an informer is ever modified: the status is built afresh and the PUT body is a
new dict (upstream writes into its cache; docs/deviations.md). Metrics count a transition only once
the status carrying it has been written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.apis import FlowRequest, Phase, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.timeutil import format_duration
from jobflow_controller.jobflow import action, fairness, rerun
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.input_warnings import InputWarnings
from jobflow_controller.jobflow.job_flow_queue import JobFlowQueue
from jobflow_controller.jobflow.lifecycle_actions import LifecycleActions
from jobflow_controller.jobflow.memories import JobFlowMemories
from jobflow_controller.jobflow.observe import JobFlowObserver
from jobflow_controller.jobflow.owned_jobs import jobs_created_by_job_flow
from jobflow_controller.jobflow.plan import Deploy, JobCreate, SyncPlan, WarningEvent, World, resource_exists
from jobflow_controller.jobflow.state import UpdateJobFlowStatusFn, new_state
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobflow.status_writer import StatusWriter, WriteResult
from jobflow_controller.jobflow.template_ref import TemplateRefs
from jobflow_controller.jobflow.validated import ValidationMemory
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.conflict import DEFAULT_RETRY, retry_on_conflict
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError, from_status, is_refusal

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]


class JobFlowSyncer:
    """Syncs one JobFlow per call: observe (observe.py), plan (action.py), execute (here)."""

    def __init__(
        self,
        clientset: Clientset,
        recorder: Any,
        queue: JobFlowQueue,
        observer: JobFlowObserver,
        status_writer: StatusWriter,
        metrics: JobFlowMetrics,
        memories: JobFlowMemories,
        templates: TemplateRefs | None = None,
    ) -> None:
        self._clientset = clientset
        self._templates = templates  # docs/templates.md
        self._recorder = recorder
        self._queue = queue
        self._observer = observer
        self._job_flow_lister = observer.job_flow_lister
        self._writer = status_writer
        self._metrics = metrics
        self._memories = memories
        #: Each JobFlow's validation, once per (uid, generation), and whether its Warning was given.
        self.validated = ValidationMemory()
        #: (namespace, name) -> the missing targets last logged for that JobFlow.
        self._missing_logged: dict[tuple[str, str], frozenset[str]] = {}
        #: Ours (docs/lifecycle.md): Jobs terminated by Command, and the TTL.
        self.lifecycle = LifecycleActions(clientset, recorder, queue, status_writer)
        self.input_warnings = InputWarnings(recorder)  # docs/hostile-input.md
        for memory in (self, self.validated, self.lifecycle, self.input_warnings):
            memories.register(memory)

    # -- memories.py ----------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        """The JobFlow is gone: what was logged of it."""
        self._missing_logged.pop((namespace, name), None)

    def memory_sizes(self) -> dict[str, int]:
        return {"missing_templates_logged": len(self._missing_logged)}

    # -- handleJobFlow --------------------------------------------------------------------------
    def handle_job_flow(self, req: FlowRequest) -> None:
        name = req.job_flow_name
        try:
            cached = self._job_flow_lister.job_flows(req.namespace).get(name)
        except NotFoundError:
            log.info(f"JobFlow {name} has been deleted.", jobflow=f"{req.namespace}/{name}")
            self._memories.forget(req.namespace, name)
            return
        except Exception as err:
            raise RuntimeError(f"get jobflow {name} failed for {err}") from err
        # Our own last status write, while the cache has not shown it yet (own_writes.py).
        cached = self._writer.newest(cached)

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

    def _handle_job_flow_once(self, req: FlowRequest, job_flow: Obj) -> None:
        name = req.job_flow_name
        # A status computed and not written yet is where this sync starts (own_writes.py).
        job_flow = self._writer.with_pending(job_flow)
        # A run from a template is planned from the spec it was fixed to (template_ref.py).
        resolved = job_flow if self._templates is None else self._templates.effective(job_flow)
        if resolved is None:
            return
        job_flow = resolved
        invalid = self._reported_invalid(req, job_flow)
        if not invalid and self._lifecycle_first(job_flow):
            return
        state = new_state(job_flow, self.sync_job_flow_status if invalid else self.sync_job_flow)
        if state is None:
            raise RuntimeError(f"jobflow {name} state {{{jf.phase(job_flow)}}} is invalid")
        try:
            state.execute(req.action)
        except Exception as err:
            raise RuntimeError(
                f"sync jobflow {name} failed for {err}, event is {req.event}, action is {req.action}"
            ) from err

    def _lifecycle_first(self, job_flow: Obj) -> bool:
        """Ours (docs/lifecycle.md), in any phase: a re-run asked for, or a finished JobFlow's TTL.

        True when that was the whole sync (the re-run's status is written and the JobFlow queued
        again at once; or the JobFlow was deleted).
        """
        request = self.input_warnings.pending_retry_request(job_flow)
        if request is not None:
            self.execute(job_flow, rerun.plan_rerun(self.observe_and_check(job_flow), request))
            self._queue.react(meta.namespace(job_flow), meta.name(job_flow))
            return True
        return self.lifecycle.expire(job_flow)

    def _reported_invalid(self, req: FlowRequest, job_flow: Obj) -> bool:
        """A JobFlow that can never finish: say so once per generation; only its status is kept true.

        The update handler turns a spec change into a new request. Several syncs of one generation
        (a JobTemplate's add racing the JobFlow's, the resync) would otherwise each add a Warning,
        aggregated into a rising count. Patch and retry problems stop only their flow (deploy_job).
        """
        problem = self.validated.problem(job_flow)
        if problem is None:
            return False
        if self.validated.first_warning(job_flow):
            self._recorder.event(job_flow, c.EVENT_WARNING, c.REASON_INVALID, problem)
        return True

    def _get_latest_job_flow(self, namespace: str, name: str) -> Obj | None:
        try:
            return self._clientset.job_flows(namespace).get(name)
        except NotFoundError:
            log.info(f"JobFlow {name} has been deleted.", jobflow=f"{namespace}/{name}")
            self._memories.forget(namespace, name)
            return None

    # -- syncJobFlow ----------------------------------------------------------------------------
    def sync_job_flow(self, job_flow: Obj, update_state_fn: UpdateJobFlowStatusFn) -> None:
        """Upstream's `syncJobFlow`: the state machine's callback, decided by action.py."""
        world = self.observe_and_check(job_flow)
        plan = action.sync_job_flow(world, update_state_fn)
        self.execute(job_flow, plan)

    def sync_job_flow_status(self, job_flow: Obj, update_state_fn: UpdateJobFlowStatusFn) -> None:
        """The state machine's callback for an invalid JobFlow: its status is written, nothing else."""
        self.execute(job_flow, action.sync_job_flow_status(self.observe_and_check(job_flow), update_state_fn))

    def observe(self, job_flow: Obj) -> World:
        """The sync's first step (observe.py): what it sees, read from the caches."""
        return self._observer.observe(job_flow)

    def observe_and_check(self, job_flow: Obj) -> World:
        """`observe`, the results of the Jobs that ended, then the probe checks of the flows `deploy_job`
        will judge (observe.py)."""
        return self._observer.check_probes(self._observer.read_results(self._observer.observe(job_flow)))

    def get_all_jobs_created_by_job_flow(self, job_flow: Obj) -> list[Obj]:
        """The Jobs this JobFlow controls (by uid), in creation order (owned_jobs.py)."""
        return jobs_created_by_job_flow(self._observer.job_lister, job_flow)

    # -- the plan, carried out in order ---------------------------------------------------------
    def execute(self, job_flow: Obj, plan: SyncPlan) -> None:
        """Deletes or creates, the Warnings, the status write, then what follows a recorded retry.

        Upstream returns at the first failed create, writing no status at all; we go on so that
        the other flows' progress is still recorded, and raise the first error afterwards.
        """
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        if plan.retain_deletes is not None:
            self.delete_all_jobs_created_by_job_flow(job_flow, plan.retain_deletes)
            return
        deploy_err = self.deploy(job_flow, plan.deploy)
        if plan.terminations:
            deploy_err = self.lifecycle.terminate(job_flow, plan.terminations) or deploy_err
        if plan.retry_warning is not None:
            self.input_warnings.warn(job_flow, plan.retry_warning)
        assert plan.status is not None
        # A status recording a retry is written at once: the Job is deleted only after it.
        replaced = str((self._writer.stored_status(job_flow).get("state") or {}).get("phase") or "")
        written = self._writer.write(job_flow, plan.status_body(), at_once=bool(plan.retries) or plan.write_at_once)
        if written is WriteResult.WRITTEN:
            self._count_transition(ns, replaced, plan.status.phase)
        if plan.size_warning is not None:
            self._warn(job_flow, plan.size_warning)
        for notice in plan.notices:
            kind = c.EVENT_WARNING if notice.warning else c.EVENT_NORMAL
            self._recorder.eventf(job_flow, kind, notice.reason, notice.message_fmt, *notice.args)
        # Only now that the status records each retry: a restart cannot lose or repeat one.
        for retry in plan.retries:
            self._metrics.update_job_flow_job_retry(ns)
            self._recorder.eventf(
                job_flow,
                c.EVENT_NORMAL,
                c.REASON_RETRY_JOB,
                c.MESSAGE_RETRY_JOB,
                meta.name(retry.job),
                vcjob.phase(retry.job),
                format_duration(retry.backoff),
                retry.attempt,
                retry.max_retries,
            )
        self._delete_retried_jobs(ns, plan.retry_deletes)
        if deploy_err is not None:
            log.error(f"Failed to create jobs of JobFlow {ns}/{name}: {deploy_err}", jobflow=f"{ns}/{name}")
            raise deploy_err

    def deploy(self, job_flow: Obj, deploy: Deploy) -> Exception | None:
        """`deploy_job`'s creates and Warnings in spec order; the first error, once every flow was tried."""
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        # Upstream logs each missing target on every sync; ours once, when it starts to be missing.
        missing = frozenset(deploy.missing_targets)
        logged = self._missing_logged.get((ns, name), frozenset())
        for target in sorted(missing - logged):
            log.info(f"No {target} Job found！", jobflow=f"{ns}/{name}")  # noqa: RUF001 - upstream's
        if missing:
            self._missing_logged[(ns, name)] = missing
        else:
            self._missing_logged.pop((ns, name), None)
        if deploy.requeue_after is not None:
            self._queue.react(ns, name, deploy.requeue_after)
        clock = self._queue.clock
        started, created, gave_way = clock.now(), 0, False
        first_err: Exception | None = None
        for step in deploy.steps:
            if isinstance(step, WarningEvent):
                self._warn(job_flow, step)
                continue
            # The sync's slice (fairness.py): the rest in the next sync, behind the syncs that wait.
            gave_way = gave_way or fairness.gives_way(created, clock.since(started), self._queue.others_waiting())
            if gave_way:
                continue
            created += 1
            try:
                self.create_job(job_flow, step)
            except Exception as err:  # noqa: BLE001 - the other flows still get their turn
                first_err = first_err or err
        if gave_way:
            self._queue.add(ns, name)  # the default lane: behind the syncs it gave way to
        elif deploy.more:
            self._queue.react(ns, name)
        return first_err

    def create_job(self, job_flow: Obj, create: JobCreate) -> None:
        ns, job_name = meta.namespace(job_flow), create.job_name
        if create.fresh_read and self._cache_is_behind(job_flow):
            # The retries done, and whether one waits for its backoff, are read from this status: a
            # cached copy behind our own last write (one recording a retry) would re-create the Job
            # too early, under the wrong attempt. Sync again from the API server's copy.
            raise from_status(409, "Conflict", f"jobflow {meta.name(job_flow)}: cache behind, not creating {job_name}")
        if create.error is not None:
            raise create.error
        assert create.body is not None
        try:
            self._clientset.jobs(ns).create(create.body)
        except AlreadyExistsError:
            # The cache had not seen it yet. Upstream stops here; we look, because a Job someone
            # else made under our name would otherwise go unmentioned while the flow waits forever.
            self._check_existing_job(job_flow, job_name)
            return
        except ApiStatusError as err:
            if is_refusal(err):
                self._recorder.eventf(
                    job_flow, c.EVENT_WARNING, c.REASON_FAILED_CREATE, c.MESSAGE_FAILED_CREATE, job_name, err
                )
            raise
        self._observer.create_expectations.created(ns, job_name)
        self._recorder.eventf(job_flow, c.EVENT_NORMAL, c.REASON_CREATED, c.MESSAGE_CREATED, job_name)

    def _check_existing_job(self, job_flow: Obj, job_name: str) -> None:
        try:
            existing = self._clientset.jobs(meta.namespace(job_flow)).get(job_name)
        except NotFoundError:
            return  # deleted again already; the Job delete event brings the flow back
        if not meta.is_controlled_by(existing, job_flow):
            self._warn(job_flow, resource_exists(job_name))

    def _cache_is_behind(self, job_flow: Obj) -> bool:
        """Whether the API server holds a newer JobFlow than `job_flow` (one GET per such create)."""
        latest = self._get_latest_job_flow(meta.namespace(job_flow), meta.name(job_flow))
        return latest is not None and meta.resource_version(latest) != meta.resource_version(job_flow)

    def _warn(self, job_flow: Obj, warning: WarningEvent) -> None:
        """The Warning event (the correlator dedups repeats) and its log line."""
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        log.warning(f"{warning.reason}: {warning.message_fmt % warning.args}", jobflow=f"{ns}/{name}")
        self._recorder.eventf(job_flow, c.EVENT_WARNING, warning.reason, warning.message_fmt, *warning.args)

    def _count_transition(self, ns: str, old: str, new: str) -> None:
        if new == old:
            return
        if new == Phase.SUCCEED:
            self._metrics.update_job_flow_succeed(ns)
        elif new == Phase.FAILED:
            self._metrics.update_job_flow_failed(ns)

    def delete_all_jobs_created_by_job_flow(self, job_flow: Obj, jobs: list[Obj]) -> None:
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        for job in jobs:
            try:
                self._clientset.jobs(ns).delete(meta.name(job), uid=meta.uid(job) or None)
            except (NotFoundError, ConflictError):
                continue  # gone (the cache lagged), or the name holds another Job now: never deleted
            except Exception as err:
                log.error(f"Failed to delete jobs of JobFlow {ns}/{name}: {err}", jobflow=f"{ns}/{name}")
                raise

    def _delete_retried_jobs(self, ns: str, jobs: list[Obj]) -> None:
        """Delete (by uid) the Jobs the status records as retried that the cache still holds."""
        for job in jobs:
            try:
                self._clientset.jobs(ns).delete(meta.name(job), uid=meta.uid(job) or None)
            except (NotFoundError, ConflictError):
                # Gone already (its delete event brings the JobFlow back), or the uid precondition
                # failed: the name holds the re-created Job now, which is never deleted.
                continue
