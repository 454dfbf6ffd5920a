"""The UI's HTTP server: loopback only, every request from the holder of the session's token.

Anyone on the machine can connect to 127.0.0.1, and any web page the user visits can make the
browser send requests to it; the server acts with the user's Kubernetes credentials, so:
- everything is served under the session's random path prefix (auth.py), else 404;
- every request (the page, its scripts, the event streams, the actions) must be authenticated
  (auth.py: the token of the printed URL on the entry URL, exchanged there for an HttpOnly,
  SameSite=Strict cookie scoped to the prefix; or the token in the `X-JobFlow-Token` header, for
  scripts), else 403;
- the Host header must name the loopback address and our port, else 403: a DNS-rebinding page
  (evil.example resolving to 127.0.0.1) sends its own host name;
- a request the browser says comes from another origin (Origin, Sec-Fetch-Site; another port of
  127.0.0.1 is another origin but the same site) is refused, but for the entry URL with its token;
- a POST must be JSON;
- reading a request has deadlines and caps (connections.py), and what it says is read by the
  bounded parsers of request.py.
Live updates are server-sent events: each stream waits on the cache's change log, never on the API.
"""

from __future__ import annotations

import http.server
import io
import json
import threading
import time
from collections.abc import Callable
from importlib import resources
from typing import Any, cast

from kubectl_jobflow.ui import connections as conns
from kubectl_jobflow.ui.auth import TOKEN_HEADER, TOKEN_PARAM, Credentials, foreign
from kubectl_jobflow.ui.backend import Backend
from kubectl_jobflow.ui.request import (
    RequestError,
    Target,
    parse_action,
    parse_content_length,
    parse_cookies,
    parse_key,
    parse_target,
)

__all__ = ["TOKEN_HEADER", "TOKEN_PARAM", "UIServer"]

#: The stream's heartbeat: a comment line that keeps proxies and the browser from giving up.
KEEPALIVE_SECONDS = 15.0
#: Changes arriving this close together are sent as one message (a burst of Job updates).
COALESCE_SECONDS = 0.2
STATIC_FILES = {
    "app.js": "text/javascript; charset=utf-8",
    "dag.js": "text/javascript; charset=utf-8",
    "cron.js": "text/javascript; charset=utf-8",
    "templates.js": "text/javascript; charset=utf-8",
    "triggers.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def load_static() -> dict[str, bytes]:
    """The page and its assets, shipped in the package (no network, no build step)."""
    root = resources.files("kubectl_jobflow.ui").joinpath("static")
    return {name: root.joinpath(name).read_bytes() for name in ("index.html", *STATIC_FILES)}


class _HTTPServer(http.server.ThreadingHTTPServer):
    """One thread per connection, admitted by the gate; quiet about clients that go away."""

    daemon_threads = True
    #: The listen backlog: a burst of connections waits here to be admitted or refused at once,
    #: rather than in SYN retries of 1 s, 3 s... (the stdlib's default is 5).
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], gate: conns.ConnectionGate) -> None:
        self.gate = gate
        super().__init__(address, _Handler)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        admitted, evicted = self.gate.admit(request, str(client_address[0]))
        for conn in evicted:
            conns.close_now(conn)
        return admitted

    def shutdown_request(self, request: Any) -> None:
        self.gate.release(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that disconnects or misbehaves ends its own connection, and nothing else."""


class UIServer:
    """The HTTP server, its credentials, its connection gate and its stop signal."""

    def __init__(
        self,
        backend: Backend,
        port: int = 0,
        token: str | None = None,
        gate: conns.ConnectionGate | None = None,
    ) -> None:
        self.backend = backend
        self.stop = threading.Event()
        self.static = load_static()
        self.gate = gate or conns.ConnectionGate()
        self.httpd = _HTTPServer(("127.0.0.1", port), self.gate)
        cast(Any, self.httpd).app = self
        self.port = int(self.httpd.server_address[1])
        self.credentials = Credentials(self.port, token)
        self.token = self.credentials.token
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """Where everything is served: the session's secret prefix (with the token header, scripts
        call `base_url + "api/list"`)."""
        return f"http://127.0.0.1:{self.port}{self.credentials.prefix}"

    @property
    def url(self) -> str:
        """The entry URL: its page exchanges the token for the session's cookie."""
        return f"{self.base_url}?{TOKEN_PARAM}={self.token}"

    def allowed_hosts(self) -> set[str]:
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def allowed_origins(self) -> set[str]:
        return {f"http://{host}" for host in self.allowed_hosts()}

    def start(self) -> None:
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.1,), name="jobflow-ui", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        """Stop accepting, wake and end every event stream, close the socket."""
        self.stop.set()
        self.backend.cache.changes.touch(())
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=10)
        self.httpd.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "kubectl-jobflow-ui"
    protocol_version = "HTTP/1.1"

    @property
    def app(self) -> UIServer:
        return cast(UIServer, cast(Any, self.server).app)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the URL and errors, not every request."""

    # -- the connection ---------------------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the stdlib's reader has no deadline: read through ours instead
        self._reader = conns.DeadlineReader(self.connection)
        self.rfile = io.BufferedReader(self._reader)
        self._served = 0
        self._target = Target("/", {})

    def handle(self) -> None:
        try:
            super().handle()
        except OSError:
            self.close_connection = True  # reset by the client, or closed to make room

    def handle_one_request(self) -> None:
        """The first request's head within HEADER_TIMEOUT of the accept; a later one's first
        byte within IDLE_TIMEOUT and its head within HEADER_TIMEOUT of that byte."""
        if self._served:
            self._reader.arm(conns.IDLE_TIMEOUT, conns.HEADER_TIMEOUT, conns.MAX_HEAD_BYTES)
        self._served += 1
        super().handle_one_request()

    def end_headers(self) -> None:
        self.connection.settimeout(conns.WRITE_TIMEOUT)  # a client that stops reading is dropped
        super().end_headers()

    # -- checks -----------------------------------------------------------------------------
    def _begin(self) -> bool:
        """Read the target and check the caller; when refused, answer and say so (False)."""
        credentials = self.app.credentials
        try:
            target = parse_target(self.path)
            cookies = parse_cookies(self.headers.get("Cookie"))
        except RequestError as err:
            self._refuse(err.code, err.message)
            return False
        if self.headers.get("Host", "") not in self.app.allowed_hosts():
            self._refuse(403, "unexpected Host header")
            return False
        path = credentials.inside(target.path)
        if path is None:
            self._refuse(404, "not found")  # outside the session's prefix, whatever it carries
            return False
        self._target = Target(path, target.query)
        if not credentials.allowed(path, target.query, self.headers.get(TOKEN_HEADER), cookies):
            self._refuse(403, "missing or wrong token")
            return False
        entry = self.command == "GET" and path == "/" and credentials.token_ok(target.query.get(TOKEN_PARAM))
        reason = (
            None
            if entry
            else foreign(self.headers.get("Origin"), self.headers.get("Sec-Fetch-Site"), self.app.allowed_origins())
        )
        if reason is not None:  # the entry URL's token is proof enough: it may come from the file:// redirect
            self._refuse(403, reason)
            return False
        self.app.gate.authenticate(self.connection)
        return True

    def _refuse(self, code: int, message: str) -> None:
        """Answer and close: a refused request's body (if any) is never read."""
        self.close_connection = True
        self._error(code, message)

    # -- responses --------------------------------------------------------------------------
    def _send(self, code: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in {**SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code: int, doc: Any) -> None:
        self._send(code, json.dumps(doc, separators=(",", ":")).encode(), "application/json")

    def _error(self, code: int, message: str) -> None:
        self._json(code, {"error": message})

    # -- GET --------------------------------------------------------------------------------
    def do_GET(self) -> None:
        if not self._begin():
            return
        path, query = self._target.path, self._target.query
        try:
            key = parse_key(query.get("key", ""))
        except RequestError as err:
            self._refuse(err.code, err.message)
            return
        if path == "/":
            # The entry URL's token becomes the session's cookie; the page drops it from the URL.
            exchange = self.app.credentials.token_ok(query.get(TOKEN_PARAM))
            extra = {"Set-Cookie": self.app.credentials.set_cookie()} if exchange else None
            self._send(200, self.app.static["index.html"], "text/html; charset=utf-8", extra)
        elif path.startswith("/static/") and path.removeprefix("/static/") in STATIC_FILES:
            name = path.removeprefix("/static/")
            self._send(200, self.app.static[name], STATIC_FILES[name])
        elif path == "/api/list":
            self._json(200, self.app.backend.list_snapshot())
        elif path == "/api/jobflow":
            page_doc = self.app.backend.page(key)
            self._json(200, page_doc) if page_doc is not None else self._error(404, f"JobFlow {key} not found")
        elif path == "/api/cronjobflows":
            self._json(200, self.app.backend.cron_snapshot())
        elif path == "/api/jobflowtemplates":
            self._json(200, self.app.backend.templates.snapshot())
        elif path == "/api/jobflowtriggers":
            self._json(200, self.app.backend.trigger_snapshot())
        elif path == "/api/stream/list":
            self._stream(lambda: [("snapshot", self.app.backend.list_snapshot())], self._list_changes)
        elif path == "/api/stream/jobflow":
            self._stream(lambda: [self._page_message(key)], lambda keys: self._page_changes(key, keys))
        else:
            self._error(404, "not found")

    def _list_changes(self, keys: set[str] | None) -> list[tuple[str, Any]]:
        if keys is None:  # the change log forgot what changed since: start again from a snapshot
            return [("snapshot", self.app.backend.list_snapshot())]
        return [("changes", self.app.backend.list_changes(keys))] if keys else []

    def _page_message(self, key: str) -> tuple[str, Any]:
        doc = self.app.backend.page(key)
        return ("page", doc) if doc is not None else ("gone", {"key": key})

    def _page_changes(self, key: str, keys: set[str] | None) -> list[tuple[str, Any]]:
        return [self._page_message(key)] if keys is None or key in keys else []

    def _stream(
        self,
        first: Callable[[], list[tuple[str, Any]]],
        changes: Callable[[set[str] | None], list[tuple[str, Any]]],
    ) -> None:
        """Server-sent events: `first()`, then `changes(keys changed)` after every change (None
        when the change log no longer knows). The stream ends with the connection."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        log = self.app.backend.cache.changes
        seen = log.version  # before the snapshot: a change made while building it is sent again
        try:
            self._write_events(first())
            quiet_since = time.monotonic()
            while not self.app.stop.is_set():
                if log.wait(seen, 1.0) == seen:
                    if time.monotonic() - quiet_since >= KEEPALIVE_SECONDS:
                        self.wfile.write(b": keepalive\n\n")
                        self.wfile.flush()
                        quiet_since = time.monotonic()
                    continue
                time.sleep(COALESCE_SECONDS)
                current = log.version
                keys = log.changed_since(seen)
                seen = current
                self._write_events(changes(keys))
                quiet_since = time.monotonic()
        except OSError:
            return  # the tab closed, or stopped reading for WRITE_TIMEOUT

    def _write_events(self, messages: list[tuple[str, Any]]) -> None:
        for event, doc in messages:
            data = json.dumps(doc, separators=(",", ":"))
            self.wfile.write(f"event: {event}\ndata: {data}\n\n".encode())
        if messages:
            self.wfile.flush()

    # -- POST -------------------------------------------------------------------------------
    def do_POST(self) -> None:
        if not self._begin():
            return
        if self._target.path != "/api/action":
            self._refuse(404, "not found")
            return
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            self._refuse(415, "the body must be application/json")
            return
        try:
            length = parse_content_length(self.headers.get("Content-Length"))
            if length == 0:
                raise RequestError("a JSON body is required")
            self._reader.arm(conns.BODY_TIMEOUT, None, length)
            request = parse_action(self.rfile.read(length))
        except RequestError as err:
            self._refuse(err.code, err.message)
            return
        outcome = self.app.backend.act(request.key, request.action, list(request.flows))
        self._json(outcome.code, {"message": outcome.message} if outcome.code == 200 else {"error": outcome.message})
