"""The JobFlow controller's side of `dependsOn.probe`: which probe a flow has, the pods, the warnings.

`judge` (action.py) asks `probe_of` for a flow's probe before it looks at the targets, and
`probe_gate.target_met` for a target whose Job is not Completed yet. The rules are in probe.py and
docs/probe.md. The Pod informer is created on the first HTTP or TCP check, so a controller whose
JobFlows use no such probe never lists a pod and needs no RBAC for pods.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import structlog

from informers import ResourceEventHandlerFuncs, SharedIndexInformer
from informers.errors import NotFoundError
from jobflow_controller.apis import FLOW_GROUP_VERSION, JOB_FLOW_KIND, meta
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.probe import Probe, parse_probe, probe_problems
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.base import JobFlowControllerBase
from jobflow_controller.jobflow.probe import ProbeGate, job_tasks, unmatched_tasks
from jobflow_controller.kube.informers import POD_JOB_NAME_LABEL, POD_TASK_SPEC_LABEL, PodLister, VolcanoInformerFactory

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]


class ProbeJudgeMixin(JobFlowControllerBase):
    """`probe_of`, the lazily started Pod informer (`task_pods`), and its event handler."""

    informer_factory: VolcanoInformerFactory
    probe_gate: ProbeGate
    #: The stop event the informers run under, once the controller runs (None before).
    informer_stop: threading.Event | None = None
    _pod_informer: SharedIndexInformer | None = None
    _pod_lister: PodLister | None = None
    _pod_informer_started = False
    _pod_lock: threading.Lock

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
            self._warn_invalid_probe(job_flow, c.MESSAGE_INVALID_PROBE, job_name, flow.name, "; ".join(problems))
            return None
        probe = parse_probe(raw)
        if not probe:
            return probe
        missing = unmatched_tasks(probe, {target: self._target_tasks(job_flow, target) for target in targets})
        if missing:
            self._warn_invalid_probe(
                job_flow, c.MESSAGE_PROBE_TASK_NOT_FOUND, job_name, flow.name, missing[0], ", ".join(targets)
            )
            return None
        return probe

    def _target_tasks(self, job_flow: Obj, target: str) -> set[str] | None:
        ns = meta.namespace(job_flow)
        try:
            job = self.job_lister.jobs(ns).get(jf.job_name(meta.name(job_flow), target))
        except NotFoundError:
            job = None
        if job is not None and meta.is_controlled_by(job, job_flow):
            return set(job_tasks(job))
        try:
            template = self.job_template_lister.job_templates(ns).get(target)
        except NotFoundError:
            return None
        return set(job_tasks(template))

    def _warn_invalid_probe(self, job_flow: Obj, message: str, *args: Any) -> None:
        log.warning(message % args, jobflow=f"{meta.namespace(job_flow)}/{meta.name(job_flow)}")
        self.recorder.eventf(job_flow, c.EVENT_WARNING, c.REASON_INVALID_PROBE, message, *args)

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
                pods = self.informer_factory.pods()
                self._pod_informer = pods.informer()
                self._pod_lister = pods.lister()
                self._pod_informer.add_event_handler(
                    ResourceEventHandlerFuncs(add_func=self.add_pod, update_func=self.update_pod)
                )
                log.info("starting the Pod informer for dependsOn.probe checks")
            if self.informer_stop is not None and not self._pod_informer_started:
                self.informer_factory.start(self.informer_stop)  # starts only what is new
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
            job = self.job_lister.jobs(ns).get(job_name)
        except NotFoundError:
            return
        ref = meta.get_controller_of(job)
        if ref is None or ref.get("apiVersion") != FLOW_GROUP_VERSION or ref.get("kind") != JOB_FLOW_KIND:
            return
        self.enqueue_job_flow(self.request_for(ns, str(ref.get("name") or "")))


def _probe_view(pod: Obj) -> tuple[Any, ...]:
    status = pod.get("status")
    status = status if isinstance(status, Mapping) else {}
    return (status.get("phase"), status.get("podIP"), bool(meta.metadata(pod).get("deletionTimestamp")))
