"""The JobFlowTrigger controller (ours, docs/triggers.md): JobFlows started by an HTTP call or a watched change.

Its shape is the CronJobFlow controller's: a JobFlowTrigger informer and the shared JobFlow informer
feed a rate-limited queue of `<namespace>/<name>` keys; a sync checks the trigger (the webhook's
rules again, `TriggerFailed` once per generation when it breaks one), keeps the resource watches
to the kinds the valid triggers name (`watches.py`), and tidies the runs (`runs.py`: history
limits, `status.active`). Firings do not go through the key queue: a resource event matching a
trigger is put on a bounded queue of firings, drained by one thread, and an HTTP call fires in the
endpoint's thread (`fire`); both take a token from the trigger's bucket first (`ratelimit.py`).
"""

from __future__ import annotations

import datetime
import json
import queue
import threading
from collections.abc import Collection, Hashable, Mapping
from typing import Any, Final

import structlog

from informers import ResourceEventHandlerFuncs
from informers.errors import NotFoundError
from informers.tombstone import DeletedFinalStateUnknown
from jobflow_controller.apis import jobflowtrigger as jft
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import JOB_FLOW_TRIGGER_KIND
from jobflow_controller.cronjobflow.crd_wait import wait_for_crd
from jobflow_controller.framework import ControllerOption, QueueController, register_controller
from jobflow_controller.jobflowtrigger import events as ev
from jobflow_controller.jobflowtrigger.bindings import BindingError, bind, parse_body
from jobflow_controller.jobflowtrigger.match import event_fires
from jobflow_controller.jobflowtrigger.ratelimit import TriggerRateLimiter
from jobflow_controller.jobflowtrigger.runs import FireError, TriggerRuns
from jobflow_controller.jobflowtrigger.server import Answer, TriggerServer, stop_with
from jobflow_controller.jobflowtrigger.settings import TriggerEndpoint, TriggerSettings
from jobflow_controller.jobflowtrigger.watches import WatchSet
from jobflow_controller.kube import resources
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.validation.jobflowtrigger import job_flow_trigger_problems
from workqueue import Clock

log = structlog.get_logger(__name__)

CONTROLLER_NAME: Final = "jobflowtrigger-controller"
QUEUE_NAME: Final = "jobflowtrigger"
#: Resource events waiting to fire at once; past it an event is dropped with a Warning.
MAX_PENDING_FIRINGS: Final = 1024
MESSAGE_WAITING: Final = (
    "the JobFlowTrigger CRD (jobflowtriggers.flow.volcano.sh) is not installed; jobflowtrigger-controller waits for it"
)
MESSAGE_STARTED: Final = "the JobFlowTrigger CRD is installed; jobflowtrigger-controller starts"
#: Trigger generations whose check is remembered; past it the memory is cleared and rebuilt.
MAX_CHECKED: Final = 4096
Obj = Mapping[str, Any]


def _error(code: int, message: str) -> Answer:
    return Answer(code, {"code": code, "message": message})


@register_controller
class JobFlowTriggerController:
    """Fires JobFlowTriggers and keeps their runs and status."""

    name = CONTROLLER_NAME

    def __init__(
        self,
        clientset: Clientset,
        informer_factory: VolcanoInformerFactory,
        recorder: Any,
        *,
        watch_kinds: Collection[str] = (),
        clock: Clock | None = None,
        queue_metrics_provider: object | None = None,
        limiter: TriggerRateLimiter | None = None,
        endpoint: TriggerEndpoint | None = None,
        runs_clientset: Clientset | None = None,
    ) -> None:
        self.workers = QueueController(
            CONTROLLER_NAME,
            QUEUE_NAME,
            self.sync_handler,
            lambda key, err: log.error("dropping jobflowtrigger", jobflowtrigger=str(key), error=str(err)),
            log_keys=lambda key: {"jobflowtrigger": str(key)},
            clock=clock,
            queue_metrics_provider=queue_metrics_provider,
        )
        self.queue = self.workers.queue
        self.clock = self.workers.clock
        self.clientset = clientset
        self.informer_factory = informer_factory
        self.recorder = recorder
        self.limiter = limiter or TriggerRateLimiter()
        self.endpoint = endpoint
        self.server: TriggerServer | None = None
        job_flows = informer_factory.job_flows()
        self.job_flow_informer = job_flows.informer()
        self.job_flow_lister = job_flows.lister()
        self.job_flow_informer.add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._job_flow, update_func=self._job_flow_update, delete_func=self._job_flow
            )
        )
        self.trigger_informer: Any = None
        self.trigger_lister: Any = None
        # Firings go through their own client when given one (the manager's trigger client).
        self.runs = TriggerRuns(runs_clientset or clientset, recorder, self.children_of)
        self.watches = WatchSet(clientset, watch_kinds, self._resource_event)
        self.firings: queue.Queue[tuple[str, str, str, dict[str, object]]] = queue.Queue(MAX_PENDING_FIRINGS)
        #: Per key, the (uid, generation, message) last reported invalid: reported once per generation.
        self._reported: dict[str, tuple[str, int, str]] = {}
        self._reported_lock = threading.Lock()
        #: Each trigger generation's problems (`problems`), at most `MAX_CHECKED` kept.
        self._checked: dict[tuple[str, int], list[str]] = {}

    @classmethod
    def with_settings(
        cls,
        clientset: Clientset,
        informer_factory: VolcanoInformerFactory,
        recorder: Any,
        settings: TriggerSettings,
        *,
        queue_metrics_provider: object | None = None,
    ) -> JobFlowTriggerController:
        return cls(
            clientset,
            informer_factory,
            recorder,
            watch_kinds=settings.watch_kinds,
            endpoint=settings.endpoint,
            runs_clientset=settings.runs_clientset,
            queue_metrics_provider=queue_metrics_provider,
        )

    @classmethod
    def initialize(cls, opt: ControllerOption) -> JobFlowTriggerController:
        """Upstream's `Initialize`: the trigger settings (watchable kinds, the endpoint, the firing
        client) are the manager's `TriggerSettings` in `opt`, else none watched and no endpoint."""
        settings = opt.setting(TriggerSettings) or TriggerSettings(())
        return cls.with_settings(
            opt.clientset,
            opt.informer_factory,
            opt.recorder,
            settings,
            queue_metrics_provider=opt.queue_metrics_provider,
        )

    # -- start -----------------------------------------------------------------------------------
    def start_trigger_informer(self) -> None:
        if self.trigger_informer is not None:
            return
        informer = self.informer_factory.job_flow_triggers()
        self.trigger_lister = informer.lister()
        self.trigger_informer = informer.informer()
        self.trigger_informer.add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._enqueue, update_func=self._trigger_update, delete_func=self._enqueue
            )
        )

    def run(
        self,
        stop: threading.Event,
        workers: int = 1,
        *,
        drain_timeout: float | None = None,
        hard_stop: threading.Event | None = None,
    ) -> None:
        served = lambda: self.clientset.serves(resources.JOB_FLOW_TRIGGERS)  # noqa: E731
        if not wait_for_crd(served, stop, self.clock, waiting=MESSAGE_WAITING, started=MESSAGE_STARTED):
            return
        self.start_trigger_informer()
        firing = threading.Thread(target=self._drain_firings, args=(stop,), name="trigger-firings", daemon=True)
        firing.start()
        try:
            self.workers.run_workers(
                stop,
                workers,
                self.informer_factory.start,
                self.trigger_informer.has_synced,
                self.job_flow_informer.has_synced,
                drain_timeout=drain_timeout,
                hard_stop=hard_stop,
            )
        finally:
            self.watches.stop_all()

    def serve_endpoint(self, stop: threading.Event) -> None:
        """Serve `--trigger-address` until `stop`, on every replica, leader or standby (as the webhook):
        a standby, whose trigger informer does not run, reads the trigger from the API server."""
        if self.endpoint is None or self.server is not None:
            return
        self.server = self.endpoint.serve(self).start()
        threading.Thread(target=stop_with(self.server, stop), name="trigger-endpoint-stop", daemon=True).start()

    # -- handlers --------------------------------------------------------------------------------
    def _enqueue(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        if isinstance(obj, Mapping):
            self.queue.add(f"{meta.namespace(obj)}/{meta.name(obj)}")

    def _trigger_update(self, old: Any, new: Any) -> None:
        """Only a new spec (generation) is synced: the controller's own status writes are not."""
        if isinstance(old, Mapping) and isinstance(new, Mapping) and meta.generation(old) == meta.generation(new):
            return
        self._enqueue(new)

    def _job_flow(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        ref = meta.get_controller_of(obj) if isinstance(obj, Mapping) else None
        if ref is not None and ref.get("kind") == JOB_FLOW_TRIGGER_KIND:
            self.queue.add(f"{meta.namespace(obj)}/{ref.get('name')}")

    def _job_flow_update(self, old: Any, new: Any) -> None:
        if (
            isinstance(old, Mapping)
            and isinstance(new, Mapping)
            and meta.resource_version(old) != meta.resource_version(new)
        ):
            self._job_flow(new)

    def children_of(self, trigger: Obj) -> list[Obj]:
        """The JobFlows of its namespace the trigger controls (by uid)."""
        flows = self.job_flow_lister.job_flows(meta.namespace(trigger)).list()
        return [f for f in flows if meta.is_controlled_by(f, trigger)]

    # -- sync ------------------------------------------------------------------------------------
    def _get(self, namespace: str, name: str) -> Obj | None:
        try:
            if self.trigger_lister is None:  # a standby serving the endpoint: no cache of triggers
                fresh: Obj = self.runs.clientset.job_flow_triggers(namespace).get(name)
                return fresh
            found: Obj = self.trigger_lister.job_flow_triggers(namespace).get(name)
        except NotFoundError:
            return None
        return found

    def problems(self, trigger: Obj) -> list[str]:
        """The trigger's admission problems, checked once per (uid, generation): every sync looks at
        every trigger (the watched kinds), and a `cel` binding is compiled by the check."""
        stamp = (meta.uid(trigger), meta.generation(trigger))
        with self._reported_lock:
            cached = self._checked.get(stamp)
        if cached is not None and stamp[0]:
            return cached
        problems = job_flow_trigger_problems(trigger)
        with self._reported_lock:
            if len(self._checked) >= MAX_CHECKED:
                self._checked.clear()
            self._checked[stamp] = problems
        return problems

    def sync_handler(self, key: Hashable) -> None:
        namespace, _, name = str(key).rpartition("/")
        trigger = self._get(namespace, name)
        watch_problems = self._refresh_watches()
        if trigger is None:
            self.limiter.forget(str(key))
            with self._reported_lock:
                self._reported.pop(str(key), None)
            return
        problems = self.problems(trigger)
        source = jft.resource_source(trigger)
        if not problems and source is not None and source.watch_key in watch_problems:
            problems = [watch_problems[source.watch_key]]
        if problems:
            self._report_invalid(str(key), trigger, "; ".join(problems))
        self.runs.sync(namespace, name, self._now())

    def _report_invalid(self, key: str, trigger: Obj, message: str) -> None:
        stamp = (meta.uid(trigger), meta.generation(trigger), message)
        with self._reported_lock:
            if self._reported.get(key) == stamp:
                return
            self._reported[key] = stamp
        self.recorder.event(trigger, ev.WARNING, ev.TRIGGER_FAILED, ev.cut(ev.MESSAGE_INVALID % message))

    def _refresh_watches(self) -> dict[str, str]:
        """Watch the kinds the valid resource triggers name; the kinds that cannot be, with why."""
        if self.trigger_lister is None:
            return {}
        wanted = set()
        for trigger in self.trigger_lister.list():
            source = jft.resource_source(trigger)
            if source is not None and not self.problems(trigger):
                wanted.add(source.watch_key)
        problems = self.watches.ensure(wanted)
        for key in problems:
            # Not watched: tell every trigger naming it (each once per generation).
            for trigger in self.trigger_lister.list():
                source = jft.resource_source(trigger)
                if source is not None and source.watch_key == key:
                    self._report_invalid(f"{meta.namespace(trigger)}/{meta.name(trigger)}", trigger, problems[key])
        return problems

    def _now(self) -> datetime.datetime:
        return self.clock.wall()

    # -- firing ----------------------------------------------------------------------------------
    def _resource_event(self, watch_key: str, event: str, obj: Obj, old: Obj | None) -> None:
        """Queue one firing for every trigger of the object's namespace that this change fires."""
        if self.trigger_lister is None:
            return
        for trigger in self.trigger_lister.job_flow_triggers(meta.namespace(obj)).list():
            source = jft.resource_source(trigger)
            if (
                source is None
                or source.watch_key != watch_key
                or not event_fires(source, meta.namespace(trigger), event, obj)
            ):
                continue
            variables: dict[str, object] = {"object": obj, "oldObject": old, "type": event}
            try:
                self.firings.put_nowait((meta.namespace(trigger), meta.name(trigger), event, variables))
            except queue.Full:
                self.recorder.event(trigger, ev.WARNING, ev.TRIGGER_FAILED, f"{event} event dropped: too many pending")

    def _drain_firings(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                namespace, name, event, variables = self.firings.get(timeout=0.2)
            except queue.Empty:
                continue
            trigger = self._get(namespace, name)
            if trigger is None or self.problems(trigger):
                continue
            if not self.limiter.allow(f"{namespace}/{name}"):
                message = ev.MESSAGE_RATE % (event, self.limiter.rate, self.limiter.burst)
                self.recorder.event(trigger, ev.WARNING, ev.TRIGGER_FAILED, message)
                continue
            self._fire(trigger, variables)

    def _fire(self, trigger: Obj, variables: Mapping[str, object]) -> Answer:
        try:
            params = bind(jft.bindings(trigger), variables)
            created = self.runs.fire(meta.namespace(trigger), meta.name(trigger), params, self._now())
        except BindingError as err:
            message = ev.cut(ev.MESSAGE_BINDING % err)
            self.recorder.event(trigger, ev.WARNING, ev.TRIGGER_FAILED, message)
            return _error(400, message)
        except FireError as err:
            self.recorder.event(trigger, ev.WARNING, ev.TRIGGER_FAILED, ev.cut(str(err)))
            return _error(err.status, str(err))
        except Exception as err:  # noqa: BLE001 - the API failed: the caller is told, the trigger too
            log.warning(
                "trigger firing failed", trigger=f"{meta.namespace(trigger)}/{meta.name(trigger)}", error=str(err)
            )
            self.recorder.event(trigger, ev.WARNING, ev.TRIGGER_FAILED, ev.cut(ev.MESSAGE_CREATE % err))
            return _error(500, ev.cut(str(err)))
        return Answer(202, {"jobFlow": created, "namespace": meta.namespace(trigger)})

    # -- the HTTP endpoint's side (server.Triggers) -------------------------------------------------
    def admit(self, namespace: str, name: str) -> Answer | None:
        trigger = self._get(namespace, name)
        if trigger is None or jft.kind_of(trigger) != jft.HTTP:
            return _error(404, f"jobflowtrigger {namespace}/{name} not found, or not an http trigger")
        key = f"{namespace}/{name}"
        if not self.limiter.allow(key):
            message = f"over the trigger's rate of {self.limiter.rate:g} per second (burst {self.limiter.burst})"
            return Answer(429, {"code": 429, "message": message}, retry_after=self.limiter.retry_after(key))
        return None

    def fire(self, namespace: str, name: str, body: bytes) -> Answer:
        trigger = self._get(namespace, name)
        if trigger is None:
            return _error(404, f"jobflowtrigger {namespace}/{name} not found")
        problems = self.problems(trigger)
        if problems:
            return _error(400, ev.cut(ev.MESSAGE_INVALID % "; ".join(problems)))
        try:
            payload = parse_body(body)
        except BindingError as err:
            return _error(400, json.dumps(str(err))[1:-1])
        return self._fire(trigger, {"body": payload})
