"""The health and metrics HTTP endpoints (`/healthz`, `/livez`, `/readyz`, `/metrics`).

As the API server's healthz package serves them: a path runs its checks (`?verbose` lists them),
and each check is also served alone under it (`/healthz/ping`, `/livez/leaderElection`), answering
`ok` or 500 `internal server error: <reason>`. `/healthz` is upstream's, ping only, and cannot
fail. Liveness (`/livez`) fails only when the leader has stopped renewing its lease for longer than
it may (client-go's HealthzAdaptor); readiness waits for the informer caches, and does not depend
on leading, so a standby replica is Ready and takes over with warm caches.

With upstream's `--tls-cert-file`/`--tls-private-key-file` (and `--ca-cert-file`) the health
endpoint is served over HTTPS, as Volcano's `helpers.StartHealthz` does; each TLS handshake runs
in the connection's own thread under a timeout, so a silent client cannot stall the probes.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry

from jobflow_controller.manager.metrics import exposition

Check = Callable[[], str | None]  # None when healthy, else the reason


#: How long a connection may take for its TLS handshake and for each read or write.
TLS_IO_TIMEOUT = 10.0


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return (host or "0.0.0.0"), int(port)


def health_tls_context(cert_file: str | None, key_file: str | None, ca_file: str | None) -> ssl.SSLContext | None:
    """The server context for the health endpoint, or None for plain HTTP (no certificate given).

    Raises OSError (ssl.SSLError is one) when a file cannot be read or the pair does not match; the
    manager turns that into its one-line start-up error. The CA, as upstream's, is the chain's
    root: it is loaded so that a broken CA file fails at start-up, and clients are not asked for
    certificates (kubelet probes present none).
    """
    if not (cert_file and key_file):
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    return context


class _HTTPServer(ThreadingHTTPServer):
    """Plain or TLS; with TLS the handshake happens in the connection's thread, not in accept."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], tls: ssl.SSLContext | None):
        self.tls = tls
        super().__init__(address, handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        sock: socket.socket = request
        sock.settimeout(TLS_IO_TIMEOUT)
        try:
            connection = self.tls.wrap_socket(sock, server_side=True)
        except OSError:  # a plain-HTTP client, a port scan, a client that does not trust us
            return
        try:
            super().finish_request(connection, client_address)
        finally:
            connection.close()


class EndpointServer:
    """One HTTP server for some of the endpoints, in a daemon thread."""

    def __init__(
        self,
        address: str,
        *,
        checks: dict[str, list[tuple[str, Check]]] | None = None,
        registry: CollectorRegistry | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.checks = checks or {}
        self.tls = tls
        self.registry = registry
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer._handle(self)

            def log_message(self, format: str, *args: object) -> None:
                return

        host, port = split_address(address)
        self.server = _HTTPServer((host, port), Handler, tls)
        self._thread = threading.Thread(target=self.server.serve_forever, name=f"http-{port}", daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def start(self) -> EndpointServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        path = request.path.split("?", 1)[0]
        verbose = "verbose" in request.path
        if path == "/metrics" and self.registry is not None:
            self._reply(request, 200, exposition(self.registry), "text/plain; version=0.0.4; charset=utf-8")
            return
        if path not in self.checks:
            self._handle_one(request, path)
            return
        lines, failed = [], False
        for name, check in self.checks[path]:
            reason = check()
            if reason is None:
                lines.append(f"[+]{name} ok")
            else:
                failed = True
                lines.append(f"[-]{name} failed: {reason}")
        if failed:
            body = "\n".join(lines) + f"\n{path[1:]} check failed\n"
            self._reply(request, 500, body.encode())
        elif verbose:
            self._reply(request, 200, ("\n".join(lines) + f"\n{path[1:]} check passed\n").encode())
        else:
            self._reply(request, 200, b"ok")

    def _handle_one(self, request: BaseHTTPRequestHandler, path: str) -> None:
        """`<path>/<check>`: that check alone, as healthz's adaptCheckToHandler serves it."""
        parent, _, name = path.rpartition("/")
        check = dict(self.checks.get(parent, [])).get(name)
        if check is None:
            self._reply(request, 404, b"404 page not found\n")
            return
        reason = check()
        if reason is None:
            self._reply(request, 200, b"ok")
        else:
            self._reply(request, 500, f"internal server error: {reason}\n".encode())

    @staticmethod
    def _reply(
        request: BaseHTTPRequestHandler, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8"
    ) -> None:
        request.send_response(code)
        request.send_header("Content-Type", ctype)
        request.send_header("Content-Length", str(len(body)))
        request.send_header("X-Content-Type-Options", "nosniff")
        request.end_headers()
        request.wfile.write(body)
