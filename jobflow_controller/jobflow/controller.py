"""The JobFlow controller's struct: clients, informers, listers, recorder, queue (jobflow_controller.go).

The queue and worker loop come from `framework.QueueController`; the event handlers live in
`handler.py` and the sync in `action.py`, as upstream splits them across files.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from concurrent.futures import Executor
from typing import Any

import structlog

from jobflow_controller.apis import Action, Event, FlowRequest
from jobflow_controller.framework import DEFAULT_MAX_REQUEUE_NUM, QueueController
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow import urgency
from jobflow_controller.jobflow.action import ActionMixin
from jobflow_controller.jobflow.expectations import CreateExpectations
from jobflow_controller.jobflow.finished import DeletedJobs
from jobflow_controller.jobflow.handler import HandlerMixin
from jobflow_controller.jobflow.own_writes import OwnWrites
from jobflow_controller.jobflow.probe import NetworkProbeRunner, ProbeCache, ProbeGate, ProbeRunner
from jobflow_controller.jobflow.probe_judge import ProbeJudgeMixin
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import VolcanoInformerFactory
from workqueue import Clock, PriorityStorage

log = structlog.get_logger(__name__)

CONTROLLER_NAME = "jobflow-controller"


class JobFlowController(HandlerMixin, ActionMixin, ProbeJudgeMixin, QueueController):
    """Creates each flow's Job once its dependencies Completed and keeps the JobFlow status true."""

    name = CONTROLLER_NAME

    def __init__(
        self,
        clientset: Clientset,
        informer_factory: VolcanoInformerFactory,
        recorder: Any,
        *,
        max_requeue_num: int = DEFAULT_MAX_REQUEUE_NUM,
        metrics: JobFlowMetrics | None = None,
        status_write_interval: float = 0.0,
        status_write_qps: float = urgency.STATUS_WRITE_QPS,
        status_write_burst: int = urgency.STATUS_WRITE_BURST,
        clock: Clock | None = None,
        queue_metrics_provider: object | None = None,
        probe_runner: ProbeRunner | None = None,
        probe_executor: Executor | None = None,
    ) -> None:
        # Priority lanes (urgency.py): the syncs that create a dependent go before status-only ones.
        super().__init__(
            c.QUEUE_NAME,
            max_requeue_num=max_requeue_num,
            clock=clock,
            queue_metrics_provider=queue_metrics_provider,
            queue_storage=PriorityStorage(),
        )
        self.clientset = clientset
        self.informer_factory = informer_factory
        self.recorder = recorder
        self.metrics = metrics or JobFlowMetrics()
        self.deleted_jobs = DeletedJobs()
        self.invalid_warned = {}
        # dependsOn.probe (ours, docs/probe.md): network checks run on the cache's own small pool,
        # never on a worker; the Pod informer is created on the first HTTP or TCP check.
        self._pod_lock = threading.Lock()
        self.probe_gate = ProbeGate(
            ProbeCache(self.clock, executor=probe_executor),
            probe_runner or NetworkProbeRunner(),
            self,
            self._requeue_job_flow,
        )
        self.own_writes = OwnWrites()
        self.create_expectations = CreateExpectations(self.clock)
        self.status_lane = urgency.StatusLane(self.queue, self.clock, status_write_qps, status_write_burst)
        #: 0: a status change is written as soon as the status bucket has a token for it
        #: (urgency.py); more: at most this many seconds after it was seen (action.py
        #: `_status_write_waits`).
        self.status_write_interval = status_write_interval

        job_flows = informer_factory.job_flows()
        job_templates = informer_factory.job_templates()
        jobs = informer_factory.jobs()
        self.job_flow_informer = job_flows.informer()
        self.job_flow_lister = job_flows.lister()
        self.job_template_informer = job_templates.informer()
        self.job_template_lister = job_templates.lister()
        self.job_informer = jobs.informer()
        self.job_lister = jobs.lister()

        # Upstream registers no JobFlow delete handler; ours only forgets the deleted JobFlow's
        # Completed Jobs seen deleted (finished.py) and enqueues nothing.
        self.job_flow_informer.add_event_handler(
            self.handler_funcs(add=self.add_job_flow, update=self.update_job_flow, delete=self.delete_job_flow)
        )
        # Upstream registers no JobTemplate handler; ours resumes flows waiting for a template, and
        # flows whose patch a template edit may have made applicable (docs/patch.md).
        self.job_template_informer.add_event_handler(
            self.handler_funcs(add=self.add_job_template, update=self.update_job_template)
        )
        # Upstream watches Job updates only; ours also sees deletions (a Job deleted by hand), and
        # adds only to learn that our own creates arrived (expectations.py; an add syncs nothing).
        self.job_informer.add_event_handler(
            self.handler_funcs(add=self.add_job, update=self.update_job, delete=self.delete_job)
        )

    @staticmethod
    def request_for(namespace: str, name: str) -> FlowRequest:
        """Every JobFlow trigger builds the same key, so triggers for one JobFlow collapse."""
        return FlowRequest(namespace, name, action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)

    def run(
        self,
        stop: threading.Event,
        workers: int = 1,
        *,
        drain_timeout: float | None = None,
        hard_stop: threading.Event | None = None,
    ) -> None:
        """Run until `stop`. Upstream runs one worker whatever --worker-threads says; we honour it."""
        self.informer_stop = stop
        try:
            self.run_workers(
                stop,
                workers,
                self.informer_factory.start,
                self.job_flow_informer.has_synced,
                self.job_template_informer.has_synced,
                self.job_informer.has_synced,
                drain_timeout=drain_timeout,
                hard_stop=hard_stop,
            )
        finally:
            self.probe_gate.cache.shutdown()

    def _requeue_job_flow(self, namespace: str, name: str, delay: float) -> None:
        """The probe gate's way back into the queue: at once after a check finished, else after a poll."""
        req = self.request_for(namespace, name)
        if delay > 0:
            self.queue.add_after(req, delay, priority=urgency.REACT)
        else:
            self.queue.add_with_priority(req, urgency.REACT)

    def shut_down(self, drain_timeout: float | None = None) -> None:
        """Before the drain, queue every JobFlow whose status waits to be written (action.py).

        Their scheduled syncs would be dropped with the queue; queued now, the drain syncs them,
        and a sync while the queue shuts down writes at once. A stop without a drain syncs
        nothing: the next leader computes the status afresh from the Jobs.
        """
        for namespace, name in self.own_writes.pending_keys():
            self.queue.add(self.request_for(namespace, name))
        super().shut_down(drain_timeout)

    def sync_handler(self, req: Hashable) -> None:
        assert isinstance(req, FlowRequest)
        self.handle_job_flow(req)

    def log_keys(self, req: Hashable) -> dict[str, str]:
        assert isinstance(req, FlowRequest)
        return {"jobflow": f"{req.namespace}/{req.job_flow_name}"}

    def on_dropped(self, req: Hashable, err: BaseException) -> None:
        assert isinstance(req, FlowRequest)
        message = c.MESSAGE_SYNC_FAILED % (req.action, err)
        self.record_events_for_job_flow(req.namespace, req.job_flow_name, c.EVENT_WARNING, str(req.action), message)

    def record_events_for_job_flow(self, namespace: str, name: str, event_type: str, reason: str, message: str) -> None:
        try:
            job_flow = self.job_flow_lister.job_flows(namespace).get(name)
        except Exception as err:  # noqa: BLE001 - no object, no event: upstream logs and moves on
            log.error(f"Get JobFlow {name} failed for {err}.", jobflow=f"{namespace}/{name}")
            return
        self.recorder.event(job_flow, event_type, reason, message)
