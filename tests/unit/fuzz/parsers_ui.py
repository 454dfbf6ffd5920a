"""Every function of `kubectl jobflow ui` that reads request-controlled text (issue 33), for the fuzzing.

What a request carries reaches the UI through these, and only these:
- the request line, headers and body, read by the HTTP handler (`_Handler.handle`, fed raw bytes
  over a socket pair: nothing may escape it, whatever arrives);
- the request target, the `key` parameter, the Content-Length and Cookie headers and an action's
  body (kubectl_jobflow/ui/request.py), and the token (auth.py);
- an action's fields once parsed (`Backend.act`: the key, the action and the flows).
The Host, Origin and Content-Type headers are compared whole with fixed strings inside the handler,
which the first entry covers.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

from registry import Parser

from kubectl_jobflow.ui import request
from kubectl_jobflow.ui.auth import Credentials
from kubectl_jobflow.ui.backend import Backend, Outcome
from kubectl_jobflow.ui.cache import ChangeLog
from kubectl_jobflow.ui.server import UIServer, _Handler

TOKEN = "fuzzing-token-0123456789abcdefghijklmnopqrstuvwxyz"
#: The most fed to the handler at once: a socket pair's buffer holds it without a reader.
MAX_RAW = 48 * 1024

_JOB_FLOW = {
    "metadata": {"name": "p", "namespace": "ns", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
    "status": {"state": {"phase": "Running"}, "failedJobs": ["p-b"]},
}


class _Cache:
    """One JobFlow, no Jobs, no events: what the backend and the handler read."""

    namespace = None

    def __init__(self) -> None:
        self.changes = ChangeLog()

    def job_flow(self, key: str) -> Any:
        return _JOB_FLOW if key == "ns/p" else None

    def job_flows(self) -> list[Any]:
        return [_JOB_FLOW]

    def jobs_of(self, job_flow: Any) -> list[Any]:
        return []

    def events_about(self, kind: str, namespace: str, name: str) -> list[Any]:
        return []


class _Api:
    """Access reviews allow; patches are accepted and forgotten."""

    def resource(self, resource: Any, namespace: str | None = None) -> _Api:
        return self

    def job_flows(self, namespace: str | None = None) -> _Api:
        return self

    def create(self, body: Any) -> Any:
        return {"status": {"allowed": True}}

    def patch(self, name: str, body: Any) -> Any:
        return {}


_backend = Backend(_Cache(), _Api())  # type: ignore[arg-type]
_server: UIServer | None = None
_server_lock = threading.Lock()


def _ui() -> UIServer:
    """One server for every call (never started: the handler is driven directly)."""
    global _server
    with _server_lock:
        if _server is None:
            _server = UIServer(_backend, token=TOKEN)
        return _server


def serve_raw(data: Any) -> bytes:
    """Hand `data` to the UI's HTTP handler as a client would send it, then end the client's
    side; the handler's answer (what it wrote before closing). The handler runs in this thread,
    so whatever it lets escape reaches the caller. A socket carries bytes only: any other value is
    sent as its UTF-8 text (a str) or its repr."""
    if not isinstance(data, bytes):
        data = (data if isinstance(data, str) else repr(data)).encode("utf-8", "surrogatepass")
    client, served = socket.socketpair()
    try:
        client.sendall(data[:MAX_RAW])
        client.shutdown(socket.SHUT_WR)
        _Handler(served, ("127.0.0.1", 40000), _ui().httpd)
        served.close()
        client.settimeout(1.0)
        answer = b""
        try:
            while chunk := client.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass  # closed with bytes of ours unread (a head over the cap): an answer too
        return answer
    finally:
        client.close()
        served.close()


def act(doc: Any) -> Outcome:
    """An action's JSON as the page sends it, parsed and carried out against one JobFlow."""
    parsed = request.parse_action(json.dumps(doc).encode())
    return _backend.act(parsed.key, parsed.action, list(parsed.flows))


_credentials = Credentials(1, TOKEN)

PARSERS: list[Parser] = [
    Parser("kubectl_jobflow.ui.server._Handler.handle", serve_raw, "bytes", (), bound_s=2.0),
    Parser("kubectl_jobflow.ui.request.parse_target", request.parse_target, "text", (request.RequestError,)),
    Parser("kubectl_jobflow.ui.request.parse_key", request.parse_key, "text", (request.RequestError,)),
    Parser(
        "kubectl_jobflow.ui.request.parse_content_length",
        request.parse_content_length,
        "text",
        (request.RequestError,),
    ),
    Parser("kubectl_jobflow.ui.request.parse_cookies", request.parse_cookies, "text", (request.RequestError,)),
    Parser("kubectl_jobflow.ui.request.parse_action", request.parse_action, "bytes", (request.RequestError,)),
    Parser("kubectl_jobflow.ui.auth.Credentials.token_ok", _credentials.token_ok, "text", ()),
    Parser("kubectl_jobflow.ui.backend.Backend.act", act, "json", (request.RequestError,)),
]
