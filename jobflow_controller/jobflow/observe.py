"""`JobFlowObserver.observe`: what one sync of one JobFlow sees, read from the caches and the clock.

The first of a sync's three steps (observe, plan, execute: sync.py): the JobFlow's Jobs, the Jobs and
JobTemplates its flows name, the Jobs this process saw deleted Completed or created and the cache
does not show yet, and the time, taken once into a `World` (world.py) the decisions read. The probe
verdicts of the flows `deploy_job` may judge are the next step's (`check_probes`, probes/judge.py):
observing reads and starts nothing.

`DeletedJobs`, which of a JobFlow's Jobs already ran to completion though the cache no longer shows
them, so that none of them is ever run again. A Job a JobFlow created may be deleted once it
finished: by hand, or by Volcano's garbage collector when its template sets
`ttlSecondsAfterFinished`. Upstream's deploy re-creates any missing Job whose targets are Completed
(volcano-jobflow.md §2.18 #7), and with our Job delete handler (deviation 8) that happened at once,
so a TTL'd flow re-ran for ever. A Job the JobFlow's status records as Completed is done
(apis/status.py `recorded_completed`): it is never created again and keeps satisfying its
dependents. `DeletedJobs` bridges the moment before the status records it: the informer hands the
Job delete handler the Job's last state, and a Job seen deleted while Completed is remembered (per
JobFlow uid) for as long as that JobFlow lives. The next status write records it in
`jobStatusList`, which is what survives a restart; the memory covers a Job deleted right after it
completed (TTL 0, or a busy queue) before any sync saw it Completed, and a JobFlow cache that does
not show yet the status write that recorded it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from informers.errors import NotFoundError
from jobflow_controller.apis import meta
from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION
from jobflow_controller.apis.status import recorded_completed, replaced_since_deleted
from jobflow_controller.jobflow import action
from jobflow_controller.jobflow.expectations import CreateExpectations
from jobflow_controller.jobflow.flow_policy import FlowPolicy
from jobflow_controller.jobflow.probes.judge import ProbeJudge
from jobflow_controller.jobflow.results_reader import ResultsReader
from jobflow_controller.jobflow.status_writer import StatusWriter
from jobflow_controller.jobflow.template_ref import TemplateRefs
from jobflow_controller.jobflow.world import JobFlowSpec, World
from jobflow_controller.kube.informers import BY_CREATED_BY_JOB_FLOW, JobFlowLister, JobLister, JobTemplateLister
from workqueue import Clock

Obj = Mapping[str, Any]


class JobFlowObserver:
    """Reads one JobFlow's `World` from the listers and the controller's memories of what they lag."""

    #: Runs from a template (docs/templates.md), set by the controller; None: every JobFlow as it is.
    templates: TemplateRefs | None = None

    def __init__(
        self,
        listers: tuple[JobFlowLister, JobTemplateLister, JobLister],
        status_writer: StatusWriter,
        deleted_jobs: DeletedJobs,
        create_expectations: CreateExpectations,
        probes: ProbeJudge,
        clock: Clock,
        patch_fields: PatchFields | None = None,
        results: ResultsReader | None = None,
    ) -> None:
        self.job_flow_lister, self.job_template_lister, self.job_lister = listers
        self._writer = status_writer
        self._deleted_jobs = deleted_jobs
        self.create_expectations = create_expectations
        self._probes = probes
        self._clock = clock
        self._patch_fields = patch_fields
        self._results = results

    def effective(self, job_flow: Obj) -> Obj | None:
        """The JobFlow a sync plans: a run from a template with the spec it was fixed to, at its first
        sync resolved and stored (template_ref.py); None when it is not to be planned now."""
        return job_flow if self.templates is None else self.templates.effective(job_flow)

    def observe(self, job_flow: Obj) -> World:
        """What the sync of `job_flow` sees: its Jobs, the Jobs and templates its flows name, the time."""
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        spec = JobFlowSpec.of(job_flow, self._patch_fields)
        flow_names = spec.template_names() | {t for f in spec.flows for t in f.targets or ()}
        jobs, templates = self.job_lister.jobs(ns), self.job_template_lister.job_templates(ns)
        named_jobs = _present(jobs.get, {n for f in flow_names for n in spec.job_names(name, f)})
        if self._deleted_jobs:
            # What the stored status records needs no memory any more (it survives a restart too).
            self._deleted_jobs.forget_recorded(job_flow, self._writer.stored_status(job_flow))
        deleted = self._deleted_jobs.recall(job_flow)
        done = recorded_completed(job_flow) | set(deleted)
        expected = frozenset(
            n
            for n in (n for f in spec.template_names() for n in spec.job_names(name, f))
            if n not in named_jobs and n not in done and self.create_expectations.pending(ns, n)
        )
        world = World(
            job_flow=job_flow,
            spec=spec,
            jobs=tuple(jobs_created_by_job_flow(self.job_lister, job_flow)),
            named_jobs=named_jobs,
            templates=_present(templates.get, spec.template_names()),
            deleted_completed=deleted,
            expected=expected,
            probes={},
            now=self._clock.wall(),
        )
        return world

    def expect_created(self, namespace: str, job_name: str) -> None:
        """A Job this sync created: until the informer shows it, `observe` counts it as there."""
        self.create_expectations.created(namespace, job_name)

    def read_results(self, world: World) -> World:
        """Ours (docs/results.md): the results of the Jobs that ended and were not read yet, one GET of a
        pod each (results_reader.py). A JobFlow that declares none is returned as it is."""
        if self._results is None or world.spec.results is None:
            return world
        return self._results.read(world)

    def check_probes(self, world: World, policy: FlowPolicy) -> World:
        """Ours (docs/probe.md): the verdicts of the probe flows `deploy_job` will judge, their checks
        started now (a check the pool finishes at once counts in this sync; one still running puts
        the JobFlow back when it ends). A JobFlow without a probe is returned as it is."""
        if not any(f.probe is not None for f in world.spec.flows):
            return world
        probes = self._probes.judge_probes(world.job_flow, action.flows_to_judge(world, policy), world.named_jobs)
        return replace(world, probes=probes)


def _present(get: Callable[[str], Obj], names: set[str]) -> dict[str, Obj]:
    """{name: get(name)} for each name the lister holds (the cache's objects, never copied)."""
    out: dict[str, Obj] = {}
    for name in sorted(names):
        try:
            out[name] = get(name)
        except NotFoundError:
            continue
    return out


def jobs_created_by_job_flow(job_lister: JobLister, job_flow: Obj) -> list[Obj]:
    """Upstream's `getAllJobsCreatedByJobFlow`: the Jobs `job_flow` controls (by uid), in creation order.

    Upstream lists the namespace with `volcano.sh/createdByJobFlow in (<ns>.<name>)`; the label-value
    index gives the same Jobs without a scan. Ours keeps only the Jobs this JobFlow controls: the label
    alone also matches an earlier JobFlow's of the same name, and anyone can set it. Upstream's order is
    a map's (random); creation order keeps the lists stable. Read by the sync and by the JobFlow update
    handler (does a Succeeded JobFlow with `jobRetainPolicy: delete` still have Jobs to delete?).
    """
    ns = meta.namespace(job_flow)
    value = meta.generate_object_string(ns, meta.name(job_flow))
    jobs = [
        j for j in job_lister.by_label_index(BY_CREATED_BY_JOB_FLOW, value, ns) if meta.is_controlled_by(j, job_flow)
    ]
    return sorted(jobs, key=lambda j: (meta.creation_timestamp(j) or "", meta.name(j)))


# -- the Jobs seen deleted while Completed -----------------------------------------------------------
def status_view(job: Obj) -> dict[str, Any]:
    """What the status keeps of a deleted Job (its `jobStatusList` entry's inputs), and nothing else.

    A whole Job (its tasks' pod templates) is kilobytes; this is the name, the creation time and
    four status fields, so remembering a deleted Job costs little.
    """
    status = job.get("status")
    status = status if isinstance(status, Mapping) else {}
    kept = {k: status[k] for k in ("state", "runningDuration", "retryCount") if k in status}
    metadata: dict[str, Any] = {"name": meta.name(job), "namespace": meta.namespace(job)}
    if meta.creation_timestamp(job):
        metadata["creationTimestamp"] = meta.creation_timestamp(job)
    annotations = meta.metadata(job).get("annotations")
    if isinstance(annotations, Mapping) and ATTEMPT_ANNOTATION in annotations:
        metadata["annotations"] = {ATTEMPT_ANNOTATION: annotations[ATTEMPT_ANNOTATION]}
    return {"metadata": metadata, "status": kept}


class DeletedJobs:
    """The last state of each Job seen deleted while Completed, by (namespace, JobFlow name, uid).

    Bounded by the live JobFlows' flows: only a Job whose controlling JobFlow is still in the cache
    under the same uid is remembered, only its `status_view`, and an entry goes once the stored
    status records the Job (`forget_recorded`), or with its JobFlow (deleted or re-created).
    Shared by the informer's handler thread and the workers, hence the lock.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, str], dict[str, dict[str, Obj]]] = {}

    def remember(self, namespace: str, job_flow_name: str, job_flow_uid: str, job: Obj) -> None:
        with self._lock:
            by_uid = self._jobs.setdefault((namespace, job_flow_name), {})
            by_uid.setdefault(job_flow_uid, {})[meta.name(job)] = status_view(job)

    def forget_recorded(self, job_flow: Obj, stored_status: Mapping[str, Any]) -> None:
        """Drop the Jobs that `stored_status` (what the API server holds) records as Completed."""
        recorded = recorded_completed({"status": stored_status})
        key = (meta.namespace(job_flow), meta.name(job_flow))
        with self._lock:
            jobs = self._jobs.get(key, {}).get(meta.uid(job_flow))
            if not jobs:
                return
            for name in (recorded & jobs.keys()) | replaced_since_deleted({"status": stored_status}, jobs):
                del jobs[name]
            if not jobs:
                self._drop(key, meta.uid(job_flow))

    def recall(self, job_flow: Obj) -> dict[str, Obj]:
        """This JobFlow object's (by uid) Completed Jobs seen deleted, by name."""
        key = (meta.namespace(job_flow), meta.name(job_flow))
        with self._lock:
            return dict(self._jobs.get(key, {}).get(meta.uid(job_flow), {}))

    def forget(self, namespace: str, job_flow_name: str, job_flow_uid: str | None = None) -> None:
        """Drop what is remembered for one JobFlow object (by uid), or for every object of the name."""
        key = (namespace, job_flow_name)
        with self._lock:
            if job_flow_uid is None:
                self._jobs.pop(key, None)
                return
            by_uid = self._jobs.get(key)
            if by_uid is not None:
                by_uid.pop(job_flow_uid, None)
                if not by_uid:
                    del self._jobs[key]

    def _drop(self, key: tuple[str, str], job_flow_uid: str) -> None:
        by_uid = self._jobs.get(key)
        if by_uid is not None:
            by_uid.pop(job_flow_uid, None)
            if not by_uid:
                del self._jobs[key]

    # -- memories.py ------------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        self.forget(namespace, name, uid)

    def memory_sizes(self) -> dict[str, int]:
        return {"deleted_jobs": len(self)}

    def __bool__(self) -> bool:
        """Whether anything is remembered (lock-free: a sync asks before it takes the lock)."""
        return bool(self._jobs)

    def __len__(self) -> int:
        with self._lock:
            return sum(len(jobs) for by_uid in self._jobs.values() for jobs in by_uid.values())
