"""The trigger endpoint: `POST /triggers/<namespace>/<name>` over HTTPS, on `--trigger-address`.

Each request is checked in this order, each refusal before anything costlier: the path (404), the
bearer token (401, a TokenReview), the caller's right to create JobFlows in the namespace (403, a
SubjectAccessReview), the body's declared length (413 over 64 KiB, 411 without one), the trigger
(404: none, or not an http trigger), its rate (429 with Retry-After), then the body and the
bindings (400) and the run (202 with `{"jobFlow": "<name>"}`; 409 under `Forbid`). docs/triggers.md
lists them.

The server is the webhook's and the health endpoints' (`webhook.connection`): connections capped
at accept (`MAX_CONNECTIONS`), one deadline from accept to the body's last byte
(`REQUEST_DEADLINE`), the TLS handshake in the connection's own thread, the certificate re-read
when its files change (`webhook.certfiles`). Every answer closes its connection.
"""

from __future__ import annotations

import io
import json
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Final, Protocol

import structlog

from jobflow_controller.jobflowtrigger.auth import Authenticator, bearer_token
from jobflow_controller.jobflowtrigger.bindings import MAX_BODY_BYTES
from jobflow_controller.webhook.certfiles import CertificateFiles
from jobflow_controller.webhook.connection import BoundedHTTPServer, DeadlineReader, RequestTooLarge, linger

log = structlog.get_logger("jobflow_controller.jobflowtrigger")

PATH: Final = re.compile(r"/triggers/([a-z0-9][-a-z0-9]{0,62})/([a-z0-9][-a-z0-9.]{0,252})")
#: From accept to the body's last byte, TLS handshake included.
REQUEST_DEADLINE: Final = 10.0
#: Connections open at once, each one thread; one more is closed at accept.
MAX_CONNECTIONS: Final = 64
#: The request line and headers together.
MAX_HEADER_BYTES: Final = 16 * 1024
#: Writing the answer.
ANSWER_TIMEOUT: Final = 5.0
LISTEN_BACKLOG: Final = 128
#: After an answer, what the client still sends (a refused body) is read and dropped, up to this much
#: for this long, so that closing does not reset the connection before the client reads the answer.
LINGER_SECONDS: Final = 1.0
DRAIN_LIMIT: Final = 256 * 1024


@dataclass(frozen=True)
class Answer:
    code: int
    body: dict[str, Any]
    retry_after: float | None = None


class Triggers(Protocol):
    """What the endpoint asks the trigger controller."""

    def admit(self, namespace: str, name: str) -> Answer | None:
        """404 or 429 before the body is read; None to go on."""

    def fire(self, namespace: str, name: str, body: bytes) -> Answer:
        """Bind the body and start a run: 202, or why not."""


def _error(code: int, message: str) -> Answer:
    return Answer(code, {"code": code, "message": message})


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    reader: DeadlineReader

    def version_string(self) -> str:
        return "jobflow-controller-trigger"

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        self.reader = DeadlineReader(self.connection, self.server.connection_deadline(), MAX_HEADER_BYTES)
        self.rfile = io.BufferedReader(self.reader)

    def handle(self) -> None:
        try:
            super().handle()
        except (RequestTooLarge, OSError) as err:
            log.debug("trigger connection closed", client=self.client_address[0], error=str(err))

    def do_POST(self) -> None:
        self._send(self._answer())

    def _answer(self) -> Answer:
        match = PATH.fullmatch(self.path.split("?", 1)[0])
        if match is None:
            return _error(404, "not found: POST /triggers/<namespace>/<name>")
        namespace, name = match.group(1), match.group(2)
        token = bearer_token(self.headers.get("Authorization"))
        if token is None:
            return _error(401, "Unauthorized: send a Kubernetes bearer token")
        auth: Authenticator = self.server.auth
        try:
            caller = auth.authenticate(token)
            if caller is None:
                return _error(401, "Unauthorized: the token is not valid")
            if not auth.allowed(caller, namespace):
                return _error(403, f'Forbidden: "{caller.username}" may not create jobflows in {namespace}')
        except Exception as err:  # noqa: BLE001 - the API server could not answer: the caller retries
            log.warning("cannot review a trigger caller", error=str(err))
            return _error(503, "cannot check the caller now; try again")
        length = self._length()
        if isinstance(length, Answer):
            return length
        refused = self.server.triggers.admit(namespace, name)
        if refused is not None:
            return refused
        self.reader.allow(length)
        body = self.rfile.read(length) if length else b""
        if len(body) < length:
            return _error(400, "the body ended before its Content-Length")
        return self.server.triggers.fire(namespace, name, body)

    def _length(self) -> int | Answer:
        raw = self.headers.get("Content-Length")
        if raw is None:
            return 0 if self.headers.get("Transfer-Encoding") is None else _error(411, "Content-Length required")
        if not raw.isdigit():
            return _error(400, "bad Content-Length")
        if int(raw) > MAX_BODY_BYTES:
            return _error(413, f"the body is over the limit of {MAX_BODY_BYTES} bytes")
        return int(raw)

    def _other(self) -> None:
        self._send(_error(405, "only POST is allowed"), allow="POST")

    do_GET = do_PUT = do_PATCH = do_DELETE = _other

    def _send(self, answer: Answer, **headers: str) -> None:
        payload = json.dumps(answer.body, separators=(",", ":")).encode()
        self.connection.settimeout(ANSWER_TIMEOUT)
        self.send_response(answer.code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Connection", "close")
        if answer.retry_after is not None:
            self.send_header("Retry-After", str(max(1, math.ceil(answer.retry_after))))
        for key, value in headers.items():
            self.send_header(key.title(), value)
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:
        log.debug("trigger request", line=format % args, client=self.client_address[0])


class _Server(BoundedHTTPServer):
    request_queue_size = LISTEN_BACKLOG

    def __init__(
        self, address: tuple[str, int], certificates: CertificateFiles | None, auth: Authenticator, triggers: Triggers
    ) -> None:
        self.certificates = certificates
        self.auth = auth
        self.triggers = triggers
        super().__init__(
            address, _Handler, max_connections=MAX_CONNECTIONS, request_deadline=REQUEST_DEADLINE, what="trigger"
        )

    def server_bind(self) -> None:
        # No FQDN lookup (HTTPServer.server_bind's), which may hang on DNS.
        import socketserver

        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def serve_connection(self, request: Any, client_address: Any) -> None:
        if self.certificates is None:
            self.handle_connection(request, client_address)
            linger(request, LINGER_SECONDS, DRAIN_LIMIT, 64 * 1024)
            return
        request.settimeout(REQUEST_DEADLINE)
        try:
            connection = self.certificates.context().wrap_socket(request, server_side=True)
        except OSError:  # a plain-HTTP client, a port scan, a client that does not trust us, a silent one
            return
        try:
            self.handle_connection(connection, client_address)
            linger(connection, LINGER_SECONDS, DRAIN_LIMIT, 64 * 1024)
        finally:
            connection.close()


class TriggerServer:
    """The endpoint on `address`, in a daemon thread; TLS when `cert_file` and `key_file` are given."""

    def __init__(
        self,
        address: tuple[str, int],
        auth: Authenticator,
        triggers: Triggers,
        *,
        cert_file: str | None = None,
        key_file: str | None = None,
    ) -> None:
        certificates = CertificateFiles(cert_file, key_file) if cert_file and key_file else None
        self._server = _Server(address, certificates, auth, triggers)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="trigger-endpoint", kwargs={"poll_interval": 0.1}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> TriggerServer:
        self._thread.start()
        log.info("serving the trigger endpoint", port=self.port, tls=self._server.certificates is not None)
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()


def stop_with(server: TriggerServer, stop: threading.Event) -> Callable[[], None]:
    """A thread body that stops `server` once `stop` is set."""

    def wait() -> None:
        stop.wait()
        server.stop()

    return wait
