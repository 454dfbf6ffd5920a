"""The sync handler's I/O: read one JobFlow's world from the caches, decide (action.py), act in order.

`handle_job_flow` is upstream's `handleJobFlow`: get the JobFlow from the lister, pick its state
(state/) and execute it; the state calls back `sync_job_flow` with its phase's rule. That reads the
`World` (plan.py), asks action.py for the `SyncPlan`, and carries it out here, the one place that
calls the API for a sync: deletes (retain policy) or creates in spec order, the Warnings, then the
status through the `StatusWriter`, then what follows a recorded retry.

Nothing read from an informer is ever modified: the status is built afresh and the PUT body is a
new dict (upstream writes into its cache; docs/deviations.md). Metrics count a transition only once
the status carrying it has been written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import structlog

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.apis import FlowRequest, Phase, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.apis.timeutil import format_duration
from jobflow_controller.jobflow import action, rerun
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.expectations import CreateExpectations
from jobflow_controller.jobflow.finished import DeletedJobs, recorded_completed
from jobflow_controller.jobflow.input_warnings import InputWarnings
from jobflow_controller.jobflow.lifecycle_actions import LifecycleActions
from jobflow_controller.jobflow.plan import Deploy, JobCreate, JobFlowSpec, SyncPlan, Warning, World
from jobflow_controller.jobflow.probe_judge import ProbeJudge
from jobflow_controller.jobflow.state import UpdateJobFlowStatusFn, new_state
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobflow.status_writer import StatusWriter
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError, from_status, is_refusal
from jobflow_controller.kube.informers import BY_CREATED_BY_JOB_FLOW, JobFlowLister, JobLister, JobTemplateLister
from jobflow_controller.kube.retry import DEFAULT_RETRY, retry_on_conflict
from jobflow_controller.validation.jobflow import validation_message
from workqueue import Clock

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]


class JobFlowSyncer:
    """Syncs one JobFlow per call; the listers, clients and extensions are handed in by the controller."""

    def __init__(
        self,
        clientset: Clientset,
        listers: tuple[JobFlowLister, JobTemplateLister, JobLister],
        recorder: Any,
        clock: Clock,
        metrics: JobFlowMetrics,
        deleted_jobs: DeletedJobs,
        create_expectations: CreateExpectations,
        probes: ProbeJudge,
        status_writer: StatusWriter,
        requeue_after: Callable[[str, str, float], None],
        forget: Callable[[str, str], None],
        patch_fields: PatchFields | None = None,
    ) -> None:
        self._clientset = clientset
        self._job_flow_lister, self._job_template_lister, self._job_lister = listers
        self._recorder = recorder
        self._clock = clock
        self._metrics = metrics
        self._deleted_jobs = deleted_jobs
        self._expectations = create_expectations
        self._probes = probes
        self._writer = status_writer
        self._requeue_after = requeue_after
        self._forget = forget
        self._patch_fields = patch_fields
        #: (namespace, name) -> (uid, generation) of the invalid JobFlows already given their Warning.
        self.invalid_warned: dict[tuple[str, str], tuple[str, int]] = {}
        #: (namespace, name) -> the missing targets last logged for that JobFlow.
        self._missing_logged: dict[tuple[str, str], frozenset[str]] = {}
        #: Ours (docs/lifecycle.md): Jobs terminated by Command, and the TTL.
        self.lifecycle = LifecycleActions(clientset, recorder, clock, status_writer, requeue_after)
        self.input_warnings = InputWarnings(recorder)  # docs/hostile-input.md

    def missing_logged(self) -> int:
        """JobFlows whose missing JobTemplates were logged (the memory gauge reads it)."""
        return len(self._missing_logged)

    def forget(self, namespace: str, name: str) -> None:
        """The JobFlow is gone: whether it was warned invalid, and what was logged of it."""
        self.invalid_warned.pop((namespace, name), None)
        self.input_warnings.forget(namespace, name)
        self._missing_logged.pop((namespace, name), None)

    # -- handleJobFlow --------------------------------------------------------------------------
    def handle_job_flow(self, req: FlowRequest) -> None:
        name = req.job_flow_name
        try:
            cached = self._job_flow_lister.job_flows(req.namespace).get(name)
        except NotFoundError:
            log.info(f"JobFlow {name} has been deleted.", jobflow=f"{req.namespace}/{name}")
            self._forget(req.namespace, name)
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
            self.execute(job_flow, rerun.plan_rerun(self.observe(job_flow), request))
            self._requeue_after(meta.namespace(job_flow), meta.name(job_flow), 0.0)
            return True
        return self.lifecycle.expire(job_flow)

    def _reported_invalid(self, req: FlowRequest, job_flow: Obj) -> bool:
        """A JobFlow that can never finish: say so once per generation; only its status is kept true.

        The update handler turns a spec change into a new request. Several syncs of one generation
        (a JobTemplate's add racing the JobFlow's, the resync) would otherwise each add a Warning,
        aggregated into a rising count. Patch and retry problems stop only their flow (deploy_job).
        """
        key = (req.namespace, req.job_flow_name)
        problem = validation_message(job_flow, patches=False, retries=False)
        if problem is None:
            self.invalid_warned.pop(key, None)
            return False
        mark = (meta.uid(job_flow), meta.generation(job_flow))
        if self.invalid_warned.get(key) != mark:
            self._recorder.event(job_flow, c.EVENT_WARNING, c.REASON_INVALID, problem)
            self.invalid_warned[key] = mark
        return True

    def _get_latest_job_flow(self, namespace: str, name: str) -> Obj | None:
        try:
            return self._clientset.job_flows(namespace).get(name)
        except NotFoundError:
            log.info(f"JobFlow {name} has been deleted.", jobflow=f"{namespace}/{name}")
            self._forget(namespace, name)
            return None

    # -- syncJobFlow ----------------------------------------------------------------------------
    def sync_job_flow(self, job_flow: Obj, update_state_fn: UpdateJobFlowStatusFn) -> None:
        """Upstream's `syncJobFlow`: the state machine's callback, decided by action.py."""
        self.execute(job_flow, action.sync_job_flow(self.observe(job_flow), update_state_fn))

    def sync_job_flow_status(self, job_flow: Obj, update_state_fn: UpdateJobFlowStatusFn) -> None:
        """The state machine's callback for an invalid JobFlow: its status is written, nothing else."""
        self.execute(job_flow, action.sync_job_flow_status(self.observe(job_flow), update_state_fn))

    def observe(self, job_flow: Obj) -> World:
        """What the sync of `job_flow` sees: its Jobs, the Jobs and templates its flows name, the time."""
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        spec = JobFlowSpec.of(job_flow, self._patch_fields)
        flow_names = spec.template_names() | {t for f in spec.flows for t in f.targets or ()}
        jobs, templates = self._job_lister.jobs(ns), self._job_template_lister.job_templates(ns)
        named_jobs = _present(jobs.get, {jf.job_name(name, f) for f in flow_names})
        if self._deleted_jobs:
            # What the stored status records needs no memory any more (it survives a restart too).
            self._deleted_jobs.forget_recorded(job_flow, self._writer.stored_status(job_flow))
        deleted = self._deleted_jobs.recall(job_flow)
        done = recorded_completed(job_flow) | set(deleted)
        expected = frozenset(
            n
            for n in (jf.job_name(name, f) for f in spec.template_names())
            if n not in named_jobs and n not in done and self._expectations.pending(ns, n)
        )
        world = World(
            job_flow=job_flow,
            spec=spec,
            jobs=tuple(self.get_all_jobs_created_by_job_flow(job_flow)),
            named_jobs=named_jobs,
            templates=_present(templates.get, spec.template_names()),
            deleted_completed=deleted,
            expected=expected,
            probes={},
            now=self._clock.wall(),
        )
        if not any(f.probe is not None for f in spec.flows):
            return world
        # Ours (docs/probe.md): the probes of the flows deploy_job will judge, checked before it.
        probes = self._probes.judge_probes(job_flow, action.flows_to_judge(world), named_jobs)
        return replace(world, probes=probes)

    def get_all_jobs_created_by_job_flow(self, job_flow: Obj) -> list[Obj]:
        """The Jobs this JobFlow controls (by uid), in creation order.

        Upstream lists the namespace with `volcano.sh/createdByJobFlow in (<ns>.<name>)`; the
        label-value index gives the same Jobs without a scan. Ours keeps only the Jobs this JobFlow
        controls: the label alone also matches an earlier JobFlow's of the same name, and anyone
        can set it. Upstream's order is a map's (random); creation order keeps the lists stable.
        """
        ns = meta.namespace(job_flow)
        value = meta.generate_object_string(ns, meta.name(job_flow))
        jobs = [
            j
            for j in self._job_lister.by_label_index(BY_CREATED_BY_JOB_FLOW, value, ns)
            if meta.is_controlled_by(j, job_flow)
        ]
        return sorted(jobs, key=lambda j: (meta.creation_timestamp(j) or "", meta.name(j)))

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
        replaced = self._writer.write(job_flow, plan.status_body(), at_once=bool(plan.retries) or plan.write_at_once)
        if replaced is not None:
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
            self._requeue_after(ns, name, deploy.requeue_after)
        if deploy.more:
            self._requeue_after(ns, name, 0.0)
        first_err: Exception | None = None
        for step in deploy.steps:
            if isinstance(step, Warning):
                self._warn(job_flow, step)
                continue
            try:
                self.create_job(job_flow, step)
            except Exception as err:  # noqa: BLE001 - the other flows still get their turn
                first_err = first_err or err
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
        self._expectations.created(ns, job_name)
        self._recorder.eventf(job_flow, c.EVENT_NORMAL, c.REASON_CREATED, c.MESSAGE_CREATED, job_name)

    def _check_existing_job(self, job_flow: Obj, job_name: str) -> None:
        try:
            existing = self._clientset.jobs(meta.namespace(job_flow)).get(job_name)
        except NotFoundError:
            return  # deleted again already; the Job delete event brings the flow back
        if not meta.is_controlled_by(existing, job_flow):
            self._warn(job_flow, Warning(c.REASON_RESOURCE_EXISTS, c.MESSAGE_RESOURCE_EXISTS, (job_name,)))

    def _cache_is_behind(self, job_flow: Obj) -> bool:
        """Whether the API server holds a newer JobFlow than `job_flow` (one GET per such create)."""
        latest = self._get_latest_job_flow(meta.namespace(job_flow), meta.name(job_flow))
        return latest is not None and meta.resource_version(latest) != meta.resource_version(job_flow)

    def _warn(self, job_flow: Obj, warning: Warning) -> None:
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


def _present(get: Callable[[str], Obj], names: set[str]) -> dict[str, Obj]:
    """{name: get(name)} for each name the lister holds (the cache's objects, never copied)."""
    out: dict[str, Obj] = {}
    for name in sorted(names):
        try:
            out[name] = get(name)
        except NotFoundError:
            continue
    return out
