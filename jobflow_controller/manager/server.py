"""Wiring and lifetime of the controller manager (Volcano's app/server.go, for two controllers).

Start-up: client, event broadcaster, informer factory, controllers, HTTP endpoints. The informer
caches warm up at once on every replica; the controllers' workers start only on the leader (or at
once with --leader-elect=false). Shutdown on the first SIGTERM/SIGINT: the workers drain what is
queued within --graceful-shutdown-timeout, then the lease is released so another replica takes
over at once, queued events are flushed, and the process exits 0. A second signal exits 1 at once;
a lost lease exits 1, as upstream's `klog.Fatalf("leaderelection lost")` does.

Two events tell the parts how hard to stop. `stop` (the signal) asks for a drain. `hard_stop`
(the lease is lost, or the drain's deadline passed) means another replica may be writing already:
no worker starts another sync, and the controllers' client sends no further request, not even one
that was waiting for a token. Events go through a client of their own, so the last ones recorded
before a graceful exit are still flushed.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable

import structlog
from kubernetes import client as k8s_client
from prometheus_client import CollectorRegistry, disable_created_metrics

from jobflow_controller import __version__
from jobflow_controller.framework import IN_FLIGHT_SYNC_GRACE
from jobflow_controller.jobflow import JobFlowController
from jobflow_controller.jobflow.constants import COMPONENT
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobtemplate import JobTemplateController
from jobflow_controller.kube import resources
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.event_sink import KubeEventSink
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.kube.lease_lock import LeaseLock, lease_request_timeout
from jobflow_controller.kube.rest import RestClient, add_user_agent, default_user_agent
from jobflow_controller.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    PrometheusLeaderMetrics,
    default_identity,
    new_leader_healthz_adaptor,
    run_or_die,
)
from jobflow_controller.manager import options as opts
from jobflow_controller.manager.healthz import Check, EndpointServer, health_tls_context, split_address
from jobflow_controller.manager.metrics import RestClientMetrics
from jobflow_controller.record import EventBroadcaster
from jobflow_controller.webhook import WebhookServer
from workqueue import PrometheusMetricsProvider

log = structlog.get_logger("jobflow_controller.manager")

#: How long past the lease a leader may fail to renew before /healthz reports it (client-go's 20 s).
LEADER_HEALTHZ_TIMEOUT = 20.0


class StartupError(RuntimeError):
    """An endpoint the flags ask for cannot be served (address in use, unreadable certificate)."""


class Manager:
    """One process: both controllers, their shared caches, leader election, health and metrics."""

    def __init__(self, options: opts.Options) -> None:
        self.options = options
        # Go's client_golang has no `_created` series; dashboards would see unfamiliar names.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry()
        self.stop = threading.Event()
        # Set when the lease is lost or the drain deadline passed: start nothing, send nothing.
        self.hard_stop = threading.Event()
        self.exit_code = 0
        config = build_config(options.kubeconfig, options.master)
        user_agent = default_user_agent()
        request_metrics = RestClientMetrics(self.registry)
        self.rest = RestClient(
            config,
            qps=options.kube_api_qps,
            burst=options.kube_api_burst,
            user_agent=user_agent,
            metrics=request_metrics,
            cancel=self.hard_stop,
        )
        # Events are recorded by the controllers but sent by the broadcaster's own thread; they
        # must still go out after the hard stop (the graceful exit flushes them), so they use a
        # client the hard stop does not cancel, under the same QPS budget.
        self.event_rest = RestClient(
            config,
            qps=options.kube_api_qps,
            burst=options.kube_api_burst,
            user_agent=user_agent,
            metrics=request_metrics,
        )
        self.clientset = Clientset(self.rest)
        self.broadcaster = EventBroadcaster()
        self.broadcaster.start_structured_logging()
        self.broadcaster.start_recording_to_sink(KubeEventSink.from_rest_client(self.event_rest))
        self.recorder = self.broadcaster.new_recorder(COMPONENT)
        # Upstream's factories have resync 0; ours replays JobFlows every --resync-period so that an
        # unfinished JobFlow is synced again even when no event comes (docs/operations.md).
        self.factory = VolcanoInformerFactory(
            self.clientset, custom_resync={resources.JOB_FLOWS: options.resync_period}
        )
        queue_metrics = PrometheusMetricsProvider(self.registry)
        self.controllers: list[JobFlowController | JobTemplateController] = []
        if opts.is_controller_enabled(opts.JOBFLOW_CONTROLLER, options.controllers):
            self.controllers.append(
                JobFlowController(
                    self.clientset,
                    self.factory,
                    self.recorder,
                    max_requeue_num=options.max_requeue_num,
                    metrics=JobFlowMetrics(self.registry),
                    status_write_interval=options.status_write_interval,
                    queue_metrics_provider=queue_metrics,
                )
            )
        if opts.is_controller_enabled(opts.JOBTEMPLATE_CONTROLLER, options.controllers):
            self.controllers.append(
                JobTemplateController(
                    self.clientset,
                    self.factory,
                    self.recorder,
                    max_requeue_num=options.max_requeue_num,
                    queue_metrics_provider=queue_metrics,
                )
            )
        self.watchdog = new_leader_healthz_adaptor(LEADER_HEALTHZ_TIMEOUT) if options.leader_elect else None
        self.servers: list[EndpointServer] = []
        self._controllers_done = threading.Event()
        self._leading_started = threading.Event()

    # -- health -----------------------------------------------------------------------------------
    def _caches_synced(self) -> str | None:
        return None if self.factory.has_synced() else "informer caches have not synced yet"

    def _leader_health(self) -> str | None:
        if self.watchdog is None:
            return None
        try:
            self.watchdog.check()
        except Exception as err:  # noqa: BLE001 - the check's failure is the answer
            return str(err)
        return None

    def _start_http(self) -> None:
        o = self.options
        ping: Check = lambda: None  # noqa: E731
        checks: dict[str, list[tuple[str, Check]]] = {
            "/healthz": [("ping", ping), ("leaderElection", self._leader_health)],
            "/livez": [("ping", ping), ("leaderElection", self._leader_health)],
            "/readyz": [("ping", ping), ("informer-sync", self._caches_synced), ("shutdown", self._not_stopping)],
        }
        try:
            if o.enable_healthz:
                same = o.enable_metrics and o.listen_address == o.healthz_address
                registry = self.registry if same else None
                tls = health_tls_context(o.tls_cert_file, o.tls_private_key_file, o.ca_cert_file)
                server = EndpointServer(o.healthz_address, checks=checks, registry=registry, tls=tls)
                self.servers.append(server.start())
            if o.enable_metrics and not (o.enable_healthz and o.listen_address == o.healthz_address):
                self.servers.append(EndpointServer(o.listen_address, registry=self.registry).start())
        except OSError as err:
            raise StartupError(f"cannot serve health or metrics: {err}") from err

    def _not_stopping(self) -> str | None:
        return "process is shutting down" if self.stop.is_set() else None

    #: The JobFlow validating webhook, when --enable-webhook; served by every replica, leader or not.
    webhook: WebhookServer | None = None

    def _start_webhook(self) -> None:
        o = self.options
        if not o.enable_webhook:
            return
        cert, key = o.webhook_tls_cert_file, o.webhook_tls_private_key_file
        assert cert and key  # options.validate requires both
        try:
            self.webhook = WebhookServer(split_address(o.webhook_address), cert, key)
        except OSError as err:  # ssl.SSLError included: a certificate and key that do not load
            raise StartupError(f"cannot serve the webhook on {o.webhook_address} with {cert}: {err}") from err
        self.webhook.start()

    # -- run --------------------------------------------------------------------------------------
    def run_controllers(self, stop: threading.Event) -> None:
        """Run every enabled controller until `stop`, each with its workers; return when all ended.

        Once `stop` is set the workers drain for --graceful-shutdown-timeout; when that passes
        (or the lease is lost) `hard_stop` is set and nothing more is synced or sent.
        """
        o = self.options
        _set_after(self.hard_stop, stop, o.graceful_shutdown_timeout)

        def run(ctrl: JobFlowController | JobTemplateController) -> None:
            ctrl.run(stop, o.worker_threads, drain_timeout=o.graceful_shutdown_timeout, hard_stop=self.hard_stop)

        threads = [threading.Thread(target=run, args=(ctrl,), name=ctrl.name, daemon=True) for ctrl in self.controllers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self._controllers_done.set()

    def run(self) -> int:
        o = self.options
        log.info("starting", version=__version__, controllers=[c.name for c in self.controllers])
        if o.ca_cert_file and not o.tls_cert_file:
            # Upstream accepts it alone and serves plain HTTP too; say so rather than stay silent.
            log.warning("--ca-cert-file has no effect without --tls-cert-file and --tls-private-key-file")
        self.factory.start(self.stop)
        try:
            try:
                self._start_http()
                self._start_webhook()
            except StartupError as err:
                log.error("cannot start", error=str(err))
                print(f"jobflow-controller: error: {err}", file=sys.stderr)
                self.exit_code = 1
                return self.exit_code
            if o.leader_elect:
                self._run_with_leader_election()
            else:
                self.run_controllers(self.stop)
        finally:
            self._shutdown()
        return self.exit_code

    def _run_with_leader_election(self) -> None:
        o = self.options
        identity = default_identity()
        # Like upstream's "leader-election" client: its own connections and user agent, so a
        # renewal never waits behind the controllers' requests and is told apart in audit logs.
        lease_api = k8s_client.ApiClient(self.rest.configuration)
        lease_api.user_agent = add_user_agent(self.rest.api_client.user_agent, "leader-election")
        lock = LeaseLock(
            lease_api,
            o.leader_elect_resource_namespace,
            o.leader_elect_resource_name,
            identity,
            event_recorder=self.recorder,
            request_timeout=lease_request_timeout(o.leader_elect_renew_deadline),
        )
        elector_stop = threading.Event()

        def on_started_leading(leading: threading.Event) -> None:
            self._leading_started.set()
            log.info("started leading", identity=identity)
            ctrl_stop = threading.Event()
            _set_when_any(ctrl_stop, self.stop, leading)
            # A lost lease is a hard stop: the new leader may be writing already.
            _set_when_any(self.hard_stop, leading)
            self.run_controllers(ctrl_stop)

        def on_stopped_leading() -> None:
            if not self.stop.is_set():
                log.error("leaderelection lost", identity=identity)
                self.exit_code = 1
                self.stop.set()

        def on_new_leader(holder: str) -> None:
            if holder and holder != identity:
                log.info("new leader elected", leader=holder)

        config = LeaderElectionConfig(
            lock=lock,
            callbacks=LeaderCallbacks(on_started_leading, on_stopped_leading, on_new_leader),
            lease_duration=o.leader_elect_lease_duration,
            renew_deadline=o.leader_elect_renew_deadline,
            retry_period=o.leader_elect_retry_period,
            watch_dog=self.watchdog,
            release_on_cancel=True,
            name=o.leader_elect_resource_name,
        )
        elector = threading.Thread(
            target=run_or_die,
            args=(config, elector_stop),
            kwargs={"metrics": PrometheusLeaderMetrics(self.registry)},
            name="leader-elector",
            daemon=True,
        )
        elector.start()
        self.stop.wait()
        # Release the lease only once our workers are done, so no two leaders ever write at once.
        if self._leading_started.is_set():
            self._controllers_done.wait(o.graceful_shutdown_timeout + IN_FLIGHT_SYNC_GRACE + 1.0)
        elector_stop.set()
        elector.join(timeout=o.leader_elect_renew_deadline + 5.0)
        lease_api.close()  # type: ignore[no-untyped-call]

    def _shutdown(self) -> None:
        self.stop.set()
        self.broadcaster.shutdown(timeout=5.0)
        for server in self.servers:
            server.stop()
        if self.webhook is not None:
            self.webhook.stop()
        self.factory.shutdown()
        self.rest.close()
        self.event_rest.close()
        log.info("stopped", exit_code=self.exit_code)


def _set_when_any(target: threading.Event, *sources: threading.Event) -> None:
    """Set `target` as soon as any of `sources` is set (Go's select over several channels)."""

    def watch() -> None:
        while not target.is_set():
            for source in sources:
                if source.wait(0.05):
                    target.set()
                    return

    threading.Thread(target=watch, name="stop-fanin", daemon=True).start()


def _set_after(target: threading.Event, source: threading.Event, delay: float) -> None:
    """Set `target` `delay` seconds after `source` is set (a context.WithTimeout started by it)."""

    def watch() -> None:
        source.wait()
        if not target.wait(delay):
            target.set()

    threading.Thread(target=watch, name="stop-deadline", daemon=True).start()


def install_signal_handlers(stop: threading.Event, on_second: Callable[[], None] | None = None) -> None:
    """First SIGTERM/SIGINT sets `stop`; a second exits 1 at once (sample-controller's signals)."""

    def handle(signum: int, _frame: object) -> None:
        if stop.is_set():
            if on_second is not None:
                on_second()
            os._exit(1)
        log.info("received signal, shutting down", signal=signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
