"""`JobFlowObserver.observe`: what one sync of one JobFlow sees, read from the caches and the clock.

The first of a sync's three steps (observe, plan, execute: sync.py): the JobFlow's Jobs, the Jobs and
JobTemplates its flows name, the Jobs this process saw deleted Completed or created and the cache
does not show yet, and the time, taken once into a `World` (plan.py) the decisions read. The probe
verdicts of the flows `deploy_job` may judge are the next step's (`check_probes`, probes/judge.py):
observing reads and starts nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from informers.errors import NotFoundError
from jobflow_controller.apis import meta
from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.jobflow import action
from jobflow_controller.jobflow.deleted_jobs import DeletedJobs, recorded_completed
from jobflow_controller.jobflow.expectations import CreateExpectations
from jobflow_controller.jobflow.flow_policy import FlowPolicy
from jobflow_controller.jobflow.plan import JobFlowSpec, World
from jobflow_controller.jobflow.probes.judge import ProbeJudge
from jobflow_controller.jobflow.results_reader import ResultsReader
from jobflow_controller.jobflow.status_writer import StatusWriter
from jobflow_controller.jobflow.template_ref import TemplateRefs
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
