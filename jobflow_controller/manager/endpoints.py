"""The process's HTTP servers: health, metrics and the JobFlow validating webhook.

Every replica serves them, leader or not, from start-up to shutdown: the health checks are how
Kubernetes tells a stuck replica from a waiting one, and the webhook must answer even while another
replica leads. What each check reports is the manager's to say; here they are only served.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from jobflow_controller.manager.config import Options
from jobflow_controller.manager.healthz import Check, EndpointServer, health_tls_context, split_address
from jobflow_controller.webhook import WebhookServer
from jobflow_controller.webhook.admission import TemplateGetter


class StartupError(RuntimeError):
    """An endpoint the flags ask for cannot be served (address in use, unreadable certificate)."""


def _ping() -> str | None:
    return None


class Endpoints:
    """/healthz, /livez, /readyz (each check also alone, at `/healthz/ping`, `/livez/leaderElection`,
    ...) on --healthz-address, /metrics on --listen-address (one server when the two addresses are
    equal), and the webhook on --webhook-address, each when enabled."""

    def __init__(
        self,
        options: Options,
        registry: CollectorRegistry,
        *,
        leader_election: Check,
        informer_sync: Check,
        shutdown: Check,
    ) -> None:
        self.options = options
        self.registry = registry
        # /healthz is upstream's (apiserver's healthz.InstallHandler with no checks but ping): it
        # cannot fail. The lease watchdog is on /livez, the liveness probe's path (manifests/).
        self.checks: dict[str, list[tuple[str, Check]]] = {
            "/healthz": [("ping", _ping)],
            "/livez": [("ping", _ping), ("leaderElection", leader_election)],
            "/readyz": [("ping", _ping), ("informer-sync", informer_sync), ("shutdown", shutdown)],
        }
        self.servers: list[EndpointServer] = []
        self.webhook: WebhookServer | None = None
        #: How the webhook reads a run's template (docs/templates.md); set by the manager.
        self.templates: TemplateGetter | None = None

    def start(self) -> None:
        """Serve every enabled endpoint; `StartupError` if one cannot be."""
        self._start_http()
        self._start_webhook()

    def _start_http(self) -> None:
        o = self.options
        shared = o.enable_healthz and o.enable_metrics and o.listen_address == o.healthz_address
        try:
            if o.enable_healthz:
                tls = health_tls_context(o.tls_cert_file, o.tls_private_key_file, o.ca_cert_file)
                registry = self.registry if shared else None
                server = EndpointServer(o.healthz_address, checks=self.checks, registry=registry, tls=tls)
                self.servers.append(server.start())
            if o.enable_metrics and not shared:
                self.servers.append(EndpointServer(o.listen_address, registry=self.registry).start())
        except OSError as err:
            raise StartupError(f"cannot serve health or metrics: {err}") from err

    def _start_webhook(self) -> None:
        o = self.options
        if not o.enable_webhook:
            return
        cert, key = o.webhook_tls_cert_file, o.webhook_tls_private_key_file
        assert cert and key  # options.validate requires both
        try:
            self.webhook = WebhookServer(split_address(o.webhook_address), cert, key, patch_fields=o.patch_fields())
        except OSError as err:  # ssl.SSLError included: a certificate and key that do not load
            raise StartupError(f"cannot serve the webhook on {o.webhook_address} with {cert}: {err}") from err
        self.webhook.start(self.templates)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        if self.webhook is not None:
            self.webhook.stop()
