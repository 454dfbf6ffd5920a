"""The JobFlow controller's struct: clients, informers, listers, recorder, queue (jobflow_controller.go).

What upstream keeps in one Go struct is composed here from plain objects, each named for its part:
`workers` (framework.py: the queue and the worker loop in three layers), `handlers` (handler.py:
which informer events enqueue what), `sync` (sync.py: the sync handler's I/O around the pure
decisions of action.py), `status_writer` (status_writer.py: when and how a status is written), and
`probes` (probe_judge.py: `dependsOn.probe`). Each gets what it uses through its constructor.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping
from concurrent.futures import Executor
from typing import Any

import structlog

from jobflow_controller.apis import FlowRequest
from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.framework import DEFAULT_MAX_REQUEUE_NUM, QueueController
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow import status_writer as sw
from jobflow_controller.jobflow import urgency
from jobflow_controller.jobflow.expectations import CreateExpectations
from jobflow_controller.jobflow.finished import DeletedJobs
from jobflow_controller.jobflow.handler import JobFlowEventHandlers
from jobflow_controller.jobflow.probe import NetworkProbeRunner, ProbeCache, ProbeRunner
from jobflow_controller.jobflow.probe_judge import ProbeJudge
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobflow.sync import JobFlowSyncer
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import VolcanoInformerFactory
from workqueue import Clock, PriorityStorage

log = structlog.get_logger(__name__)

CONTROLLER_NAME = "jobflow-controller"


class JobFlowController:
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
        status_write_interval: float = sw.STATUS_WRITE_INTERVAL,
        status_write_qps: float = sw.STATUS_WRITE_QPS,
        status_write_burst: int = sw.STATUS_WRITE_BURST,
        clock: Clock | None = None,
        queue_metrics_provider: object | None = None,
        probe_runner: ProbeRunner | None = None,
        probe_executor: Executor | None = None,
        probe_allow_loopback: bool = False,
        patch_fields: PatchFields | None = None,
    ) -> None:
        # Priority lanes (urgency.py): the syncs that may create a dependent go before status-only ones.
        self.workers = QueueController(
            CONTROLLER_NAME,
            c.QUEUE_NAME,
            self.sync_handler,
            self.on_dropped,
            log_keys=self.log_keys,
            before_drain=self.flush_statuses,
            max_requeue_num=max_requeue_num,
            clock=clock,
            queue_metrics_provider=queue_metrics_provider,
            queue_storage=PriorityStorage(urgency.LANE_SHARES),
        )
        self.queue, self.clock = self.workers.queue, self.workers.clock
        self.clientset, self.informer_factory, self.recorder = clientset, informer_factory, recorder
        self.metrics = metrics or JobFlowMetrics()
        self.deleted_jobs = DeletedJobs()
        self.create_expectations = CreateExpectations(self.clock)
        self._set_informers(informer_factory)
        self.status_writer = sw.StatusWriter(
            clientset,
            self.queue,
            self.clock,
            self.request_for,
            self.workers.must_stop_now,
            interval=status_write_interval,
            qps=status_write_qps,
            burst=status_write_burst,
        )
        self.probes = self._new_probe_judge(probe_runner, probe_executor, probe_allow_loopback)
        self.patch_fields = patch_fields  # --jobflow-patch-allowed-fields (None: every field)
        self.sync = self._new_syncer()
        self.handlers = JobFlowEventHandlers(
            self.queue,
            self.job_flow_lister,
            self.status_writer,
            self.deleted_jobs,
            self.create_expectations,
            self.has_jobs_left,
            self.forget_job_flow,
        )
        self._add_event_handlers()

    def _add_event_handlers(self) -> None:
        self.job_flow_informer.add_event_handler(self.handlers.job_flow_funcs())
        self.job_template_informer.add_event_handler(self.handlers.job_template_funcs())
        self.job_informer.add_event_handler(self.handlers.job_funcs())

    def _set_informers(self, informer_factory: VolcanoInformerFactory) -> None:
        job_flows, job_templates = informer_factory.job_flows(), informer_factory.job_templates()
        jobs = informer_factory.jobs()
        self.job_flow_informer, self.job_flow_lister = job_flows.informer(), job_flows.lister()
        self.job_template_informer, self.job_template_lister = job_templates.informer(), job_templates.lister()
        self.job_informer, self.job_lister = jobs.informer(), jobs.lister()

    def _new_probe_judge(
        self, runner: ProbeRunner | None, executor: Executor | None, allow_loopback: bool
    ) -> ProbeJudge:
        # dependsOn.probe (ours, docs/probe.md): network checks run on the cache's own small pool,
        # never on a worker; the Pod informer is created on the first HTTP or TCP check.
        return ProbeJudge(
            self.informer_factory,
            self.job_lister,
            self.job_template_lister,
            self.recorder,
            ProbeCache(self.clock, executor=executor),
            runner or NetworkProbeRunner(),
            self._requeue_job_flow,
            lambda namespace, name: self.queue.add(self.request_for(namespace, name)),
            allow_loopback=allow_loopback,
        )

    def _new_syncer(self) -> JobFlowSyncer:
        return JobFlowSyncer(
            self.clientset,
            (self.job_flow_lister, self.job_template_lister, self.job_lister),
            self.recorder,
            self.clock,
            self.metrics,
            self.deleted_jobs,
            self.create_expectations,
            self.probes,
            self.status_writer,
            self._requeue_job_flow,
            self.forget_job_flow,
            self.patch_fields,
        )

    request_for = staticmethod(JobFlowEventHandlers.request_for)

    def run(
        self,
        stop: threading.Event,
        workers: int = 1,
        *,
        drain_timeout: float | None = None,
        hard_stop: threading.Event | None = None,
    ) -> None:
        """Run until `stop`. Upstream runs one worker whatever --worker-threads says; we honour it."""
        self.probes.informer_stop = stop
        try:
            self.workers.run_workers(
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
            self.probes.shutdown()

    def shut_down(self, drain_timeout: float | None = None) -> None:
        self.workers.shut_down(drain_timeout)

    def flush_statuses(self) -> None:
        """Before the drain: every JobFlow whose status waits to be written is queued (status_writer.py)."""
        self.status_writer.flush()

    def sync_handler(self, req: Hashable) -> None:
        assert isinstance(req, FlowRequest)
        self.sync.handle_job_flow(req)

    def has_jobs_left(self, job_flow: Mapping[str, Any]) -> bool:
        """Whether the cache still holds a Job this JobFlow controls (retain policy `delete`)."""
        return bool(self.sync.get_all_jobs_created_by_job_flow(job_flow))

    def forget_job_flow(self, namespace: str, name: str, uid: str | None = None) -> None:
        """Drop everything this process remembers of a JobFlow that is gone: its Jobs seen deleted
        Completed (of that object only, when `uid` is known), its status writes and reservation,
        whether it was warned invalid, and (with `uid`) its probe results. One place, so no memory
        is left behind."""
        self.deleted_jobs.forget(namespace, name, uid)
        self.status_writer.forget(namespace, name)
        self.sync.forget(namespace, name)
        if uid:
            self.probes.gate.cache.forget(uid)

    def memory_sizes(self) -> dict[str, int]:
        """How many entries each per-JobFlow memory holds now: every one must fall back to its
        baseline once the JobFlows are gone (bench/soak.py reads them from /metrics)."""
        return {
            "own_writes": len(self.status_writer.own_writes),
            "own_writes_pending": len(self.status_writer.own_writes.pending_keys()),
            "create_expectations": len(self.create_expectations),
            "deleted_jobs": len(self.deleted_jobs),
            "probe_cache": len(self.probes.gate.cache),
            "status_reservations": len(self.status_writer.lane),
            "lifecycle_commands": len(self.sync.lifecycle),
            "missing_templates_logged": self.sync.missing_logged(),
            "invalid_warned": len(self.sync.invalid_warned),
        }

    def _requeue_job_flow(self, namespace: str, name: str, delay: float) -> None:
        """Back into the queue in the REACT lane: a probe check finished (0) or a poll or backoff is due."""
        req = self.request_for(namespace, name)
        if delay > 0:
            self.queue.add_after(req, delay, priority=urgency.REACT)
        else:
            self.queue.add_with_priority(req, urgency.REACT)

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
