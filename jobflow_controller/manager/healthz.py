"""The health and metrics HTTP endpoints (`/healthz`, `/livez`, `/readyz`, `/metrics`).

Liveness fails only when the leader has stopped renewing its lease for longer than it may
(client-go's HealthzAdaptor); readiness waits for the informer caches, and does not depend on
leading, so a standby replica is Ready and takes over with warm caches.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry

from jobflow_controller.manager.metrics import exposition

Check = Callable[[], str | None]  # None when healthy, else the reason


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return (host or "0.0.0.0"), int(port)


class EndpointServer:
    """One HTTP server for some of the endpoints, in a daemon thread."""

    def __init__(
        self,
        address: str,
        *,
        checks: dict[str, list[tuple[str, Check]]] | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.checks = checks or {}
        self.registry = registry
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer._handle(self)

            def log_message(self, format: str, *args: object) -> None:
                return

        host, port = split_address(address)
        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
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
            self._reply(request, 404, b"404 page not found\n")
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
