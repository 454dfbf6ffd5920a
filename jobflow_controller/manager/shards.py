"""The sharded manager's parts: one controller unit per held shard (--shards=N; docs/operations.md).

A unit is what the single-replica manager runs, cut down to one shard: informers that see only the
shard's namespaces, queues and workers of both controllers, and its own client, whose cancel event
is the unit's hard stop. Losing a shard's Lease therefore stops that unit's requests and syncs at
once (nothing more is sent for the shard: its next holder may be writing already) while the
process, its other units, the event broadcaster and the endpoints go on. All units share the
process's QPS budget, event recorder and metrics, and its source informers (`SharedSources`): every
object is listed, watched and decoded once per replica however many shards it holds, and a unit's
informers are fed from those caches (sharding/fanout.py), so a takeover lists nothing from the API.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable

import structlog
from prometheus_client import CollectorRegistry, Gauge

from informers import ListerWatcher
from jobflow_controller.cronjobflow import CronJobFlowMetrics
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.kube import resources
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.kube.resources import Resource
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.manager.config import Options
from jobflow_controller.manager.controllers import build_controllers, controller_option, run_controllers
from jobflow_controller.manager.stops import set_when_any
from jobflow_controller.sharding import ShardFilter, ordinal_from_name
from jobflow_controller.sharding.fanout import LocalListerWatcher, Owns, SourceHub

log = structlog.get_logger("jobflow_controller.manager")

#: new_client(cancel): a client under the process's QPS budget that `cancel` stops sending.
NewClient = Callable[[threading.Event], RestClient]

#: The gauge of how many shards this replica runs a unit for.
SHARDS_HELD = "jobflow_controller_shards_held"


def preferred_shard(options: Options, pod_name: str | None = None) -> int | None:
    """--shard-index, else the StatefulSet ordinal of $POD_NAME (or the hostname) when it is a shard."""
    if options.shard_index is not None:
        return options.shard_index
    name = pod_name if pod_name is not None else (os.environ.get("POD_NAME") or socket.gethostname())
    ordinal = ordinal_from_name(name)
    if ordinal is None or ordinal >= options.shards:
        return None
    return ordinal


class SharedSources:
    """The replica's source informers, one per resource, made when a unit first asks for it."""

    def __init__(self, factory: VolcanoInformerFactory, stop: threading.Event) -> None:
        self._factory = factory
        self._stop = stop
        self._mu = threading.Lock()
        self._hubs: dict[Resource, SourceHub] = {}

    def hub(self, resource: Resource) -> SourceHub:
        with self._mu:
            hub = self._hubs.get(resource)
            if hub is None:
                hub = self._hubs[resource] = SourceHub(self._factory.informer_for_resource(resource))
                self._factory.start(self._stop)
            return hub

    def view(self, resource: Resource, owns: Owns, stop: threading.Event) -> LocalListerWatcher:
        return LocalListerWatcher([self.hub(resource)], owns, stop)

    def hubs(self) -> dict[Resource, SourceHub]:
        with self._mu:
            return dict(self._hubs)

    def shutdown(self) -> None:
        self._factory.shutdown()


class ShardUnit:
    """Both controllers for one shard: informers filtered to its namespaces, a client it can cancel."""

    def __init__(
        self,
        shard: int,
        *,
        new_client: NewClient,
        sources: SharedSources,
        options: Options,
        recorder: object,
        jobflow_metrics: Callable[[], JobFlowMetrics],
        queue_metrics: object,
        cron_metrics: Callable[[], CronJobFlowMetrics | None] = lambda: None,
    ) -> None:
        self.shard = shard
        self.options = options
        # Set when the Lease is lost or the drain's deadline passed: the unit sends nothing more.
        self.hard_stop = threading.Event()
        self.rest = new_client(self.hard_stop)
        shard_filter = ShardFilter(shard, options.shards)
        self.views: list[LocalListerWatcher] = []

        def only_this_shard(lw: ListerWatcher) -> ListerWatcher:
            # The API's ListerWatcher of the resource is replaced by a view of the replica's cache.
            view = sources.view(getattr(lw, "resource"), shard_filter.owns, self.hard_stop)  # noqa: B009
            self.views.append(view)
            return view

        clientset = Clientset(self.rest)
        self.factory = VolcanoInformerFactory(
            clientset,
            custom_resync={resources.JOB_FLOWS: options.resync_period},
            wrap_lister_watcher=only_this_shard,
            transform_objects=False,
        )
        opt = controller_option(
            clientset, self.factory, recorder, options, jobflow_metrics, queue_metrics, cron_metrics
        )
        self.controllers = build_controllers(opt, options.controllers)

    def has_synced(self) -> bool:
        return self.factory.has_synced()

    def run(self, stop: threading.Event, lost: threading.Event) -> None:
        """Run until `stop` (a drain) or `lost` (a hard stop: the shard's Lease is gone)."""
        unit_stop = threading.Event()
        set_when_any(unit_stop, stop, lost)
        set_when_any(self.hard_stop, lost)
        log.info("starting shard unit", shard=self.shard, controllers=[c.name for c in self.controllers])
        try:
            run_controllers(self.controllers, unit_stop, self.hard_stop, self.options)
        finally:
            # Whatever ended the unit, it is over: nothing of it may reach the API any more.
            self.hard_stop.set()
            unit_stop.set()
            self.factory.shutdown()
            for view in self.views:
                view.close()
            self.rest.close()


class ShardUnits:
    """The units running now, for /readyz and the shards-held gauge."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._mu = threading.Lock()
        self._units: dict[int, ShardUnit] = {}
        gauge = Gauge(SHARDS_HELD, "Number of JobFlow shards this replica runs controllers for.", registry=registry)
        gauge.set_function(lambda: float(len(self.held())))

    def add(self, unit: ShardUnit) -> None:
        with self._mu:
            self._units[unit.shard] = unit

    def remove(self, unit: ShardUnit) -> None:
        with self._mu:
            if self._units.get(unit.shard) is unit:
                del self._units[unit.shard]

    def held(self) -> list[int]:
        with self._mu:
            return sorted(self._units)

    def units(self) -> list[ShardUnit]:
        with self._mu:
            return list(self._units.values())

    def get(self, shard: int) -> ShardUnit | None:
        with self._mu:
            return self._units.get(shard)

    def not_synced(self) -> list[int]:
        with self._mu:
            units = list(self._units.values())
        return sorted(unit.shard for unit in units if not unit.has_synced())
