"""`kubectl jobflow ui`'s server under connections that hold threads (issue 33): the head, body and
idle deadlines and the connection caps, with real sockets on 127.0.0.1. The deadlines are shortened
here (monkeypatched module constants); docs give the defaults."""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from test_ui_server import TOKEN, FakeBackend

from kubectl_jobflow.ui import connections as conns
from kubectl_jobflow.ui.auth import TOKEN_HEADER
from kubectl_jobflow.ui.connections import ConnectionGate
from kubectl_jobflow.ui.server import UIServer


@pytest.fixture
def short_deadlines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conns, "HEADER_TIMEOUT", 0.6)
    monkeypatch.setattr(conns, "IDLE_TIMEOUT", 0.6)
    monkeypatch.setattr(conns, "BODY_TIMEOUT", 0.6)


@pytest.fixture
def server(short_deadlines: None) -> Iterator[UIServer]:
    ui = UIServer(FakeBackend(), token=TOKEN)  # type: ignore[arg-type]
    ui.start()
    yield ui
    ui.shutdown()


def connect(ui: UIServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", ui.port), timeout=5)
    return sock


def closed_after(sock: socket.socket) -> float:
    """Seconds until the server closes `sock` (what it sends before is read and dropped)."""
    started = time.monotonic()
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def head(ui: UIServer, path: str = "/api/list", extra: str = "") -> bytes:
    path = ui.credentials.prefix + path.removeprefix("/")
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{ui.port}\r\n{TOKEN_HEADER}: {TOKEN}\r\n{extra}\r\n".encode()


def legit_get(ui: UIServer) -> tuple[int, float]:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=5)
    conn.request(
        "GET", f"{ui.credentials.prefix}api/list", headers={"Host": f"127.0.0.1:{ui.port}", TOKEN_HEADER: TOKEN}
    )
    status = conn.getresponse().status
    conn.close()
    return status, time.monotonic() - started


# -- deadlines ---------------------------------------------------------------------------------
def test_a_connection_that_sends_nothing_is_closed_at_the_header_deadline(server: UIServer) -> None:
    with connect(server) as sock:
        assert 0.3 < closed_after(sock) < 3.0


def test_a_head_sent_one_byte_at_a_time_must_still_arrive_by_the_deadline(server: UIServer) -> None:
    """Each byte comes well within any per-read timeout; the deadline is on the whole head."""
    with connect(server) as sock:
        started = time.monotonic()
        request = head(server)
        try:
            for byte in request[:-2]:
                sock.sendall(bytes([byte]))
                time.sleep(0.1)
                if time.monotonic() - started > 3.0:
                    break
        except OSError:
            pass  # closed by the server while we trickled: what is tested
        assert time.monotonic() - started + closed_after(sock) < 3.5


def test_a_head_larger_than_the_cap_closes_the_connection(server: UIServer) -> None:
    with connect(server) as sock:
        padding = "".join(f"X-Pad-{i}: {'a' * 1000}\r\n" for i in range(40))  # 40 KB > 32 KiB
        with contextlib.suppress(OSError):  # closed by the server before the end: what is tested
            sock.sendall(head(server, extra=padding))
        assert closed_after(sock) < 3.0


def test_a_kept_alive_connection_is_closed_once_idle(server: UIServer) -> None:
    with connect(server) as sock:
        sock.sendall(head(server))
        response = sock.recv(65536)
        assert response.startswith(b"HTTP/1.1 200")
        assert 0.3 < closed_after(sock) < 3.0


def test_a_body_that_does_not_arrive_in_time_closes_the_connection(server: UIServer) -> None:
    with connect(server) as sock:
        sock.sendall(
            f"POST {server.credentials.prefix}api/action HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{server.port}\r\n{TOKEN_HEADER}: {TOKEN}\r\n"
            'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"key":'.encode()
        )
        assert closed_after(sock) < 3.0
    assert server.backend.acted == []  # type: ignore[attr-defined]


# -- caps --------------------------------------------------------------------------------------
def test_idle_connections_beyond_the_cap_do_not_keep_the_browser_out(short_deadlines: None) -> None:
    """Issue 33: 200 connections that send nothing. Without caps each holds a thread until its
    deadline; with them the oldest unauthenticated one is closed to admit each new one."""
    ui = UIServer(FakeBackend(), token=TOKEN)  # type: ignore[arg-type]
    ui.start()
    before = threading.active_count()
    idle = [connect(ui) for _ in range(200)]
    try:
        time.sleep(0.2)
        assert threading.active_count() - before <= conns.MAX_CONNECTIONS + 2
        assert ui.gate.counts()["open"] <= conns.MAX_CONNECTIONS
        status, took = legit_get(ui)
        assert status == 200 and took < 5.0  # ~2 ms idle; the threads and the gate are what is tested
    finally:
        for sock in idle:
            sock.close()
        ui.shutdown()


def test_authenticated_streams_are_never_closed_to_make_room_and_past_the_cap_a_new_one_is_refused(
    short_deadlines: None,
) -> None:
    ui = UIServer(FakeBackend(), token=TOKEN, gate=ConnectionGate(max_total=3, max_per_client=3))  # type: ignore[arg-type]
    ui.start()
    streams: list[socket.socket] = []
    try:
        for _ in range(3):
            sock = connect(ui)
            sock.sendall(head(ui, "/api/stream/list"))
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            streams.append(sock)
        late = connect(ui)
        assert closed_after(late) < 1.0  # refused at once: every slot is an authenticated stream
        assert ui.gate.counts() == {"open": 3, "authenticated": 3, "refused": 1, "evicted": 0}
        streams[0].settimeout(0.3)
        with pytest.raises(TimeoutError):
            while True:  # the snapshot, then nothing: still open
                assert streams[0].recv(65536), "the stream was closed"
    finally:
        for sock in streams:
            sock.close()
        ui.shutdown()


@pytest.mark.parametrize(
    ("opened", "client", "admitted", "evicted"),
    [
        # room left: admitted, nothing closed
        ([("a", "10.0.0.1", False)], "10.0.0.1", True, []),
        # the client's cap: its oldest unauthenticated connection goes, not another client's
        ([("x", "10.0.0.2", False), ("a", "10.0.0.1", True), ("b", "10.0.0.1", False)], "10.0.0.1", True, ["b"]),
        # the client's cap, every connection of it authenticated: refused
        ([("a", "10.0.0.1", True), ("b", "10.0.0.1", True)], "10.0.0.1", False, []),
        # the total cap: the oldest unauthenticated of anyone
        ([("a", "10.0.0.1", True), ("x", "10.0.0.2", False), ("y", "10.0.0.2", False)], "10.0.0.3", True, ["x"]),
        # the total cap, all authenticated: refused
        ([("a", "10.0.0.1", True), ("x", "10.0.0.2", True), ("y", "10.0.0.3", True)], "10.0.0.4", False, []),
    ],
)
def test_the_gate_closes_the_oldest_unauthenticated_connection_or_refuses(
    opened: list[tuple[str, str, bool]], client: str, admitted: bool, evicted: list[str]
) -> None:
    gate = ConnectionGate(max_total=3, max_per_client=2)
    for conn, address, authenticated in opened:
        assert gate.admit(conn, address) == (True, [])
        if authenticated:
            gate.authenticate(conn)
    assert gate.admit("new", client) == (admitted, evicted)


def test_a_released_connection_frees_its_slot() -> None:
    gate = ConnectionGate(max_total=1, max_per_client=1)
    gate.admit("a", "c")
    gate.authenticate("a")
    assert gate.admit("b", "c") == (False, [])
    gate.release("a")
    gate.release("a")  # twice, as the server may
    assert gate.admit("b", "c") == (True, [])
