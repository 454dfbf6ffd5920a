"""The JobFlow controller's side of `dependsOn.probe`: the verdicts, the pods, the warnings (ours).

Called at one named point, before the sync's decisions (sync.py): `judge_probes` gives each flow
with a probe that may be judged in this sync its `ProbeVerdict` (world.py), which `action.judge`
reads. The rules are in gate.py and docs/probe.md. The Pod informer is created on the first HTTP
or TCP check, so a controller whose JobFlows use no such probe never lists a pod and needs no RBAC
for pods.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import structlog

from informers import ResourceEventHandlerFuncs, SharedIndexInformer
from informers.errors import NotFoundError
from jobflow_controller.apis import FLOW_GROUP_VERSION, JOB_FLOW_KIND, JobPhase, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.probe import Probe, parse_probe, probe_problems
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.probes import ProbeCache, ProbeGate, ProbeRunner, job_tasks, unmatched_tasks
from jobflow_controller.jobflow.world import ProbeVerdict
from jobflow_controller.kube.informers import (
    POD_JOB_NAME_LABEL,
    POD_TASK_SPEC_LABEL,
    JobLister,
    JobTemplateLister,
    PodLister,
    VolcanoInformerFactory,
)

if TYPE_CHECKING:
    from jobflow_controller.jobflow.controller import JobFlowQueue

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]


class ProbeJudge:
    """`judge_probes`, `probe_of`, the lazily started Pod informer (`task_pods`) and its handler.

    The queue takes a JobFlow back in the `REACT` lane (a check finished, or a poll is due: `react`)
    or the default one (a pod changed). `allow_loopback` lets pods on loopback addresses be checked:
    only for a local control plane, whose simulated pods run on 127.0.0.1.
    """

    def __init__(
        self,
        informer_factory: VolcanoInformerFactory,
        job_lister: JobLister,
        job_template_lister: JobTemplateLister,
        recorder: Any,
        queue: JobFlowQueue,
        cache: ProbeCache,
        runner: ProbeRunner,
        *,
        allow_loopback: bool = False,
    ) -> None:
        self._informer_factory = informer_factory
        self._job_lister = job_lister
        self._job_template_lister = job_template_lister
        self._recorder = recorder
        self._queue = queue
        self.gate = ProbeGate(cache, runner, self, self, allow_loopback=allow_loopback)
        #: The stop event the informers run under, once the controller runs (None before).
        self.informer_stop: threading.Event | None = None
        self._pod_lock = threading.Lock()
        self._pod_informer: SharedIndexInformer | None = None
        self._pod_lister: PodLister | None = None
        self._pod_informer_started = False

    def judge_probes(
        self, job_flow: Obj, flows: list[jf.Flow], named_jobs: Mapping[str, Obj]
    ) -> dict[str, ProbeVerdict]:
        """The verdict of each of `flows` (those `deploy_job` judges in this sync) that has a probe.

        Each target whose Job is ours and not Completed yet is checked (none short-circuits), so
        all of a flow's network checks start in one sync.
        """
        out: dict[str, ProbeVerdict] = {}
        for flow in flows:
            if flow.probe is None or flow.targets is None:
                continue
            probe = self.probe_of(job_flow, flow, flow.targets)
            met = self._met_targets(job_flow, flow, probe, named_jobs) if probe else frozenset()
            out[flow.name] = ProbeVerdict(probe, met)
        return out

    def _met_targets(self, job_flow: Obj, flow: jf.Flow, probe: Probe, named_jobs: Mapping[str, Obj]) -> frozenset[str]:
        met: set[str] = set()
        for target in flow.targets or ():
            job = named_jobs.get(jf.job_name(meta.name(job_flow), target))
            if job is None or not meta.is_controlled_by(job, job_flow):
                continue
            if vcjob.phase(job) != JobPhase.COMPLETED and self.gate.target_met(job_flow, flow.name, probe, job):
                met.add(target)
        return frozenset(met)

    def probe_of(self, job_flow: Obj, flow: jf.Flow, targets: tuple[str, ...]) -> Probe | None:
        """The flow's probe (empty when it has none), or None when the flow must wait for a spec fix.

        None comes with a Warning `InvalidProbe` (the correlator aggregates repeats): the probe is
        one admission refuses (the webhook was off), or it names a task none of the targets has.
        Whether a target has a task is read from its Job, or from its JobTemplate before the Job
        exists (a patch cannot add a task); when neither can be seen the question waits.
        """
        raw = flow.probe
        if raw is None:
            return Probe()
        job_name = jf.job_name(meta.name(job_flow), flow.name)
        # A probe on a flow without targets is refused at admission; here it is ignored, as the
        # flow is created at once (upstream's rule), so `has_targets` is not held against it.
        problems = probe_problems(raw)
        if problems:
            self.warn_invalid_probe(job_flow, c.MESSAGE_INVALID_PROBE, job_name, flow.name, "; ".join(problems))
            return None
        probe = parse_probe(raw)
        if not probe:
            return probe
        missing = unmatched_tasks(probe, {target: self._target_tasks(job_flow, target) for target in targets})
        if missing:
            self.warn_invalid_probe(
                job_flow, c.MESSAGE_PROBE_TASK_NOT_FOUND, job_name, flow.name, missing[0], ", ".join(targets)
            )
            return None
        return probe

    def _target_tasks(self, job_flow: Obj, target: str) -> set[str] | None:
        ns = meta.namespace(job_flow)
        try:
            job = self._job_lister.jobs(ns).get(jf.job_name(meta.name(job_flow), target))
        except NotFoundError:
            job = None
        if job is not None and meta.is_controlled_by(job, job_flow):
            return set(job_tasks(job))
        try:
            template = self._job_template_lister.job_templates(ns).get(target)
        except NotFoundError:
            return None
        return set(job_tasks(template))

    def warn_invalid_probe(self, job_flow: Obj, message: str, *args: Any) -> None:
        log.warning(message % args, jobflow=f"{meta.namespace(job_flow)}/{meta.name(job_flow)}")
        self._recorder.eventf(job_flow, c.EVENT_WARNING, c.REASON_INVALID_PROBE, message, *args)

    # -- the pods -------------------------------------------------------------------------------
    def task_pods(self, namespace: str, job_name: str, task: str) -> list[Obj] | None:
        """The cached pods of one task of one Job; None until the Pod informer has synced."""
        lister = self._pod_cache()
        if lister is None:
            return None
        return [p for p in lister.job_pods(namespace, job_name) if meta.labels(p).get(POD_TASK_SPEC_LABEL) == task]

    def _pod_cache(self) -> PodLister | None:
        with self._pod_lock:
            if self._pod_informer is None:
                pods = self._informer_factory.pods()
                self._pod_informer = pods.informer()
                self._pod_lister = pods.lister()
                self._pod_informer.add_event_handler(
                    ResourceEventHandlerFuncs(add_func=self.add_pod, update_func=self.update_pod)
                )
                log.info("starting the Pod informer for dependsOn.probe checks")
            if self.informer_stop is not None and not self._pod_informer_started:
                self._informer_factory.start(self.informer_stop)  # starts only what is new
                self._pod_informer_started = True
            informer, lister = self._pod_informer, self._pod_lister
        return lister if informer.has_synced() else None

    def add_pod(self, obj: Any, is_in_initial_list: bool = False) -> None:
        if isinstance(obj, Mapping):
            self._enqueue_for_pod(obj)

    def update_pod(self, old: Any, new: Any) -> None:
        """A pod that became Running, or got its IP, may let a probe pass: sync its JobFlow now."""
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            return
        if _probe_view(old) != _probe_view(new):
            self._enqueue_for_pod(new)

    def _enqueue_for_pod(self, pod: Obj) -> None:
        job_name = meta.labels(pod).get(POD_JOB_NAME_LABEL)
        if not job_name:
            return
        ns = meta.namespace(pod)
        try:
            job = self._job_lister.jobs(ns).get(job_name)
        except NotFoundError:
            return
        ref = meta.get_controller_of(job)
        if ref is None or ref.get("apiVersion") != FLOW_GROUP_VERSION or ref.get("kind") != JOB_FLOW_KIND:
            return
        self._queue.add(ns, str(ref.get("name") or ""))

    def react(self, namespace: str, name: str, delay: float = 0.0) -> None:
        """A check finished (0) or a poll is due: the JobFlow back in the `REACT` lane."""
        self._queue.react(namespace, name, delay)

    # -- memories.py ------------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        if uid:
            self.gate.cache.forget(uid)

    def memory_sizes(self) -> dict[str, int]:
        return {"probe_cache": len(self.gate.cache)}

    def shutdown(self) -> None:
        self.gate.cache.shutdown()


def _probe_view(pod: Obj) -> tuple[Any, ...]:
    status = pod.get("status")
    status = status if isinstance(status, Mapping) else {}
    return (status.get("phase"), status.get("podIP"), bool(meta.metadata(pod).get("deletionTimestamp")))
