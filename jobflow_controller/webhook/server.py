"""The HTTPS server of the JobFlow validating webhook: ``POST /jobflows/validate`` and ``GET /healthz``.

Standard library only (``http.server`` and ``ssl``), one thread per connection. Each decision is
``admission.review_response``; this module does HTTP and TLS:

* the TLS handshake runs in the connection's thread, under a timeout, so a slow or silent client
  cannot stall the accept loop for everyone else;
* every response closes its connection (HTTP/1.0). The API server opens one per call, which for
  the rate JobFlows are created and updated costs a handshake of a millisecond or two, and it makes
  ``stop()`` simple: stop accepting, let the calls in flight finish, close;
* the certificate and key are re-read when either file changes (a renewed Secret mounted into the
  pod is swapped in place by the kubelet), so renewal needs no restart. A pair that does not load,
  such as a certificate written before its key, keeps the previous one until both are in place.

Bodies without a ``Content-Length`` are refused (411), as are bodies over ``MAX_BODY_BYTES`` (413):
the API server always sends the length, and an object it accepts is far smaller.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import ssl
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

import structlog

from jobflow_controller.webhook.admission import ReviewError, decode_review, review_response

__all__ = ["HEALTHZ_PATH", "MAX_BODY_BYTES", "VALIDATE_PATH", "WebhookServer"]

log = structlog.get_logger("jobflow_controller.webhook")

#: Upstream's path for the JobFlow validating webhook (``router.AdmissionService.Path``).
VALIDATE_PATH: Final = "/jobflows/validate"
HEALTHZ_PATH: Final = "/healthz"
#: The API server refuses request bodies over 3 MiB; with the old object of an UPDATE and the
#: review's envelope a review stays well under this.
MAX_BODY_BYTES: Final = 16 * 1024 * 1024
#: How long a client may take for the TLS handshake and for each read of its request.
IO_TIMEOUT: Final = 10.0
#: How long ``stop()`` waits for the calls in flight.
STOP_GRACE: Final = 5.0

Address = tuple[str, int]


class _CertificateFiles:
    """An ``SSLContext`` for a certificate and key on disk, rebuilt when either file changes."""

    def __init__(self, cert_file: str, key_file: str) -> None:
        self.cert_file = cert_file
        self.key_file = key_file
        self._lock = threading.Lock()
        self._stamp = self._read_stamp()
        self._context = self._load()  # fails loudly at start-up: no server without a certificate

    def context(self) -> ssl.SSLContext:
        with self._lock:
            try:
                stamp = self._read_stamp()
            except OSError as err:
                log.warning("cannot stat the webhook certificate; keeping the loaded one", error=str(err))
                return self._context
            if stamp != self._stamp:
                try:
                    self._context = self._load()
                except OSError as err:  # ssl.SSLError is one
                    log.warning("cannot load the changed webhook certificate; keeping the loaded one", error=str(err))
                else:
                    log.info("reloaded the webhook certificate", cert_file=self.cert_file)
                # Once tried, a broken pair is not re-read on every connection; the next change is.
                self._stamp = stamp
            return self._context

    def _read_stamp(self) -> tuple[tuple[int, int, int], ...]:
        stats = (os.stat(self.cert_file), os.stat(self.key_file))
        return tuple((s.st_ino, s.st_mtime_ns, s.st_size) for s in stats)

    def _load(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["http/1.1"])
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


class _Handler(BaseHTTPRequestHandler):
    server: _TLSServer
    timeout = IO_TIMEOUT

    def version_string(self) -> str:
        return "jobflow-controller-webhook"

    def do_POST(self) -> None:
        if self._path() != VALIDATE_PATH:
            self._other_method()
            return
        body = self._read_body()
        if body is None:
            return
        try:
            review = decode_review(body, self.headers.get("Content-Type"))
        except ReviewError as err:
            log.warning("refused a request that is not an AdmissionReview", code=err.code, error=err.message)
            self._reply_text(err.code, err.message)
            return
        answer = review_response(review)
        _log_decision(review["request"], answer["response"])
        self._reply(200, json.dumps(answer, separators=(",", ":")).encode(), "application/json")

    def do_GET(self) -> None:
        path = self._path()
        if path == HEALTHZ_PATH:
            self._reply(200, b"ok", "text/plain; charset=utf-8")
        elif path == VALIDATE_PATH:
            self._method_not_allowed("POST")
        else:
            self._not_found()

    def _other_method(self) -> None:
        self._discard_body()
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

    def _read_body(self) -> bytes | None:
        length_header = self.headers.get("Content-Length")
        if length_header is None:
            self._reply_text(411, "a Content-Length is required")
            return None
        try:
            length = int(length_header)
            if length < 0:
                raise ValueError(length_header)
        except ValueError:
            self._reply_text(400, f"invalid Content-Length {length_header!r}")
            return None
        if length > MAX_BODY_BYTES:
            self._reply_text(413, f"request body of {length} bytes is over the limit of {MAX_BODY_BYTES}")
            return None
        return self.rfile.read(length)

    def _discard_body(self) -> None:
        # A body left unread when the connection closes makes the kernel reset it, and the client may
        # lose the answer before reading it.
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return
        if 0 < length <= MAX_BODY_BYTES:
            self.rfile.read(length)

    def _not_found(self) -> None:
        self._reply_text(404, "404 page not found")

    def _reply_text(self, code: int, message: str, **headers: str) -> None:
        # As Go's http.Error: the message and a newline, as plain text, not to be sniffed.
        self._reply(code, f"{message}\n".encode(), "text/plain; charset=utf-8", **headers)

    def _reply(self, code: int, body: bytes, content_type: str, **headers: str) -> None:
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


class _TLSServer(ThreadingHTTPServer):
    """Accepts plain TCP connections and does each TLS handshake in the connection's own thread."""

    daemon_threads = True

    def __init__(self, address: Address, certificates: _CertificateFiles) -> None:
        self.certificates = certificates
        self._active = 0
        self._idle = threading.Condition()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host's FQDN, a DNS lookup that may hang; we never use it.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def finish_request(self, request: Any, client_address: Any) -> None:
        with self._idle:
            self._active += 1
        try:
            self._serve_tls(request, client_address)
        finally:
            with self._idle:
                self._active -= 1
                self._idle.notify_all()

    def _serve_tls(self, request: socket.socket, client_address: Any) -> None:
        request.settimeout(IO_TIMEOUT)
        try:
            connection = self.certificates.context().wrap_socket(request, server_side=True)
        except OSError as err:  # ssl.SSLError is one
            # A port scan, a plain-HTTP client, or a client that does not trust our CA.
            log.debug("webhook TLS handshake failed", client=client_address[0], error=str(err))
            return
        try:
            super().finish_request(connection, client_address)
        finally:
            connection.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.warning("webhook connection failed", client=client_address[0], exc_info=True)

    def wait_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._active == 0, timeout)


class WebhookServer:
    """The JobFlow validating webhook on ``address`` (``(host, port)``; port 0 picks a free one).

    ``start()`` serves in a daemon thread; ``stop()`` stops accepting, waits up to ``STOP_GRACE``
    seconds for the calls in flight, and closes the socket. The certificate and key are loaded at
    construction, so a missing or broken pair fails there rather than on the first call.
    """

    def __init__(self, address: Address, cert_file: str, key_file: str) -> None:
        self._server = _TLSServer(address, _CertificateFiles(cert_file, key_file))
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"webhook-{self.port}", kwargs={"poll_interval": 0.1}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    def start(self) -> WebhookServer:
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
