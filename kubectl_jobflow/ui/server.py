"""The UI's HTTP server: loopback only, every request carrying the session's random token.

Anyone on the machine can connect to 127.0.0.1, and any web page the user visits can make the
browser send requests to it; the server acts with the user's Kubernetes credentials, so:
- every request (the page, its scripts, the event streams, the actions) must carry the token,
  in the `token` query parameter or the `X-JobFlow-Token` header, else 403;
- the Host header must name the loopback address and our port, else 403: a DNS-rebinding page
  (evil.example resolving to 127.0.0.1) sends its own host name;
- a POST must be JSON and, when the browser says where it comes from (Origin), come from us.
Live updates are server-sent events: each stream waits on the cache's change log, never on the API.
"""

from __future__ import annotations

import hmac
import http.server
import json
import secrets
import threading
import time
from collections.abc import Callable
from importlib import resources
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from kubectl_jobflow.ui.backend import Backend

TOKEN_PARAM = "token"
TOKEN_HEADER = "X-JobFlow-Token"
#: The stream's heartbeat: a comment line that keeps proxies and the browser from giving up.
KEEPALIVE_SECONDS = 15.0
#: Changes arriving this close together are sent as one message (a burst of Job updates).
COALESCE_SECONDS = 0.2
MAX_BODY = 64 * 1024
STATIC_FILES = {
    "app.js": "text/javascript; charset=utf-8",
    "dag.js": "text/javascript; charset=utf-8",
    "cron.js": "text/javascript; charset=utf-8",
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


class UIServer:
    """The HTTP server, its token and its stop signal."""

    def __init__(self, backend: Backend, port: int = 0, token: str | None = None) -> None:
        self.backend = backend
        self.token = token or secrets.token_urlsafe(32)
        self.stop = threading.Event()
        self.static = load_static()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self.httpd.daemon_threads = True
        cast(Any, self.httpd).app = self
        self.port = int(self.httpd.server_address[1])
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?{TOKEN_PARAM}={self.token}"

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

    @property
    def app(self) -> UIServer:
        return cast(UIServer, cast(Any, self.server).app)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the URL and errors, not every request."""

    # -- checks -----------------------------------------------------------------------------
    def _query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.path).query)

    def _refusal(self) -> str | None:
        """Why this request is refused (403), or None."""
        if self.headers.get("Host", "") not in self.app.allowed_hosts():
            return "unexpected Host header"
        given = self.headers.get(TOKEN_HEADER) or (self._query().get(TOKEN_PARAM) or [""])[0]
        if not hmac.compare_digest(given.encode(), self.app.token.encode()):
            return "missing or wrong token"
        return None

    # -- responses --------------------------------------------------------------------------
    def _send(self, code: int, body: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code: int, doc: Any) -> None:
        self._send(code, json.dumps(doc, separators=(",", ":")).encode(), "application/json")

    def _error(self, code: int, message: str) -> None:
        self._json(code, {"error": message})

    # -- GET --------------------------------------------------------------------------------
    def do_GET(self) -> None:
        refusal = self._refusal()
        if refusal:
            self._error(403, refusal)
            return
        path = urlsplit(self.path).path
        key = (self._query().get("key") or [""])[0]
        if path == "/":
            page = self.app.static["index.html"].replace(b"{{TOKEN}}", self.app.token.encode())
            self._send(200, page, "text/html; charset=utf-8")
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
        elif path == "/api/stream/list":
            self._stream(lambda: [("snapshot", self.app.backend.list_snapshot())], self._list_changes)
        elif path == "/api/stream/jobflow":
            self._stream(lambda: [self._page_message(key)], lambda keys: self._page_changes(key, keys))
        else:
            self._error(404, "not found")

    def _list_changes(self, keys: set[str]) -> list[tuple[str, Any]]:
        return [("changes", self.app.backend.list_changes(keys))] if keys else []

    def _page_message(self, key: str) -> tuple[str, Any]:
        doc = self.app.backend.page(key)
        return ("page", doc) if doc is not None else ("gone", {"key": key})

    def _page_changes(self, key: str, keys: set[str]) -> list[tuple[str, Any]]:
        return [self._page_message(key)] if key in keys else []

    def _stream(
        self, first: Callable[[], list[tuple[str, Any]]], changes: Callable[[set[str]], list[tuple[str, Any]]]
    ) -> None:
        """Server-sent events: `first()`, then `changes(keys changed)` after every change."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
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
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            return  # the tab closed

    def _write_events(self, messages: list[tuple[str, Any]]) -> None:
        for event, doc in messages:
            data = json.dumps(doc, separators=(",", ":"))
            self.wfile.write(f"event: {event}\ndata: {data}\n\n".encode())
        if messages:
            self.wfile.flush()

    # -- POST -------------------------------------------------------------------------------
    def do_POST(self) -> None:
        refusal = self._refusal()
        origin = self.headers.get("Origin")
        if refusal is None and origin is not None and origin not in self.app.allowed_origins():
            refusal = "unexpected Origin"
        if refusal:
            self._error(403, refusal)
            return
        if urlsplit(self.path).path != "/api/action":
            self._error(404, "not found")
            return
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            self._error(415, "the body must be application/json")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY:
            self._error(400, "a JSON body is required")
            return
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            self._error(400, "the body is not JSON")
            return
        flows = body.get("flows") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not isinstance(flows or [], list):
            self._error(400, 'expected {"key": "<ns>/<name>", "action": "...", "flows": [...]}')
            return
        key, action = str(body.get("key") or ""), str(body.get("action") or "")
        outcome = self.app.backend.act(key, action, [str(f) for f in flows or []])
        self._json(outcome.code, {"message": outcome.message} if outcome.code == 200 else {"error": outcome.message})
