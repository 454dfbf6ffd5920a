"""The HTTP and TCP checks themselves, against servers this test runs on 127.0.0.1 (and only there).

kubelet's rules: an HTTP GET passes on 2xx and 3xx (a redirect is not followed), fails on anything
else, on a refused connection and on a timeout; a TCP check passes once the connection is made.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from jobflow_controller.apis.probe import HttpGet, TcpSocket
from jobflow_controller.jobflow.probes import MAX_BODY_BYTES, NetworkProbeRunner
from jobflow_controller.jobflow.probes.net import Deadline

LOCALHOST = "127.0.0.1"


class _Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:
        _Handler.seen.append((self.path, self.headers.get("X-Probe")))
        code = int(self.path.rsplit("/", 1)[-1]) if self.path.rsplit("/", 1)[-1].isdigit() else 200
        self.send_response(code)
        if 300 <= code < 400:
            self.send_header("Location", "http://192.0.2.1/elsewhere")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def http_port() -> Iterator[int]:
    server = ThreadingHTTPServer((LOCALHOST, 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOCALHOST, 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("code", "ok"), [(200, True), (204, True), (302, True), (399, True), (404, False), (500, False)]
)
def test_an_http_check_passes_on_2xx_and_3xx_only(http_port: int, code: int, ok: bool) -> None:
    result = NetworkProbeRunner().http_get(LOCALHOST, HttpGet("ps", http_port, f"/status/{code}"), 1.0)
    assert result.ok is ok
    if not ok:
        assert result.message == f"GET http://{LOCALHOST}:{http_port}/status/{code}: HTTP {code}"


def test_an_http_check_sends_its_path_and_header(http_port: int) -> None:
    _Handler.seen.clear()
    NetworkProbeRunner().http_get(LOCALHOST, HttpGet("ps", http_port, "/ready?x=1", ("X-Probe", "yes")), 1.0)
    assert _Handler.seen == [("/ready?x=1", "yes")]


def test_an_http_check_without_a_path_gets_the_root(http_port: int) -> None:
    _Handler.seen.clear()
    assert NetworkProbeRunner().http_get(LOCALHOST, HttpGet("ps", http_port), 1.0).ok
    assert _Handler.seen == [("/", None)]


def test_an_http_check_of_a_closed_port_fails() -> None:
    port = _closed_port()
    result = NetworkProbeRunner().http_get(LOCALHOST, HttpGet("ps", port, "/"), 1.0)
    assert not result.ok
    assert result.message.startswith(f"GET http://{LOCALHOST}:{port}/: ")


def test_an_http_check_of_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as listener:
        listener.bind((LOCALHOST, 0))
        listener.listen(1)  # accepts the connection (in the backlog) and never answers
        started = time.monotonic()
        result = NetworkProbeRunner().http_get(LOCALHOST, HttpGet("ps", listener.getsockname()[1], "/"), 0.3)
        elapsed = time.monotonic() - started
    assert not result.ok
    assert "timed out" in result.message
    assert elapsed < 2.0


def test_a_tcp_check_passes_once_the_port_accepts(http_port: int) -> None:
    assert NetworkProbeRunner().tcp_socket(LOCALHOST, TcpSocket("ps", http_port), 1.0).ok


def test_a_tcp_check_of_a_closed_port_fails() -> None:
    port = _closed_port()
    result = NetworkProbeRunner().tcp_socket(LOCALHOST, TcpSocket("ps", port), 1.0)
    assert not result.ok
    assert result.message.startswith(f"dial tcp {LOCALHOST}:{port}: ")


# -- one deadline for the whole check (docs/probe.md "Limits") -------------------------------------
DRIP_INTERVAL = 0.3
STATUS = b"HTTP/1.1 200 OK\r\n"
#: What each slow-drip server sends, one byte every DRIP_INTERVAL after the part sent at once.
DRIPS = {
    "the status line": (b"", STATUS + b"Content-Length: 0\r\n\r\n"),
    "the headers": (STATUS, b"X-Slow: " + b"y" * 100 + b"\r\n\r\n"),
    "the body": (STATUS + b"Content-Length: 100000\r\n\r\n", b"z" * 100),
}


class _SlowDrip:
    """A server on 127.0.0.1 that reads the request, sends `at_once`, then one byte of `drip` every
    DRIP_INTERVAL: each read of the check gets a byte well inside a per-read timeout."""

    def __init__(self, at_once: bytes, drip: bytes) -> None:
        self.listener = socket.create_server((LOCALHOST, 0))
        self.port = int(self.listener.getsockname()[1])
        self.at_once, self.drip = at_once, drip
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        with conn:
            try:
                while b"\r\n\r\n" not in conn.recv(4096):
                    pass
                conn.sendall(self.at_once)
                for byte in self.drip:
                    conn.sendall(bytes([byte]))
                    time.sleep(DRIP_INTERVAL)
            except OSError:
                return  # the check gave up and closed the connection

    def close(self) -> None:
        self.listener.close()


@pytest.mark.parametrize("part", sorted(DRIPS))
def test_an_http_check_of_a_slow_drip_server_fails_within_its_timeout(part: str) -> None:
    server = _SlowDrip(*DRIPS[part])
    try:
        started = time.monotonic()
        result = NetworkProbeRunner().http_get(LOCALHOST, HttpGet("ps", server.port, "/"), 1.0)
        elapsed = time.monotonic() - started
    finally:
        server.close()
    assert not result.ok
    assert "timed out" in result.message
    assert elapsed < 1.5


def test_a_quick_answer_with_a_body_past_the_read_limit_passes_at_once() -> None:
    body = b"x" * (MAX_BODY_BYTES * 3)
    server = _SlowDrip(STATUS + b"Content-Length: %d\r\n\r\n" % len(body) + body, b"")
    try:
        started = time.monotonic()
        result = NetworkProbeRunner().http_get(LOCALHOST, HttpGet("ps", server.port, "/"), 1.0)
        elapsed = time.monotonic() - started
    finally:
        server.close()
    assert result.ok
    assert elapsed < 0.5


def test_a_deadline_that_has_passed_refuses_every_further_operation() -> None:
    deadline = Deadline(0.0)
    with pytest.raises(TimeoutError, match="timed out"):
        deadline.remaining()
