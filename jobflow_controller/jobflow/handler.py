"""Event handlers: which informer events make a JobFlow worth syncing (jobflow_controller_handler.go).

Upstream's filters are kept exactly: a JobFlow add; a JobFlow update only when it has Succeeded with
`jobRetainPolicy: delete` (so the Jobs get deleted); a Job update only for a Job a JobFlow controls.
The triggers that are ours are rows of docs/deviations.md: a JobFlow whose spec changed
(`metadata.generation`) or whose uid changed (re-created under the same name), a Job deleted, a
JobTemplate created (it resumes flows waiting for it), a JobTemplate's spec changed (it may fix a
flow's `patch.jobSpec`, which upstream ignores; only flows with a patch are resumed), and the
resync of unfinished JobFlows. The JobFlow delete handler enqueues nothing: it forgets what
observe.py `DeletedJobs` remembered for that JobFlow.

A Job add is no trigger either: it only tells the controller that a create of its own has arrived
(expectations.py).

Every trigger also says how urgent its sync is (urgency.py): a Job update that can only change
the status goes behind the ones that may create a Job, and is left to the status writer's pacing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import structlog

from informers import DeletedFinalStateUnknown, ResourceEventHandlerDetailedFuncs, ResourceEventHandlerFuncs
from informers.errors import NotFoundError
from jobflow_controller.apis import (
    FINISHED_PHASES,
    FLOW_GROUP_VERSION,
    JOB_FLOW_KIND,
    UNFINISHED_PHASES,
    VOLCANO,
    FlowRequest,
    JobPhase,
    Phase,
    RetainPolicy,
    meta,
)
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.jobflowtemplate import effective_job_flow
from jobflow_controller.apis.lifecycle import Lifecycle, pending_retry_request, retry_request_to_sync
from jobflow_controller.apis.params import ParamsSpec, flow_job_names
from jobflow_controller.apis.rules import template_names
from jobflow_controller.jobflow import urgency
from jobflow_controller.jobflow.expectations import CreateExpectations
from jobflow_controller.jobflow.memories import JobFlowMemories
from jobflow_controller.jobflow.observe import DeletedJobs, jobs_created_by_job_flow
from jobflow_controller.jobflow.status_writer import StatusWriter
from jobflow_controller.kube.informers import JobFlowLister, JobLister

if TYPE_CHECKING:
    from jobflow_controller.jobflow.controller import JobFlowQueue

log = structlog.get_logger(__name__)


def is_controlled_by(obj: Mapping[str, Any], api_version: str, kind: str) -> bool:
    """`metav1.IsControlledBy`-style check on the controlling owner's group-version and kind."""
    ref = meta.get_controller_of(obj)
    return ref is not None and ref.get("apiVersion") == api_version and ref.get("kind") == kind


def get_job_flow_name_by_job(job: Mapping[str, Any]) -> str:
    """The first JobFlow owner whose apiVersion mentions volcano (controller or not), else ""."""
    for ref in meta.owner_references(job):
        if ref.get("kind") == JOB_FLOW_KIND and VOLCANO in str(ref.get("apiVersion") or ""):
            return str(ref.get("name") or "")
    return ""


#: Job phases whose arrival can change nothing but the JobFlow's status: no dependent becomes due,
#: no phase rule fires.
_STATUS_ONLY_PHASES = frozenset({"", JobPhase.PENDING, JobPhase.RUNNING})


class JobFlowEventHandlers:
    """The informer callbacks of the JobFlow controller; what they may touch is handed in."""

    def __init__(
        self,
        queue: JobFlowQueue,
        listers: tuple[JobFlowLister, JobLister],
        status_writer: StatusWriter,
        deleted_jobs: DeletedJobs,
        create_expectations: CreateExpectations,
        memories: JobFlowMemories,
    ) -> None:
        self.queue = queue
        self.job_flow_lister, self.job_lister = listers
        self.status_writer = status_writer
        self.deleted_jobs = deleted_jobs
        self.create_expectations = create_expectations
        self.memories = memories

    def has_jobs_left(self, job_flow: Mapping[str, Any]) -> bool:
        """Whether the cache still holds a Job this JobFlow controls (retain policy `delete`)."""
        return bool(jobs_created_by_job_flow(self.job_lister, job_flow))

    def job_flow_funcs(self) -> ResourceEventHandlerFuncs:
        # Upstream registers no JobFlow delete handler; ours only forgets the deleted JobFlow's
        # Completed Jobs seen deleted (observe.py `DeletedJobs`) and enqueues nothing.
        return ResourceEventHandlerFuncs(
            add_func=self.add_job_flow, update_func=self.update_job_flow, delete_func=self.delete_job_flow
        )

    def job_template_funcs(self) -> ResourceEventHandlerDetailedFuncs:
        # Upstream registers no JobTemplate handler; ours resumes flows waiting for a template, and
        # flows whose patch a template edit may have made applicable (docs/patch.md). Detailed: the
        # add skips the initial list, which only `is_in_initial_list` tells.
        return ResourceEventHandlerDetailedFuncs(add_func=self.add_job_template, update_func=self.update_job_template)

    def job_funcs(self) -> ResourceEventHandlerFuncs:
        # Upstream watches Job updates only; ours also sees deletions (a Job deleted by hand), and
        # adds only to learn that our own creates arrived (expectations.py; an add syncs nothing).
        return ResourceEventHandlerFuncs(
            add_func=self.add_job, update_func=self.update_job, delete_func=self.delete_job
        )

    def enqueue_job_flow(self, req: FlowRequest) -> None:
        self.queue.add_request(req)

    def add_job_flow(self, obj: Any, is_in_initial_list: bool = False) -> None:
        if not isinstance(obj, (dict, Mapping)):
            log.error(f"Failed to convert {obj!r} to jobFlow")
            return
        self.enqueue_job_flow(self.queue.request_for(meta.namespace(obj), meta.name(obj)))

    def update_job_flow(self, old: Any, new: Any) -> None:
        if not isinstance(old, (dict, Mapping)) or not isinstance(new, (dict, Mapping)):
            log.error("Failed to convert to jobFlow", old=repr(old)[:200], new=repr(new)[:200])
            return
        self.status_writer.observed(new)
        succeeded_for_deletion = jf.phase(new) == Phase.SUCCEED and jf.job_retain_policy(new) == RetainPolicy.DELETE
        if meta.resource_version(new) == meta.resource_version(old):
            # A resync replay (ours, every --resync-period; upstream's resync is 0): sync again every
            # JobFlow that still has work to do, so a request dropped after --max-requeue-num or lost
            # to an outage cannot strand it. A finished flow costs nothing here.
            if (
                jf.phase(new) in UNFINISHED_PHASES
                or (succeeded_for_deletion and self.has_jobs_left(new))
                or lifecycle_work_left(new)
            ):
                self.enqueue_job_flow(self.queue.request_for(meta.namespace(new), meta.name(new)))
            return
        # Setting `deletionTimestamp` bumps the generation too; a deletion is no spec change (upstream
        # does not sync it), and a JobFlow being deleted creates nothing anyway (action.deploy_job).
        spec_changed = meta.metadata(new).get("generation") != meta.metadata(old).get("generation") and not (
            meta.metadata(new).get("deletionTimestamp") and not meta.metadata(old).get("deletionTimestamp")
        )
        # A delete and re-create under the same name that the watch missed (a relist after a
        # compaction, say) arrives as an update whose uid differs: it is a new JobFlow to sync.
        recreated = meta.uid(new) != meta.uid(old)
        if recreated:
            self.deleted_jobs.forget(meta.namespace(old), meta.name(old), meta.uid(old))
        # Ours (docs/lifecycle.md): a re-run asked for by annotation, in any phase.
        rerun = retry_request_to_sync(new, old)  # or a malformed one to warn about (docs/hostile-input.md)
        if succeeded_for_deletion or spec_changed or recreated or rerun:
            self.enqueue_job_flow(self.queue.request_for(meta.namespace(new), meta.name(new)))

    def add_job(self, obj: Any, is_in_initial_list: bool = False) -> None:
        """Not a trigger (upstream has no Job add handler): a create of ours has arrived."""
        if isinstance(obj, (dict, Mapping)):
            self.create_expectations.observed(meta.namespace(obj), meta.name(obj))

    def update_job(self, old: Any, new: Any) -> None:
        if not isinstance(old, (dict, Mapping)) or not isinstance(new, (dict, Mapping)):
            return
        self.create_expectations.observed(meta.namespace(new), meta.name(new))
        if not is_controlled_by(new, FLOW_GROUP_VERSION, JOB_FLOW_KIND):
            return
        if meta.resource_version(new) == meta.resource_version(old):
            return
        req = self._owner_request(new)
        if req is None:
            return
        self.status_writer.job_changed(req, self._changes_status_only(req, new))

    def _owner_request(self, job: Mapping[str, Any]) -> FlowRequest | None:
        """The request of the JobFlow that owns `job`, or None when no JobFlow does."""
        name = get_job_flow_name_by_job(job)
        return self.queue.request_for(meta.namespace(job), name) if name else None

    def _changes_status_only(self, req: FlowRequest, job: Mapping[str, Any]) -> bool:
        """Whether the Job's change can only change its JobFlow's status (the pacing then says when,
        pacing.py). Completed may make a dependent due and Failed fails the flow; and a probe
        (docs/probe.md) may pass on a Running Job's pods."""
        if vcjob.phase(job) not in _STATUS_ONLY_PHASES:
            return False
        try:
            job_flow = self.job_flow_lister.job_flows(req.namespace).get(req.job_flow_name)
        except NotFoundError:
            return True
        return not jf.has_probes(effective_job_flow(job_flow))

    def delete_job(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        if not isinstance(obj, (dict, Mapping)):
            return
        self.create_expectations.observed(meta.namespace(obj), meta.name(obj))
        if is_controlled_by(obj, FLOW_GROUP_VERSION, JOB_FLOW_KIND):
            self._remember_if_completed(obj)
            req = self._owner_request(obj)
            if req is not None:
                # The Job is to be created again (or it was a retry's, whose successor is due).
                self.queue.add_after(req, 0.0, urgency.REACT)
            return
        # A Job no JobFlow controls may have been squatting a flow's name (ErrResourceExists):
        # the JobFlows waiting on that name can go on now. Such deletes are rare; the scan is of
        # one namespace's JobFlows.
        namespace, job_name = meta.namespace(obj), meta.name(obj)
        for job_flow in self.job_flow_lister.job_flows(namespace).list():
            if jf.phase(job_flow) not in UNFINISHED_PHASES:
                continue
            if job_name in _job_names(job_flow):
                self.enqueue_job_flow(self.queue.request_for(namespace, meta.name(job_flow)))

    def _remember_if_completed(self, job: Mapping[str, Any]) -> None:
        """A Job deleted while Completed ran to completion: its JobFlow must never run it again.

        The informer hands over the Job's last state (a tombstone's may be stale, and then says
        less). Remembered only while the controlling JobFlow, by uid, is in the cache: the Jobs of
        a deleted JobFlow have nothing left to protect.
        """
        if vcjob.phase(job) != JobPhase.COMPLETED:
            return
        ref = meta.get_controller_of(job) or {}
        namespace, name, uid = meta.namespace(job), str(ref.get("name") or ""), str(ref.get("uid") or "")
        try:
            owner = self.job_flow_lister.job_flows(namespace).get(name)
        except NotFoundError:
            return
        if uid and meta.uid(owner) == uid:
            self.deleted_jobs.remember(namespace, name, uid, job)

    def delete_job_flow(self, obj: Any) -> None:
        """Not a trigger (upstream has no JobFlow delete handler): forget what we remember of it."""
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        if isinstance(obj, (dict, Mapping)):
            self.memories.forget(meta.namespace(obj), meta.name(obj), meta.uid(obj))

    def add_job_template(self, obj: Any, is_in_initial_list: bool = False) -> None:
        """Resume every JobFlow of the namespace that has a flow named after the new template.

        Skipped during the initial list: every JobFlow is synced then anyway (its own add event).
        """
        if is_in_initial_list or not isinstance(obj, (dict, Mapping)):
            return
        namespace, name = meta.namespace(obj), meta.name(obj)
        for job_flow in self.job_flow_lister.job_flows(namespace).list():
            if jf.phase(job_flow) in FINISHED_PHASES:
                continue
            if name in template_names(effective_job_flow(job_flow)):
                self.enqueue_job_flow(self.queue.request_for(namespace, meta.name(job_flow)))

    def update_job_template(self, old: Any, new: Any) -> None:
        """A template's spec changed: resume the unfinished JobFlows whose flow of that name has a patch.

        Whether a patch applies depends on the template (a patch task must name one of its
        tasks), so an edit can make an `InvalidPatch` flow creatable. Flows without a patch are
        left to upstream's triggers (their Job is the template verbatim whenever it is created).
        Status writes (the JobTemplate controller's `jobDependsOnList`) keep the generation.
        """
        if not isinstance(old, (dict, Mapping)) or not isinstance(new, (dict, Mapping)):
            return
        if meta.metadata(new).get("generation") == meta.metadata(old).get("generation"):
            return
        namespace, name = meta.namespace(new), meta.name(new)
        for job_flow in self.job_flow_lister.job_flows(namespace).list():
            if jf.phase(job_flow) in FINISHED_PHASES:
                continue
            job_flow = effective_job_flow(job_flow)  # a run's flows are its stored spec's (docs/templates.md)
            if any(flow.name == name for flow in jf.flows(job_flow)) and jf.flow_patch(job_flow, name) is not None:
                self.enqueue_job_flow(self.queue.request_for(namespace, meta.name(job_flow)))


def lifecycle_work_left(job_flow: Mapping[str, Any]) -> bool:
    """A finished JobFlow that still has work (docs/lifecycle.md): a re-run asked for, or a TTL to honour."""
    if pending_retry_request(job_flow) is not None:
        return True
    return Lifecycle.of(job_flow).ttl_seconds_after_finished is not None


def _job_names(job_flow: Mapping[str, Any]) -> set[str]:
    """The names of the Jobs a JobFlow's flows and finally entries make (a matrix flow's, docs/params.md)."""
    name = meta.name(job_flow)
    job_flow = effective_job_flow(job_flow)
    params = ParamsSpec.of(job_flow, jf.flows(job_flow))
    return {job for flow in template_names(job_flow) for job in flow_job_names(params, name, flow)}
