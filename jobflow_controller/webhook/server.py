"""The HTTPS server of the JobFlow validating webhook: ``POST /jobflows/validate`` and ``GET /healthz``.

Standard library only (``http.server`` and ``ssl``), one thread per connection. Each decision is
``admission.review_response``; this module does HTTP and TLS:

* the TLS handshake runs in the connection's thread, under a timeout, so a slow or silent client
  cannot stall the accept loop for everyone else; it and the headers must be done within
  ``HEADERS_DEADLINE`` (3 s), the body within ``REQUEST_DEADLINE`` (10 s) of the accept;
* connections and body bytes are shared out by client address (``clients.ClientShares``): per
  address caps, and a newcomer takes from the biggest holder when the server is full, so a client
  that is not the API server cannot take the webhook from it alone;
* every response closes its connection (HTTP/1.0). The API server opens one per call, which for
  the rate JobFlows are created and updated costs a handshake of a millisecond or two, and it makes
  ``stop()`` simple: stop accepting, let the calls in flight finish, close;
* the certificate and key are re-read when either file changes (a renewed Secret mounted into the
  pod is swapped in place by the kubelet), so renewal needs no restart. A pair that does not load,
  such as a certificate written before its key, keeps the previous one until both are in place.

Bodies without a ``Content-Length`` are refused (411), as are bodies over ``MAX_BODY_BYTES`` (413),
before any of the body is read: the API server always sends the length, and refuses larger bodies
itself. Every other limit (``limits``) is enforced here too: the request's deadline and the header
and body allowances through ``connection.DeadlineReader``, the connections open at once at accept,
the body bytes held at once as they arrive, and the reviews decoded at once around the decision.
"""

from __future__ import annotations

import io
import json
import socketserver
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

import structlog

from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.webhook.admission import (
    ReviewError,
    body_length,
    check_content_type,
    decode_review,
    review_response,
)
from jobflow_controller.webhook.certfiles import CertificateFiles
from jobflow_controller.webhook.clients import BodyRefusal, ClientShares, Seat
from jobflow_controller.webhook.connection import BoundedHTTPServer, DeadlineReader, RequestTooLarge, linger
from jobflow_controller.webhook.limits import (
    DRAIN_LIMIT,
    HEADERS_DEADLINE,
    MAX_BODY_BYTES,
    MAX_BODY_BYTES_IN_FLIGHT,
    MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT,
    MAX_CONCURRENT_REVIEWS,
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_CLIENT,
    MAX_HEADER_BYTES,
    MIN_ANSWER_SECONDS,
    READ_CHUNK,
    REQUEST_DEADLINE,
    RETRY_AFTER_SECONDS,
)

__all__ = ["HEALTHZ_PATH", "MAX_BODY_BYTES", "VALIDATE_PATH", "WebhookServer"]

log = structlog.get_logger("jobflow_controller.webhook")

#: Upstream's path for the JobFlow validating webhook (``router.AdmissionService.Path``).
VALIDATE_PATH: Final = "/jobflows/validate"
HEALTHZ_PATH: Final = "/healthz"
#: How long ``stop()`` waits for the calls in flight.
STOP_GRACE: Final = 5.0
#: How long a closing connection is read from after the answer (``connection.linger``).
LINGER_SECONDS: Final = 1.0
#: Connections the kernel queues before the accept loop takes them.
LISTEN_BACKLOG: Final = 128

Address = tuple[str, int]


class _Handler(BaseHTTPRequestHandler):
    server: _TLSServer
    reader: DeadlineReader
    seat: Seat

    def version_string(self) -> str:
        return "jobflow-controller-webhook"

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        # What an answer to a request cut short in its first line needs (parse_request sets them).
        self.request_version, self.requestline, self.command = "HTTP/1.0", "", ""
        self.seat = self.server.current_seat()
        # Every read gets what is left of the connection's deadline (the headers' until they are
        # read), and only the headers' allowance until a body's length has been accepted.
        self.reader = DeadlineReader(self.connection, self.server.connection_deadline(), MAX_HEADER_BYTES)
        self.rfile = io.BufferedReader(self.reader, READ_CHUNK)

    def handle(self) -> None:
        try:
            super().handle()
        except RequestTooLarge:
            log.debug("refused request headers over the limit", client=self.client_address[0])
            self._reply_text(431, f"request headers are over the limit of {MAX_HEADER_BYTES} bytes")
        except OSError as err:  # the client's doing: gone, past a deadline, or its seat taken by another
            log.debug(
                "webhook connection closed", client=self.client_address[0], error=str(err), taken=self.seat.evicted
            )

    def do_POST(self) -> None:
        if self._path() != VALIDATE_PATH:
            self._other_method()
            return
        length = self._body_length()
        if length is None:
            return
        try:
            check_content_type(self.headers.get("Content-Type"))
        except ReviewError as err:
            self._refuse(err)
            return
        self.reader.allow(length)
        # The headers are in: the body gets what is left of the whole request's deadline.
        self.reader.deadline += REQUEST_DEADLINE - HEADERS_DEADLINE
        taken = 0
        try:
            body = bytearray()
            while len(body) < length:
                want = min(READ_CHUNK, length - len(body))
                if (refusal := self.server.shares.take(self.seat, want)) is not None:
                    # Dropped before the answer is written, so the client's other bodies go on.
                    body.clear()
                    self.server.shares.give_back(self.seat, taken)
                    taken = 0
                    self._refuse_bytes(refusal)
                    return
                taken += want
                chunk = self.rfile.read(want)
                if len(chunk) < want:
                    return  # the client hung up, or its connection was taken
                body += chunk
            self.server.shares.done_reading(self.seat)
            self._review(body)
        finally:
            self.server.shares.give_back(self.seat, taken)

    def _refuse_bytes(self, refusal: BodyRefusal) -> None:
        if refusal is BodyRefusal.CLIENT:
            self._too_busy(
                f"over {MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT} bytes of request bodies from {self.client_address[0]}"
                " are in flight"
            )
        elif refusal is BodyRefusal.SERVER:
            self._too_busy(f"over {MAX_BODY_BYTES_IN_FLIGHT} bytes of request bodies are in flight")

    def _review(self, body: bytearray) -> None:
        if not self.server.reviews.acquire(timeout=max(self.reader.remaining(), 0)):
            self._too_busy(f"{MAX_CONCURRENT_REVIEWS} reviews are in progress")
            return
        try:
            review = decode_review(body, self.headers.get("Content-Type"))
            answer = review_response(review, self.server.patch_fields, self.server.templates)
        except ReviewError as err:
            self._refuse(err)
            return
        finally:
            self.server.reviews.release()
        _log_decision(review["request"], answer["response"])
        self._reply(200, json.dumps(answer, separators=(",", ":")).encode(), "application/json")

    def _refuse(self, err: ReviewError) -> None:
        log.warning("refused a request that is not an AdmissionReview", code=err.code, error=err.message)
        self._reply_text(err.code, err.message)

    def _too_busy(self, why: str) -> None:
        log.warning("refused a review: the webhook is busy", reason=why, client=self.client_address[0])
        self._reply_text(429, f"too many requests: {why}", retry_after=str(RETRY_AFTER_SECONDS))

    def do_GET(self) -> None:
        self.server.shares.done_reading(self.seat)
        path = self._path()
        if path == HEALTHZ_PATH:
            self._reply(200, b"ok", "text/plain; charset=utf-8")
        elif path == VALIDATE_PATH:
            self._method_not_allowed("POST")
        else:
            self._not_found()

    def _other_method(self) -> None:
        path = self._path()
        if path == VALIDATE_PATH:
            self._method_not_allowed("POST")
        elif path == HEALTHZ_PATH:
            self._method_not_allowed("GET")
        else:
            self._not_found()

    do_PUT = do_PATCH = do_DELETE = _other_method

    def _method_not_allowed(self, allowed: str) -> None:
        self._reply_text(405, f"method {self.command} is not allowed on {self._path()}, want {allowed}", allow=allowed)

    def _path(self) -> str:
        # The API server appends ?timeout=10s to the configured path.
        return self.path.split("?", 1)[0]

    def _body_length(self) -> int | None:
        """The request's ``Content-Length``, or ``None`` once the request is refused for it."""
        try:
            return body_length(self.headers.get("Content-Length"))
        except ReviewError as err:
            self._reply_text(err.code, err.message)
            return None

    def _not_found(self) -> None:
        self._reply_text(404, "404 page not found")

    def _reply_text(self, code: int, message: str, **headers: str) -> None:
        # As Go's http.Error: the message and a newline, as plain text, not to be sniffed.
        self._reply(code, f"{message}\n".encode(), "text/plain; charset=utf-8", **headers)

    def _reply(self, code: int, body: bytes, content_type: str, **headers: str) -> None:
        self.connection.settimeout(max(self.reader.remaining(), MIN_ANSWER_SECONDS))
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-").title(), value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        log.debug("webhook request", line=format % args, client=self.client_address[0])


class _TLSServer(BoundedHTTPServer):
    """Accepts plain TCP connections and does each TLS handshake in the connection's own thread,
    at most ``MAX_CONNECTIONS`` at once, shared out by client address (``ClientShares``), each
    with ``HEADERS_DEADLINE`` for its handshake and headers (the ``connection_deadline``)."""

    request_queue_size = LISTEN_BACKLOG
    templates: Any = None  # how a run's template is read (TemplateGetter, docs/templates.md): WebhookServer.start

    def __init__(self, address: Address, certificates: CertificateFiles, patch_fields: PatchFields | None) -> None:
        self.certificates = certificates
        self.patch_fields = patch_fields
        self.shares = ClientShares(
            max_connections=MAX_CONNECTIONS,
            max_connections_per_client=MAX_CONNECTIONS_PER_CLIENT,
            max_bytes=MAX_BODY_BYTES_IN_FLIGHT,
            max_bytes_per_client=MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT,
        )
        self.reviews = threading.BoundedSemaphore(MAX_CONCURRENT_REVIEWS)
        # Seats by accepted socket, from the accept loop to the connection's thread (single dict
        # operations: atomic in CPython).
        self._seats: dict[Any, Seat] = {}
        self._local = threading.local()
        self._refusing = False
        super().__init__(
            address, _Handler, max_connections=MAX_CONNECTIONS, request_deadline=HEADERS_DEADLINE, what="webhook"
        )

    def admit(self, request: Any, client_address: Any) -> bool:
        seat = self.shares.enter(str(client_address[0]), request)
        if seat is None:
            if not self._refusing:  # once per spell: until a connection is admitted again
                log.warning(
                    "closing new webhook connections: the client holds its share, or no bigger holder can give way",
                    client=client_address[0],
                    limit=MAX_CONNECTIONS_PER_CLIENT,
                    open=self.shares.open,
                )
            self._refusing = True
            return False
        self._refusing = False
        self._seats[request] = seat
        return True

    def release(self, request: Any) -> None:
        self.shares.leave(self._seats.pop(request))

    def current_seat(self) -> Seat:
        """The seat of the connection this thread serves."""
        seat: Seat = self._local.seat
        return seat

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host's FQDN, a DNS lookup that may hang; we never use it.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def serve_connection(self, request: Any, client_address: Any) -> None:
        seat = self._local.seat = self._seats[request]
        context = self.certificates.context()
        try:  # wrapped without the handshake, under the shares' lock, so an eviction can shut it down
            connection = self.shares.rewrap(
                seat, lambda sock: context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            )
        except OSError as err:  # the client is gone already
            log.debug("webhook connection closed", client=client_address[0], error=str(err))
            return
        try:
            # The handshake is one call: its timeout bounds all of it, within the headers' deadline.
            if (left := self.connection_deadline() - time.monotonic()) <= 0:
                return
            connection.settimeout(left)
            try:
                connection.do_handshake()  # type: ignore[attr-defined]
            except OSError as err:  # ssl.SSLError and TimeoutError are ones
                # A port scan, a plain-HTTP client, a client that does not trust our CA, a silent one.
                log.debug("webhook TLS handshake failed", client=client_address[0], error=str(err))
                return
            self.handle_connection(connection, client_address)
            if not seat.evicted:
                linger(connection, LINGER_SECONDS, DRAIN_LIMIT, READ_CHUNK)
        finally:
            self.shares.closing(seat)
            connection.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.warning("webhook connection failed", client=client_address[0], exc_info=True)

    def wait_idle(self, timeout: float) -> bool:
        return self.shares.wait_idle(timeout)


class WebhookServer:
    """The JobFlow validating webhook on ``address`` (``(host, port)``; port 0 picks a free one).

    ``start()`` serves in a daemon thread; ``stop()`` stops accepting, waits up to ``STOP_GRACE``
    seconds for the calls in flight, and closes the socket. The certificate and key are loaded at
    construction, so a missing or broken pair fails there rather than on the first call.
    ``patch_fields`` (``--jobflow-patch-allowed-fields``) are the Job spec fields a flow's patch may
    set; None allows every field.
    """

    def __init__(
        self, address: Address, cert_file: str, key_file: str, *, patch_fields: PatchFields | None = None
    ) -> None:
        self._server = _TLSServer(address, CertificateFiles(cert_file, key_file), patch_fields)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"webhook-{self.port}", kwargs={"poll_interval": 0.1}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def open_connections(self) -> int:
        """Connections being served now (those taken by another client excluded)."""
        return self._server.shares.open

    @property
    def body_bytes_held(self) -> int:
        """Request body bytes held now by every connection (``MAX_BODY_BYTES_IN_FLIGHT`` at most)."""
        return self._server.shares.held

    def start(self, templates: Any = None) -> WebhookServer:
        self._server.templates = templates  # None: a run's params are the controller's to check
        self._thread.start()
        log.info("serving the JobFlow validating webhook", address=f"{self.host}:{self.port}", path=VALIDATE_PATH)
        return self

    def stop(self, grace: float = STOP_GRACE) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
        if not self._server.wait_idle(grace):
            log.warning("stopped the webhook with calls still in flight", grace=grace)

    def __enter__(self) -> WebhookServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _log_decision(request: Mapping[str, Any], response: Mapping[str, Any]) -> None:
    # The object's name: a request's own name is empty when the object's was generated.
    obj = request.get("object")
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    metadata = metadata if isinstance(metadata, Mapping) else {}
    namespace = metadata.get("namespace") or request.get("namespace") or ""
    name = metadata.get("name") or request.get("name") or ""
    fields = {"jobflow": f"{namespace}/{name}", "operation": request.get("operation"), "uid": request.get("uid")}
    if response.get("allowed"):
        log.debug("admitted", **fields)
    else:
        log.info("denied", message=response.get("status", {}).get("message"), **fields)
