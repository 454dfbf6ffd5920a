"""The CronJobFlow controller (ours, docs/cron.md): Kubernetes' CronJob controller (controllerv2) for JobFlows.

Its shape is CronJob's: a CronJobFlow informer and the shared JobFlow informer feed a rate-limited
queue of `<namespace>/<name>` keys; a sync (`sync.py`) reconciles one CronJobFlow with the JobFlows it
controls and returns the delay to its next schedule time, and the key is put back with `add_after`
for then. Nothing polls: between two schedule times a CronJobFlow costs nothing unless it or one of
its runs changes. Time is the injected clock's `wall()`, so the tests drive it.

The CronJobFlow informer is made only once the API server serves the CRD (`crd_wait.py`): without
it the controller logs one line and waits, and nothing else of the process waits for it.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping
from typing import Any, Self, Unpack

import structlog

from informers import ResourceEventHandlerFuncs
from informers.errors import NotFoundError
from informers.tombstone import DeletedFinalStateUnknown
from jobflow_controller.apis import cronjobflow as cjf
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import CRON_JOB_FLOW_KIND
from jobflow_controller.apis.cron_schedule import ScheduleError, TimeZoneError, next_schedule_delay, parse_schedule
from jobflow_controller.cronjobflow.crd_wait import wait_for_crd
from jobflow_controller.cronjobflow.metrics import CronJobFlowMetrics
from jobflow_controller.cronjobflow.stored import earliest_time
from jobflow_controller.cronjobflow.sync import CronJobFlowSyncer
from jobflow_controller.framework import ControllerOption, Stops, Wiring, register_controller
from jobflow_controller.kube import resources

log = structlog.get_logger(__name__)

CONTROLLER_NAME = "cronjobflow-controller"
QUEUE_NAME = "cronjobflow"
#: CronJob's controller retries a failed sync for ever (with the rate limiter's backoff): a run
#: that cannot be created now must still be tried until its deadline passes.
RETRY_FOREVER = -1


def _split_key(key: str) -> tuple[str, str]:
    namespace, _, name = key.rpartition("/")
    return namespace, name


@register_controller
class CronJobFlowController:
    """Creates a CronJobFlow's JobFlows on its schedule, as CronJob creates Jobs."""

    name = CONTROLLER_NAME

    def __init__(self, opt: ControllerOption) -> None:
        self.wiring = Wiring(
            opt,
            CONTROLLER_NAME,
            QUEUE_NAME,
            self.sync_handler,
            None,  # CronJob's controller retries for ever: nothing is dropped
            log_keys=lambda key: {"cronjobflow": str(key)},
            max_requeue_num=RETRY_FOREVER,
        )
        self.workers, self.queue, self.clock = self.wiring.workers, self.wiring.queue, self.wiring.clock
        self.clientset, self.informer_factory, self.recorder = opt.clientset, opt.informer_factory, opt.recorder
        self.metrics = opt.setting(CronJobFlowMetrics)
        self.syncer = CronJobFlowSyncer(opt.clientset, opt.recorder, self.metrics)
        self.job_flow_informer, self.job_flow_lister = self.wiring.watch(
            opt.informer_factory.job_flows(),
            ResourceEventHandlerFuncs(
                add_func=self.add_job_flow, update_func=self.update_job_flow, delete_func=self.delete_job_flow
            ),
        )
        self.cron_job_flow_informer: Any = None
        self.cron_job_flow_lister: Any = None
        #: Per key, the latest schedule time whose missed times were counted (each is counted once).
        self._missed_through: dict[str, Any] = {}
        self._missed_lock = threading.Lock()

    @classmethod
    def initialize(cls, opt: ControllerOption) -> Self:
        return cls(opt)

    # -- the CronJobFlow informer, once the CRD is served ------------------------------------------
    def start_cron_job_flow_informer(self) -> None:
        """Make the CronJobFlow informer and its handlers (the CRD must be served by now)."""
        if self.cron_job_flow_informer is not None:
            return
        self.cron_job_flow_informer, self.cron_job_flow_lister = self.wiring.watch(
            self.informer_factory.cron_job_flows(),
            ResourceEventHandlerFuncs(
                add_func=self.add_cron_job_flow,
                update_func=self.update_cron_job_flow,
                delete_func=self.delete_cron_job_flow,
            ),
        )

    def run(self, stop: threading.Event, workers: int = 1, **stops: Unpack[Stops]) -> None:
        if not wait_for_crd(lambda: self.clientset.serves(resources.CRON_JOB_FLOWS), stop, self.clock):
            return
        self.start_cron_job_flow_informer()
        self.wiring.run(stop, workers, **stops)

    # -- handlers ---------------------------------------------------------------------------------
    def enqueue(self, obj: Any, after: float | None = None) -> None:
        if not isinstance(obj, Mapping):
            return
        key = f"{meta.namespace(obj)}/{meta.name(obj)}"
        if after is None:
            self.queue.add(key)
        else:
            self.queue.add_after(key, after)

    def add_cron_job_flow(self, obj: Any, is_in_initial_list: bool = False) -> None:
        self.enqueue(obj)

    def update_cron_job_flow(self, old: Any, new: Any) -> None:
        """CronJob's `updateCronJob`: a new schedule or zone is re-planned at once, to its next time;
        any other change is synced now."""
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            return
        if (cjf.schedule(old), cjf.time_zone(old)) != (cjf.schedule(new), cjf.time_zone(new)):
            try:
                schedule = parse_schedule(cjf.schedule(new), cjf.time_zone(new))
            except (ScheduleError, TimeZoneError):
                self.enqueue(new)  # the sync says what is wrong, with its Warning
                return
            now = self.clock.wall()
            try:
                delay = next_schedule_delay(schedule, now, earliest_time(new, now))
            except ScheduleError:
                delay = None  # no next time: the sync says so with its Warning
            self.enqueue(new, delay)
            return
        self.enqueue(new)

    def delete_cron_job_flow(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        self.enqueue(obj)

    def _resolve_controller_ref(self, job_flow: Any) -> Mapping[str, Any] | None:
        """CronJob's `resolveControllerRef`: the CronJobFlow controlling `job_flow`, by name and uid."""
        if not isinstance(job_flow, Mapping) or self.cron_job_flow_lister is None:
            return None
        ref = meta.get_controller_of(job_flow)
        if ref is None or ref.get("kind") != CRON_JOB_FLOW_KIND:
            return None
        try:
            owner: Mapping[str, Any] = self.cron_job_flow_lister.cron_job_flows(meta.namespace(job_flow)).get(
                str(ref.get("name") or "")
            )
        except NotFoundError:
            return None
        return owner if meta.uid(owner) == str(ref.get("uid") or "") else None

    def add_job_flow(self, obj: Any, is_in_initial_list: bool = False) -> None:
        if isinstance(obj, Mapping) and meta.metadata(obj).get("deletionTimestamp"):
            self.delete_job_flow(obj)
            return
        self.enqueue(self._resolve_controller_ref(obj))

    def update_job_flow(self, old: Any, new: Any) -> None:
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            return
        if meta.resource_version(old) == meta.resource_version(new):
            return  # a resync
        if meta.get_controller_of(old) != meta.get_controller_of(new):
            self.enqueue(self._resolve_controller_ref(old))
        self.enqueue(self._resolve_controller_ref(new))

    def delete_job_flow(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        self.enqueue(self._resolve_controller_ref(obj))

    # -- sync -------------------------------------------------------------------------------------
    def children_of(self, cron_job_flow: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """CronJob's `getJobsToBeReconciled`: the JobFlows of its namespace it controls (by uid, so a
        same-named JobFlow made by someone else, or by an earlier CronJobFlow of the name, is not ours)."""
        namespace_flows = self.job_flow_lister.job_flows(meta.namespace(cron_job_flow)).list()
        return [
            flow
            for flow in namespace_flows
            if meta.is_controlled_by(flow, cron_job_flow)
            and (meta.get_controller_of(flow) or {}).get("kind") == CRON_JOB_FLOW_KIND
        ]

    def sync_handler(self, key: Hashable) -> None:
        namespace, name = _split_key(str(key))
        try:
            cron_job_flow = self.cron_job_flow_lister.cron_job_flows(namespace).get(name)
        except NotFoundError:
            log.debug("CronJobFlow not found, it may have been deleted", cronjobflow=str(key))
            with self._missed_lock:
                self._missed_through.pop(str(key), None)
            return
        if self.metrics is not None:
            self.metrics.observe_namespace(namespace)
        result = self.syncer.sync(cron_job_flow, self.children_of(cron_job_flow), self.clock.wall())
        decision = result.decision
        if decision is not None and decision.missed > 0 and decision.missed_time is not None:
            self._count_missed(str(key), namespace, decision.missed, decision.missed_time)
        if result.requeue_after is not None:
            log.debug("requeue at the next schedule time", cronjobflow=str(key), after=round(result.requeue_after, 3))
            self.queue.add_after(str(key), max(0.0, result.requeue_after))

    def _count_missed(self, key: str, namespace: str, count: int, through: Any) -> None:
        with self._missed_lock:
            previous = self._missed_through.get(key)
            if previous is not None and through <= previous:
                return
            self._missed_through[key] = through
        if self.metrics is not None:
            self.metrics.observe_missed(namespace, count)
