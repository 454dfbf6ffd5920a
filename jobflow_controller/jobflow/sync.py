"""The sync handler's I/O: read one JobFlow's world from the caches, decide (action.py), act in order.

`handle_job_flow` is upstream's `handleJobFlow`: get the JobFlow from the lister, pick its state (state/) and
execute it; the state calls back `sync_job_flow` with its phase's rule. That observes the `World` (observe.py),
asks action.py for the `SyncPlan`, and carries it out here, the one place that calls the API for a sync:
deletes (retain policy) or creates in spec order, the Warnings, the status (`StatusWriter`), then what follows
a recorded retry. Nothing read from an informer is ever modified (docs/deviations.md); metrics count a
transition only once the status carrying it has been written.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import structlog

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.apis import FlowRequest, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.jobflow import Extension, extensions
from jobflow_controller.apis.meta import format_duration
from jobflow_controller.jobflow import action, fairness, rerun
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.flow_policy import FlowPolicy
from jobflow_controller.jobflow.input_warnings import InputWarnings
from jobflow_controller.jobflow.lifecycle_actions import LifecycleActions
from jobflow_controller.jobflow.memories import JobFlowMemories
from jobflow_controller.jobflow.observe import JobFlowObserver
from jobflow_controller.jobflow.policies import choose_policy
from jobflow_controller.jobflow.state import State, UpdateJobFlowStatusFn, new_state
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobflow.status_writer import StatusWriter, fit_status
from jobflow_controller.jobflow.validated import ValidationMemory
from jobflow_controller.jobflow.world import (
    Deploy,
    JobCreate,
    SyncPlan,
    WarningEvent,
    World,
    resource_exists,
)
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.conflict import DEFAULT_RETRY, retry_on_conflict
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError, is_conflict, is_refusal

if TYPE_CHECKING:
    from jobflow_controller.jobflow.controller import JobFlowQueue

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]
#: The extensions with a step before the state's (`_lifecycle_first`): a re-run, a finished JobFlow's TTL.
_FIRST = frozenset({Extension.RERUN, Extension.LIFECYCLE})


class StaleJobFlow(ConflictError):
    """The JobFlow a sync started from is older than the API server's (a GET before a create that reads
    the status found it): no API error, but a conflict in the optimistic-concurrency sense, so
    `handle_job_flow` syncs again from the API server's copy, as after a 409 on the status write."""

    def __init__(self, message: str) -> None:
        super().__init__(409, "Conflict", message)


def _sync_failed(req: FlowRequest, err: Exception) -> RuntimeError:
    """Upstream's wrap of a failed state execution (the cause kept: a conflict is still told apart)."""
    name = req.job_flow_name
    return RuntimeError(f"sync jobflow {name} failed for {err}, event is {req.event}, action is {req.action}")


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
    ) -> None:
        self._clientset = clientset
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
        """Upstream's `handleJobFlow`: the JobFlow from the lister, its phase's state, executed.

        RetryOnConflict, unrolled: a 409 on the status write means another writer got in first. This
        first attempt works on the cached object; each retry (`_retry_after_conflict`) re-reads it from
        the API server and syncs again, so the status written is always computed from the object it
        replaces. Upstream returns the 409 and burns one of --max-requeue-num's retries on it.
        """
        name = req.job_flow_name
        try:
            cached = self._job_flow_lister.job_flows(req.namespace).get(name)
        except NotFoundError:
            log.info(f"JobFlow {name} has been deleted.", jobflow=f"{req.namespace}/{name}")
            self._memories.forget(req.namespace, name)
            return
        except Exception as err:
            raise RuntimeError(f"get jobflow {name} failed for {err}") from err
        # Our own last status write, while the cache has not shown it yet (status_writer.py `OwnWrites`).
        try:
            state = self._state_for(req, self._writer.newest(cached))
            if state is None:
                return
            try:
                state.execute(req.action)
            except Exception as err:
                raise _sync_failed(req, err) from err
        except Exception as err:
            if not is_conflict(err):
                raise
            self._retry_after_conflict(req)

    def _retry_after_conflict(self, req: FlowRequest) -> None:
        """`retry.RetryOnConflict`'s attempts after the first (client-go's DefaultRetry), each from the
        API server's copy of the JobFlow."""
        time.sleep(DEFAULT_RETRY.delay(1))

        def attempt() -> None:
            job_flow = self._get_latest_job_flow(req.namespace, req.job_flow_name)
            state = self._state_for(req, job_flow) if job_flow is not None else None
            if state is None:
                return
            try:
                state.execute(req.action)
            except Exception as err:
                raise _sync_failed(req, err) from err

        retry_on_conflict(replace(DEFAULT_RETRY, steps=DEFAULT_RETRY.steps - 1), attempt)

    def _state_for(self, req: FlowRequest, job_flow: Obj) -> State | None:
        """The state to execute; None when the sync is done (a run waiting: template_ref.py; `_lifecycle_first`).
        A step before the state's runs only for a JobFlow that uses its extension (apis/jobflow.py `extensions`)."""
        job_flow = self._writer.with_pending(job_flow)  # status_writer.py `OwnWrites`
        uses = extensions(job_flow)
        if Extension.TEMPLATE in uses:  # template_ref.py: a run is planned with the spec it was fixed to
            resolved = self._observer.effective(job_flow)
            if resolved is None:
                return None
            job_flow, uses = resolved, extensions(resolved)
        invalid = self._reported_invalid(req, job_flow)
        if not invalid and uses & _FIRST and self._lifecycle_first(job_flow, uses):
            return None
        state = new_state(job_flow, self.sync_job_flow_status if invalid else self.sync_job_flow)
        if state is None:
            raise RuntimeError(f"jobflow {req.job_flow_name} state {{{jf.phase(job_flow)}}} is invalid")
        return state

    def _lifecycle_first(self, job_flow: Obj, uses: frozenset[Extension]) -> bool:
        """Ours (docs/lifecycle.md), in any phase: a re-run asked for, or a finished JobFlow's TTL. True
        when that was the whole sync (the re-run's status written, the JobFlow queued again; or deleted)."""
        request = self.input_warnings.pending_retry_request(job_flow) if Extension.RERUN in uses else None
        if request is not None:
            world, policy = self.observe(job_flow, rerun=True)
            self.execute(job_flow, rerun.plan_rerun(world, request, policy))
            self._queue.react(meta.namespace(job_flow), meta.name(job_flow))
            return True
        return Extension.LIFECYCLE in uses and self.lifecycle.expire(job_flow)

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
        world, policy = self.observe(job_flow)
        plan = fit_status(action.sync_job_flow(world, update_state_fn, policy), job_flow)
        # `execute`, unrolled so that the status write is this function's own call.
        if plan.retain_deletes is not None:
            self.delete_all_jobs_created_by_job_flow(job_flow, plan.retain_deletes)
            return
        deploy_err, replaced = self._before_write(job_flow, plan)
        written = self._writer.write(job_flow, plan.status_body(), at_once=plan.writes_at_once)
        self._after_write(job_flow, plan, written, replaced, deploy_err)

    def sync_job_flow_status(self, job_flow: Obj, update_state_fn: UpdateJobFlowStatusFn) -> None:
        """The state machine's callback for an invalid JobFlow: its status is written, nothing else."""
        world, policy = self.observe(job_flow, invalid=True)
        self.execute(job_flow, fit_status(action.sync_job_flow_status(world, update_state_fn, policy), job_flow))

    def observe(self, job_flow: Obj, *, invalid: bool = False, rerun: bool = False) -> tuple[World, FlowPolicy]:
        """The sync's world and its one flow policy (policies.py), chosen once the results are read and
        asked by every later step: which probe flows to check, then the plan (or the re-run's)."""
        world = self._observer.read_results(self._observer.observe(job_flow))
        policy = choose_policy(world, invalid=invalid, rerun=rerun)
        world = self._observer.check_probes(world, policy)
        policy.judged(world)
        return world, policy

    # -- the plan, carried out in order ---------------------------------------------------------
    def execute(self, job_flow: Obj, plan: SyncPlan) -> None:
        """Deletes or creates, the Warnings, the status write, then what follows a recorded retry.

        Upstream returns at the first failed create, writing no status at all; we go on so that
        the other flows' progress is still recorded, and raise the first error afterwards.
        """
        if plan.retain_deletes is not None:
            self.delete_all_jobs_created_by_job_flow(job_flow, plan.retain_deletes)
            return
        deploy_err, replaced = self._before_write(job_flow, plan)
        written = self._writer.write(job_flow, plan.status_body(), at_once=plan.writes_at_once)
        self._after_write(job_flow, plan, written, replaced, deploy_err)

    def _before_write(self, job_flow: Obj, plan: SyncPlan) -> tuple[Exception | None, str]:
        """The creates (or their first error), the terminations and the retry Warning; and the phase the
        status about to be written replaces."""
        deploy_err = self.deploy(job_flow, plan.deploy)
        if plan.terminations:
            deploy_err = self.lifecycle.terminate(job_flow, plan.terminations) or deploy_err
        if plan.retry_warning is not None:
            self.input_warnings.warn(job_flow, plan.retry_warning)
        for cause, warning in plan.once_warnings:
            self.input_warnings.warn(job_flow, warning, cause)
        assert plan.status is not None
        return deploy_err, str((self._writer.stored_status(job_flow).get("state") or {}).get("phase") or "")

    def _after_write(
        self, job_flow: Obj, plan: SyncPlan, written: bool, replaced: str, deploy_err: Exception | None
    ) -> None:
        """The metrics of a transition written, the events, then the retried Jobs' deletes."""
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        assert plan.status is not None
        if written:
            self._metrics.count_transition(ns, replaced, plan.status.phase)
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
                if step.fresh_read and self._cache_is_behind(job_flow):
                    # The retries done, and whether one waits for its backoff, are read from this
                    # status: a cached copy behind our own last write (one recording a retry) would
                    # re-create the Job too early, under the wrong attempt.
                    raise StaleJobFlow(f"jobflow {name}: cache behind, not creating {step.job_name}")
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
        self._observer.expect_created(ns, job_name)
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
        """Delete (by uid) the Jobs the status records as retried that the cache still holds. One gone
        already (its delete event brings the JobFlow back), or whose uid precondition fails (the name
        holds the re-created Job now, which is never deleted), is left alone."""
        for job in jobs:
            with contextlib.suppress(NotFoundError, ConflictError):
                self._clientset.jobs(ns).delete(meta.name(job), uid=meta.uid(job) or None)
