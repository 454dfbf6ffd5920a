"""The JobFlow controller's struct: clients, informers, listers, recorder, queue (jobflow_controller.go).

What upstream keeps in one Go struct is composed here from plain objects, each named for its part:
`workers` (framework.py: the queue and the worker loop in three layers), `job_flow_queue`
(`JobFlowQueue`, below: the queue as the parts use it, one request per JobFlow, its lane and delay;
upstream's struct holds the queue and `enqueueJobFlow`), `handlers` (handler.py: which
informer events enqueue what), `sync` (sync.py: observe, plan with action.py, execute),
`pacing` and `status_writer` (pacing.py, status_writer.py: when and how a status is written),
`probes` (probes/judge.py: `dependsOn.probe`), and `memories` (memories.py: every per-JobFlow
memory, forgotten together). Each gets what it uses through its constructor; no callbacks.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Self, Unpack

import structlog

from jobflow_controller.apis import Action, Event, FlowRequest
from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.framework import (
    DEFAULT_MAX_REQUEUE_NUM,
    ControllerOption,
    QueueController,
    Stops,
    Wiring,
    register_controller,
)
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow import urgency
from jobflow_controller.jobflow.expectations import CreateExpectations
from jobflow_controller.jobflow.handler import JobFlowEventHandlers
from jobflow_controller.jobflow.memories import JobFlowMemories
from jobflow_controller.jobflow.observe import DeletedJobs, JobFlowObserver
from jobflow_controller.jobflow.pacing import (
    STATUS_WRITE_BURST,
    STATUS_WRITE_INTERVAL,
    STATUS_WRITE_QPS,
    StatusPacing,
)
from jobflow_controller.jobflow.probes import NetworkProbeRunner, ProbeCache, ProbeRunner
from jobflow_controller.jobflow.probes.judge import ProbeJudge
from jobflow_controller.jobflow.results_reader import ResultsReader, pod_getter
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobflow.status_writer import OwnWrites, StatusWriter
from jobflow_controller.jobflow.sync import JobFlowSyncer
from jobflow_controller.jobflow.template_ref import TemplateRefs
from jobflow_controller.jobflow.template_source import TemplateSource
from jobflow_controller.kube import resources
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import VolcanoInformerFactory
from workqueue import Clock, FairShare, PriorityStorage, RateLimitingQueue

log = structlog.get_logger(__name__)

CONTROLLER_NAME = "jobflow-controller"


def request_for(namespace: str, name: str) -> FlowRequest:
    """The one key of a JobFlow's syncs, whatever the trigger."""
    return FlowRequest(namespace, name, action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)


class JobFlowQueue:
    """The controller's work queue as its parts use it (upstream's `queue` and `enqueueJobFlow`).

    Every trigger of a JobFlow builds the same key (`request_for`), so triggers for one JobFlow
    collapse. What differs is the lane (urgency.py) and when: `add` (the default lane, now), `react`
    (the `REACT` lane, now or after a delay: a check finished, a backoff or a poll or a deadline is
    due), `add_after` (a lane and a delay, the status pacing's). The parts get this object, not the
    controller's functions, so none of them needs a callback to put a JobFlow back.
    """

    request_for = staticmethod(request_for)

    def __init__(self, workers: QueueController) -> None:
        self._workers = workers
        self.queue: RateLimitingQueue[Hashable] = workers.queue
        self.clock: Clock = workers.clock

    def add(self, namespace: str, name: str) -> None:
        """Sync the JobFlow in the default lane."""
        self.queue.add(request_for(namespace, name))

    def add_request(self, req: Hashable) -> None:
        self.queue.add(req)

    def react(self, namespace: str, name: str, delay: float = 0.0) -> None:
        """Sync the JobFlow in the `REACT` lane, after `delay` seconds (0: now)."""
        self.add_after(request_for(namespace, name), delay, urgency.REACT)

    def add_after(self, req: Hashable, delay: float, lane: int) -> None:
        """`req` in `lane`, after `delay` seconds (at most 0: now)."""
        if delay > 0:
            self.queue.add_after(req, delay, priority=lane)
        else:
            self.queue.add_with_priority(req, lane)

    def added_while_processing(self, req: Hashable) -> bool:
        """Whether `req` was queued again while a worker holds it (its next sync comes anyway)."""
        return self.queue.added_while_processing(req)

    def others_waiting(self) -> bool:
        """Whether any sync waits ready in the queue (not counting those held for later)."""
        return len(self.queue) > 0

    def stopping(self) -> bool:
        """The queue shuts down, or the stop is hard: nothing is left for later any more."""
        return self.queue.shutting_down() or self._workers.must_stop_now()


@dataclass(frozen=True)
class JobFlowOptions:
    """How the JobFlow controller is built: its flags (manager/config.py), and the probe checks' runner."""

    max_requeue_num: int = DEFAULT_MAX_REQUEUE_NUM
    status_write_interval: float = STATUS_WRITE_INTERVAL
    status_write_qps: float = STATUS_WRITE_QPS
    status_write_burst: int = STATUS_WRITE_BURST
    #: --jobflow-patch-allowed-fields (None: every field).
    patch_fields: PatchFields | None = None
    #: Let probe checks reach loopback addresses (a local control plane's simulated pods).
    probe_allow_loopback: bool = False
    #: The probe checks' runner and pool (tests hand in fakes; None: the network and a small pool).
    probe_runner: ProbeRunner | None = None
    probe_executor: Executor | None = None


@register_controller
class JobFlowController:
    """Creates each flow's Job once its dependencies Completed and keeps the JobFlow status true."""

    name = CONTROLLER_NAME

    def __init__(
        self,
        clientset: Clientset,
        informer_factory: VolcanoInformerFactory,
        recorder: Any,
        options: JobFlowOptions | None = None,
        *,
        metrics: JobFlowMetrics | None = None,
        clock: Clock | None = None,
        queue_metrics_provider: object | None = None,
    ) -> None:
        options = options or JobFlowOptions()
        #: The namespaces' turns in the queue, charged with each sync's duration (urgency.py).
        self.fair_share = FairShare(urgency.SYNC_COST_ESTIMATE)
        # Priority lanes (urgency.py): the syncs that may create a dependent go before status-only ones;
        # within a lane the namespaces take turns (docs/fairness.md).
        opt = ControllerOption(
            clientset, informer_factory, recorder, options.max_requeue_num, queue_metrics_provider, clock
        )
        self.wiring = Wiring(
            opt,
            CONTROLLER_NAME,
            c.QUEUE_NAME,
            self.sync_handler,
            self.on_dropped,
            log_keys=self.log_keys,
            before_drain=self.flush_statuses,
            queue_storage=PriorityStorage(urgency.LANE_SHARES, urgency.tenant_of, self.fair_share),
        )
        self.workers, self.queue, self.clock = self.wiring.workers, self.wiring.queue, self.wiring.clock
        self.job_flow_queue = JobFlowQueue(self.workers)
        self.clientset, self.informer_factory, self.recorder = clientset, informer_factory, recorder
        self.metrics = metrics or JobFlowMetrics()
        self.memories = JobFlowMemories()
        self.deleted_jobs = DeletedJobs()
        self.create_expectations = CreateExpectations(self.clock)
        self._set_informers(informer_factory)
        self.status_writer = self._new_status_writer(options)
        self.probes = self._new_probe_judge(options)
        self.patch_fields = options.patch_fields
        for memory in (self.deleted_jobs, self.status_writer, self.probes, self.create_expectations):
            self.memories.register(memory)
        self.sync = self._new_syncer()
        self.handlers = JobFlowEventHandlers(
            self.job_flow_queue,
            (self.job_flow_lister, self.job_lister),
            self.status_writer,
            self.deleted_jobs,
            self.create_expectations,
            self.memories,
        )
        self._add_event_handlers()

    def _add_event_handlers(self) -> None:
        self.job_flow_informer.add_event_handler(self.handlers.job_flow_funcs())
        self.job_template_informer.add_event_handler(self.handlers.job_template_funcs())
        self.job_informer.add_event_handler(self.handlers.job_funcs())

    def _set_informers(self, informer_factory: VolcanoInformerFactory) -> None:
        self.job_flow_informer, self.job_flow_lister = self.wiring.watch(informer_factory.job_flows())
        self.job_template_informer, self.job_template_lister = self.wiring.watch(informer_factory.job_templates())
        self.job_informer, self.job_lister = self.wiring.watch(informer_factory.jobs())

    @classmethod
    def initialize(cls, opt: ControllerOption) -> Self:
        """From the manager's options: the JobFlow flags and metrics are `opt`'s settings of their types."""
        options = opt.setting(JobFlowOptions) or JobFlowOptions(max_requeue_num=opt.max_requeue_num)
        return cls(
            opt.clientset,
            opt.informer_factory,
            opt.recorder,
            options,
            metrics=opt.setting(JobFlowMetrics),
            clock=opt.clock,
            queue_metrics_provider=opt.queue_metrics_provider,
        )

    def _new_status_writer(self, options: JobFlowOptions) -> StatusWriter:
        own_writes = OwnWrites()
        self.pacing = StatusPacing(
            self.job_flow_queue,
            self.clientset,
            own_writes,
            interval=options.status_write_interval,
            qps=options.status_write_qps,
            burst=options.status_write_burst,
        )
        return StatusWriter(self.clientset, self.job_flow_queue, self.pacing, own_writes)

    def _new_template_refs(self) -> TemplateRefs:
        """Runs from a template (docs/templates.md): the templates' cache starts once its CRD is served."""
        self.template_source = TemplateSource(
            self.informer_factory,
            lambda: self.clientset.serves(resources.JOB_FLOW_TEMPLATES),
            self.job_flow_lister,
            self.job_flow_queue,
        )
        refs = TemplateRefs(
            self.template_source, self.clientset, self.recorder, self.job_flow_queue, self.status_writer
        )
        self.memories.register(refs)
        return refs

    def _new_syncer(self) -> JobFlowSyncer:
        observer = JobFlowObserver(
            (self.job_flow_lister, self.job_template_lister, self.job_lister),
            self.status_writer,
            self.deleted_jobs,
            self.create_expectations,
            self.probes,
            self.clock,
            self.patch_fields,
            ResultsReader(pod_getter(lambda namespace: self.clientset.pods(namespace))),
        )
        observer.templates = self._new_template_refs()  # docs/templates.md
        return JobFlowSyncer(
            self.clientset,
            self.recorder,
            self.job_flow_queue,
            observer,
            self.status_writer,
            self.metrics,
            self.memories,
        )

    def _new_probe_judge(self, options: JobFlowOptions) -> ProbeJudge:
        # dependsOn.probe (ours, docs/probe.md): network checks run on the cache's own small pool,
        # never on a worker; the Pod informer is created on the first HTTP or TCP check.
        return ProbeJudge(
            self.informer_factory,
            self.job_lister,
            self.job_template_lister,
            self.recorder,
            self.job_flow_queue,
            ProbeCache(self.clock, executor=options.probe_executor),
            options.probe_runner or NetworkProbeRunner(),
            allow_loopback=options.probe_allow_loopback,
        )

    request_for = staticmethod(request_for)

    def run(self, stop: threading.Event, workers: int = 1, **stops: Unpack[Stops]) -> None:
        """Run until `stop`. Upstream runs one worker whatever --worker-threads says; we honour it."""
        self.probes.informer_stop = stop
        self.template_source.start(stop)
        try:
            self.wiring.run(stop, workers, **stops)
        finally:
            self.probes.shutdown()

    def shut_down(self, drain_timeout: float | None = None) -> None:
        self.workers.shut_down(drain_timeout)

    def flush_statuses(self) -> None:
        """Before the drain: every JobFlow whose status waits to be written is queued (status_writer.py)."""
        self.status_writer.flush()

    def sync_handler(self, req: Hashable) -> None:
        assert isinstance(req, FlowRequest)
        started = self.clock.now()
        try:
            self.sync.handle_job_flow(req)
        finally:
            self.fair_share.charge(urgency.tenant_of(req), self.clock.since(started))

    def forget_job_flow(self, namespace: str, name: str, uid: str | None = None) -> None:
        """Drop everything this process remembers of a JobFlow that is gone (memories.py): of that
        object only when `uid` is known."""
        self.memories.forget(namespace, name, uid)

    def memory_sizes(self) -> dict[str, int]:
        """How many entries each per-JobFlow memory holds now: every one must fall back to its
        baseline once the JobFlows are gone (bench/soak.py reads them from /metrics)."""
        return self.memories.sizes()

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
