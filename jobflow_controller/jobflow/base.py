"""The fields of JobFlowController that its handler and action halves share (for type checking).

Upstream spreads one Go struct's methods over several files; here the halves are mixins, and this
base declares what each may use of the other, so mypy checks both against one definition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis import FlowRequest
from jobflow_controller.apis.jobflow import Flow
from jobflow_controller.apis.probe import Probe
from jobflow_controller.framework import QueueController
from jobflow_controller.jobflow.expectations import CreateExpectations
from jobflow_controller.jobflow.finished import DeletedJobs
from jobflow_controller.jobflow.own_writes import OwnWrites
from jobflow_controller.jobflow.probe import ProbeGate
from jobflow_controller.jobflow.state import UpdateJobFlowStatusFn
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobflow.urgency import StatusLane
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import JobFlowLister, JobLister, JobTemplateLister


class JobFlowControllerBase(QueueController):
    clientset: Clientset
    recorder: Any
    metrics: JobFlowMetrics
    job_flow_lister: JobFlowLister
    job_template_lister: JobTemplateLister
    job_lister: JobLister
    deleted_jobs: DeletedJobs
    #: (namespace, name) -> (uid, generation) of the invalid JobFlows already given their Warning.
    invalid_warned: dict[tuple[str, str], tuple[str, int]]
    probe_gate: ProbeGate
    own_writes: OwnWrites
    create_expectations: CreateExpectations
    status_lane: StatusLane
    status_write_interval: float

    def enqueue_job_flow(self, req: FlowRequest) -> None:
        self.queue.add(req)

    def forget_job_flow(self, namespace: str, name: str, uid: str | None = None) -> None:
        """Drop everything this process remembers of a JobFlow that is gone: its Jobs seen deleted
        Completed (of that object only, when `uid` is known), its status writes, whether it was
        warned invalid, its reserved status write, and (with `uid`) its probe results. One place,
        so no memory is left behind."""
        self.deleted_jobs.forget(namespace, name, uid)
        self.own_writes.forget(namespace, name)
        self.invalid_warned.pop((namespace, name), None)
        self.status_lane.forget(self.request_for(namespace, name))
        if uid:
            self.probe_gate.cache.forget(uid)

    @staticmethod
    def request_for(namespace: str, name: str) -> FlowRequest:  # pragma: no cover - see controller
        raise NotImplementedError

    def probe_of(
        self, job_flow: Mapping[str, Any], flow: Flow, targets: tuple[str, ...]
    ) -> Probe | None:  # pragma: no cover - see probe_judge
        raise NotImplementedError

    def has_jobs_left(self, job_flow: Mapping[str, Any]) -> bool:  # pragma: no cover - see action
        raise NotImplementedError

    def sync_job_flow(
        self, job_flow: Mapping[str, Any], update_state_fn: UpdateJobFlowStatusFn
    ) -> None:  # pragma: no cover - see action
        raise NotImplementedError
