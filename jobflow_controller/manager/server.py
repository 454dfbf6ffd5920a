"""Wiring and lifetime of the controller manager (Volcano's app/server.go, for two controllers).

Start-up: client, event broadcaster, informer factory, controllers, HTTP endpoints. The informer
caches warm up at once on every replica; the controllers' workers start only on the leader (or at
once with --leader-elect=false). Shutdown on the first SIGTERM/SIGINT: the workers drain what is
queued within --graceful-shutdown-timeout, then the lease is released so another replica takes
over at once, queued events are flushed, and the process exits 0. A second signal exits 1 at once;
a lost lease exits 1, as upstream's `klog.Fatalf("leaderelection lost")` does.

With --shards=N (off by default) the process-wide controllers are not built: every shard whose
Lease this replica wins gets a unit of its own (manager/shards.py), started on the win and stopped
hard on the loss, while the process, its endpoints and its other units go on.

Two events tell the parts how hard to stop. `stop` (the signal) asks for a drain. `hard_stop`
(the lease is lost, or the drain's deadline passed) means another replica may be writing already:
no worker starts another sync, and the controllers' client sends no further request, not even one
that was waiting for a token. Events go through a client of their own, so the last ones recorded
before a graceful exit are still flushed.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable

import structlog
from prometheus_client import CollectorRegistry, disable_created_metrics

from jobflow_controller import __version__
from jobflow_controller.cronjobflow import CronJobFlowMetrics
from jobflow_controller.jobflow import JobFlowController
from jobflow_controller.jobflow.constants import COMPONENT
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobflowtrigger import TriggerEndpoint, TriggerSettings
from jobflow_controller.kube import resources
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import ConfigError, build_config
from jobflow_controller.kube.event_sink import KubeEventSink
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.kube.rest import RestClient, default_user_agent
from jobflow_controller.kube.template_getter import template_getter
from jobflow_controller.leaderelection import default_identity, new_leader_healthz_adaptor
from jobflow_controller.manager.config import Options
from jobflow_controller.manager.controllers import (
    Controller,
    build_controllers,
    controller_option,
    run_controllers,
    serve_controller_endpoints,
)
from jobflow_controller.manager.election import leader_locks, run_leader_elected, shard_campaign
from jobflow_controller.manager.endpoints import Endpoints, StartupError
from jobflow_controller.manager.healthz import split_address
from jobflow_controller.manager.memory_trim import start_memory_trim
from jobflow_controller.manager.metrics import MemoryCollector, RestClientMetrics
from jobflow_controller.manager.shards import ShardUnit, ShardUnits, SharedSources, preferred_shard
from jobflow_controller.manager.stops import set_when_any
from jobflow_controller.record import EventBroadcaster
from jobflow_controller.sharding import ShardCampaign
from workqueue import PrometheusMetricsProvider

log = structlog.get_logger("jobflow_controller.manager")

#: The triggers' client: firings, and the endpoint's TokenReviews and SubjectAccessReviews
#: (docs/triggers.md, "Limits").
TRIGGER_QPS = 20.0
TRIGGER_BURST = 40
#: The sharded campaign's client: one LIST of the Leases a retry period, stale member Leases' deletes.
LEASE_QPS = 5.0
LEASE_BURST = 10
#: How long past the lease a leader may fail to renew before /livez reports it (client-go's 20 s).
LEADER_HEALTHZ_TIMEOUT = 20.0


def start_event_broadcaster(rest: RestClient) -> EventBroadcaster:
    """Events go to the log and, through `rest`, to the API server, as upstream's managers set up."""
    broadcaster = EventBroadcaster()
    broadcaster.start_structured_logging()
    broadcaster.start_recording_to_sink(KubeEventSink.from_rest_client(rest))
    return broadcaster


class Manager:
    """One process: both controllers, their shared caches, leader election, health and metrics."""

    def __init__(self, options: Options) -> None:
        self.options = options
        # Go's client_golang has no `_created` series; dashboards would see unfamiliar names.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry()
        self.stop = threading.Event()
        # Set when the lease is lost or the drain deadline passed: start nothing, send nothing.
        self.hard_stop = threading.Event()
        self.exit_code = 0
        self.preferred_shard = self._preferred_shard()
        config = build_config(options.kubeconfig, options.master)
        self._user_agent = default_user_agent()
        self._request_metrics = RestClientMetrics(self.registry)
        self._client = client = functools.partial(
            RestClient,
            config,
            qps=options.kube_api_qps,
            burst=options.kube_api_burst,
            user_agent=self._user_agent,
            metrics=self._request_metrics,
        )
        self.rest = client(cancel=self.hard_stop)
        # Events are recorded by the controllers but sent by the broadcaster's own thread; they
        # must still go out after the hard stop (the graceful exit flushes them), so they use a
        # client the hard stop does not cancel, with a QPS budget of its own (upstream's events go
        # through kubeClient, its Jobs and JobFlows through vcClient: two clientsets, two buckets).
        self.event_rest = client()
        self.trigger_rest: RestClient | None = None
        self.clientset = Clientset(self.rest)
        self.broadcaster = start_event_broadcaster(self.event_rest)
        self.recorder = self.broadcaster.new_recorder(COMPONENT)
        # Upstream's factories have resync 0; ours replays JobFlows every --resync-period so that an
        # unfinished JobFlow is synced again even when no event comes (docs/operations.md).
        self.factory = VolcanoInformerFactory(
            self.clientset, custom_resync={resources.JOB_FLOWS: options.resync_period}
        )
        self._queue_metrics = PrometheusMetricsProvider(self.registry)
        self._jobflow_counters: JobFlowMetrics | None = None
        self._cron_counters: CronJobFlowMetrics | None = None
        self.controllers: list[Controller] = []
        #: With --shards, the units of the shards held now (the controllers above stay empty).
        self.shard_units: ShardUnits | None = None
        self.campaign: ShardCampaign | None = None
        self.shard_sources: SharedSources | None = None
        if options.shards == 0:
            self.controllers = self._process_controllers(client)
        else:
            self._sharded_parts()
        self.registry.register(MemoryCollector(self._memory_sizes))
        # The one Lease of the process has a watchdog (on /livez); with --shards, /livez asks the campaign.
        leased = options.leader_elect and not options.shards
        self.watchdog = new_leader_healthz_adaptor(LEADER_HEALTHZ_TIMEOUT) if leased else None
        self.endpoints = Endpoints(
            options,
            self.registry,
            leader_election=self._leader_health,
            informer_sync=self._caches_synced,
            shutdown=self._not_stopping,
        )
        self.endpoints.templates = template_getter(self.clientset)  # docs/templates.md

    def _sharded_parts(self) -> None:
        self.shard_units = ShardUnits(self.registry)
        # One informer per resource for the replica, shared by its units (no JobFlow resync here:
        # each unit's own informers replay their JobFlows every --resync-period).
        self.shard_sources = SharedSources(VolcanoInformerFactory(self.clientset), self.stop)

    def _process_controllers(self, client: Callable[..., RestClient]) -> list[Controller]:
        """The controllers of the process (without --shards).

        Triggers fire (and review their callers) through a client with a QPS budget of its own
        (`TRIGGER_QPS`), as events do: a flood of firings cannot spend the controllers' budget."""
        self.trigger_rest = trigger_rest = client(qps=TRIGGER_QPS, burst=TRIGGER_BURST, cancel=self.hard_stop)
        metrics = (self._jobflow_metrics, self._queue_metrics, self._cron_metrics)
        triggers = TriggerSettings(
            tuple(self.options.trigger_watch_kinds), self._trigger_endpoint(trigger_rest), Clientset(trigger_rest)
        )
        opt = controller_option(self.clientset, self.factory, self.recorder, self.options, *metrics, triggers)
        return build_controllers(opt, self.options.controllers)

    def _trigger_endpoint(self, rest: RestClient) -> TriggerEndpoint | None:
        """--trigger-address's endpoint (not in sharded mode: one port, one process-wide server)."""
        o = self.options
        if not o.trigger_address:
            return None
        return TriggerEndpoint(
            split_address(o.trigger_address),
            Clientset(rest),
            o.trigger_tls_cert_file,
            o.trigger_tls_private_key_file,
        )

    def _preferred_shard(self) -> int | None:
        o = self.options
        if not o.shards:
            return None
        preferred = preferred_shard(o)
        if not o.leader_elect and preferred is None:
            raise ConfigError(
                "--shards with --leader-elect=false runs one fixed shard: give --shard-index, or a $POD_NAME "
                f"ending in an ordinal below {o.shards}"
            )
        return preferred

    def _jobflow_metrics(self) -> JobFlowMetrics:
        # One set of counters for the process, however many shard units come and go.
        if self._jobflow_counters is None:
            self._jobflow_counters = JobFlowMetrics(self.registry)
        return self._jobflow_counters

    def _cron_metrics(self) -> CronJobFlowMetrics:
        # One set for the process, as the JobFlow counters.
        if self._cron_counters is None:
            self._cron_counters = CronJobFlowMetrics(self.registry)
        return self._cron_counters

    def _memory_sizes(self) -> list[dict[str, int]]:
        """Each running JobFlow controller's memory sizes (every held shard's, in sharded mode)."""
        controllers = list(self.controllers)
        if self.shard_units is not None:
            controllers += [ctrl for unit in self.shard_units.units() for ctrl in unit.controllers]
        return [ctrl.memory_sizes() for ctrl in controllers if isinstance(ctrl, JobFlowController)]

    def _shard_client(self, cancel: threading.Event) -> RestClient:
        """A shard unit's client: its hard stop cancels it alone; the QPS budget is the process's."""
        return RestClient(
            self.rest.configuration,
            user_agent=self._user_agent,
            metrics=self._request_metrics,
            cancel=cancel,
            limiter=self.rest.limiter,
        )

    def _new_unit(self, shard: int) -> ShardUnit:
        assert self.shard_sources is not None  # sharded mode only
        return ShardUnit(
            shard,
            new_client=self._shard_client,
            sources=self.shard_sources,
            options=self.options,
            recorder=self.recorder,
            jobflow_metrics=self._jobflow_metrics,
            queue_metrics=self._queue_metrics,
            cron_metrics=self._cron_metrics,
        )

    # -- health -----------------------------------------------------------------------------------
    def _caches_synced(self) -> str | None:
        if self.shard_units is not None:
            if not self.options.leader_elect and not self.shard_units.held():
                # A fixed shard (no Leases) is this replica's whole job: not ready before it runs.
                return f"shard {self.preferred_shard} has not started yet"
            waiting = self.shard_units.not_synced()
            return f"informer caches of shards {waiting} have not synced yet" if waiting else None
        return None if self.factory.has_synced() else "informer caches have not synced yet"

    def _leader_health(self) -> str | None:
        if self.campaign is not None:
            try:
                self.campaign.check(LEADER_HEALTHZ_TIMEOUT)
            except Exception as err:  # noqa: BLE001 - the check's failure is the answer
                return str(err)
            return None
        if self.watchdog is None:
            return None
        try:
            self.watchdog.check()
        except Exception as err:  # noqa: BLE001 - the check's failure is the answer
            return str(err)
        return None

    def _not_stopping(self) -> str | None:
        return "process is shutting down" if self.stop.is_set() else None

    # -- run --------------------------------------------------------------------------------------
    def run_controllers(self, stop: threading.Event) -> None:
        """Run every enabled controller until `stop`, each with its workers; return when all ended.

        Once `stop` is set the workers drain for --graceful-shutdown-timeout; when that passes
        (or the lease is lost) `hard_stop` is set and nothing more is synced or sent.
        """
        run_controllers(self.controllers, stop, self.hard_stop, self.options)

    def run(self) -> int:
        o = self.options
        if o.shards:
            log.info("starting", version=__version__, shards=o.shards, preferred_shard=self.preferred_shard)
        else:
            log.info("starting", version=__version__, controllers=[c.name for c in self.controllers])
        if o.ca_cert_file and not o.tls_cert_file:
            # Upstream accepts it alone and serves plain HTTP too; say so rather than stay silent.
            log.warning("--ca-cert-file has no effect without --tls-cert-file and --tls-private-key-file")
        self.factory.start(self.stop)
        start_memory_trim(self.stop)
        try:
            try:
                self.endpoints.start()
                serve_controller_endpoints(self.controllers, self.stop)
            except (StartupError, OSError) as err:
                log.error("cannot start", error=str(err))
                print(f"jobflow-controller: error: {err}", file=sys.stderr)
                self.exit_code = 1
                return self.exit_code
            if o.shards:
                self._run_shards()
            elif o.leader_elect:
                self._run_leader_elected()
            else:
                self.run_controllers(self.stop)
        finally:
            self._shutdown()
        return self.exit_code

    def _run_leader_elected(self) -> None:
        def lead(leading: threading.Event) -> None:
            ctrl_stop = threading.Event()
            set_when_any(ctrl_stop, self.stop, leading)
            # A lost lease is a hard stop: the new leader may be writing already.
            set_when_any(self.hard_stop, leading)
            self.run_controllers(ctrl_stop)

        o = self.options
        if run_leader_elected(o, self.rest, self.recorder, self.registry, self.watchdog, self.stop, lead):
            self.exit_code = 1

    def _run_shards(self) -> None:
        """Sharded mode: run a unit for every shard whose Lease this replica wins, until the stop.

        With --leader-elect=false there are no Leases: the one shard --shard-index names is run.
        """
        o = self.options
        if not o.leader_elect:
            assert self.preferred_shard is not None  # _preferred_shard refused to start without one
            self._run_shard(self.preferred_shard, self.stop, threading.Event())
            return
        identity = default_identity()
        # The Leases are listed every retry period on a client of their own (not the controllers' budget).
        lease_rest = self._client(qps=LEASE_QPS, burst=LEASE_BURST)
        leases = Clientset(lease_rest).leases(o.leader_elect_resource_namespace)
        try:
            with leader_locks(o, self.rest, self.recorder, identity) as lock_for:
                self.campaign = shard_campaign(
                    o, lock_for, identity, leases, self.preferred_shard, self._run_shard, self.registry
                )
                log.info("campaigning for shards", identity=identity, shards=o.shards, preferred=self.preferred_shard)
                self.campaign.run(self.stop)
        finally:
            lease_rest.close()

    def _run_shard(self, shard: int, stop: threading.Event, lost: threading.Event) -> None:
        assert self.shard_units is not None
        unit = self._new_unit(shard)
        self.shard_units.add(unit)
        try:
            unit.run(stop, lost)
        finally:
            self.shard_units.remove(unit)

    def _shutdown(self) -> None:
        self.stop.set()
        self.broadcaster.shutdown(timeout=5.0)
        self.endpoints.stop()
        self.factory.shutdown()
        if self.shard_sources is not None:
            self.shard_sources.shutdown()
        self.rest.close()
        self.event_rest.close()
        if self.trigger_rest is not None:
            self.trigger_rest.close()
        log.info("stopped", exit_code=self.exit_code)
