"""The REST layer's transport: kept-alive connections, Go's resend rules, urllib3 where it models no more.

A scripted HTTP/1.1 server on a loopback socket answers each request as the test says (a reply, a
reply that closes, a close without a reply, garbage), and counts connections and requests.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from jobflow_controller.kube.client_library import client as k8s_client
from jobflow_controller.kube.transport import Transport, supports

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n[1,\r\n2\r\n2]\r\n0\r\n\r\n"
CLOSING = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"

#: What the server does with a request: bytes to answer, None to close without answering.
Script = Callable[[int, bytes], bytes | None]


@dataclass
class Server:
    script: Script
    sock: socket.socket = field(default_factory=lambda: socket.create_server(("127.0.0.1", 0)))
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    open_conns: list[socket.socket] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            self.open_conns.append(conn)
            threading.Thread(target=self._serve_conn, args=(conn,), daemon=True).start()

    def _serve_conn(self, conn: socket.socket) -> None:
        buffer = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buffer:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buffer += chunk
                head, _, rest = buffer.partition(b"\r\n\r\n")
                lengths = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")]
                length = int(lengths[0].split(b":")[1]) if lengths else 0
                while len(rest) < length:
                    rest += conn.recv(65536)
                self.requests.append(head.split(b"\r\n")[0])
                buffer = rest[length:]
                answer = self.script(len(self.requests), head)
                if answer is None:
                    return
                conn.sendall(answer)
                if b"Connection: close" in answer:
                    return


@pytest.fixture
def serve() -> Iterator[Callable[[Script], Server]]:
    servers: list[Server] = []

    def start(script: Script) -> Server:
        server = Server(script)
        threading.Thread(target=server.serve, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.sock.close()


def configuration(host: str, **fields: object) -> k8s_client.Configuration:
    config = k8s_client.Configuration()
    config.host = host
    for name, value in fields.items():
        setattr(config, name, value)
    return config


def always(answer: bytes) -> Script:
    return lambda _n, _head: answer


@pytest.mark.parametrize(
    ("fields", "supported"),
    [
        ({}, True),
        ({"retries": False}, True),
        ({"retries": 5}, True),
        ({"proxy": "http://proxy:3128"}, False),
        ({"assert_hostname": "other"}, False),
        ({"socket_options": []}, False),
        ({"retries": object()}, False),
    ],
)
def test_the_transport_takes_only_the_configurations_it_reproduces(fields: dict[str, object], supported: bool) -> None:
    assert supports(configuration("https://127.0.0.1:6443", **fields)) is supported


def test_a_url_on_the_base_keeps_the_base_path_and_the_query() -> None:
    transport = Transport(configuration("https://proxy.example:8443/k8s/clusters/c-1"))
    url = "https://proxy.example:8443/k8s/clusters/c-1/api/v1/namespaces?limit=5"
    assert transport.target(url) == "/k8s/clusters/c-1/api/v1/namespaces?limit=5"


def test_requests_share_one_kept_alive_connection(serve: Callable[[Script], Server]) -> None:
    server = serve(always(OK))
    transport = Transport(configuration(server.url))
    for _ in range(5):
        assert transport.round_trip("GET", server.url + "/api", {}, None, 5.0) == (200, b"{}")
    assert server.connections == 1


def test_a_chunked_body_is_read_whole(serve: Callable[[Script], Server]) -> None:
    server = serve(always(CHUNKED))
    assert Transport(configuration(server.url)).round_trip("GET", server.url + "/", {}, None, 5.0).data == b"[1,2]"


def test_a_reply_that_closes_leaves_no_connection_to_reuse(serve: Callable[[Script], Server]) -> None:
    server = serve(always(CLOSING))
    transport = Transport(configuration(server.url))
    transport.round_trip("GET", server.url + "/", {}, None, 5.0)
    transport.round_trip("GET", server.url + "/", {}, None, 5.0)
    assert server.connections == 2


def test_a_connection_the_server_closed_while_idle_is_not_used(serve: Callable[[Script], Server]) -> None:
    server = serve(always(OK))
    transport = Transport(configuration(server.url, retries=False))
    transport.round_trip("POST", server.url + "/", {}, b"{}", 5.0)
    server.open_conns[0].shutdown(socket.SHUT_RDWR)
    # Even a POST with no resends allowed goes out: the dropped connection is noticed before use.
    assert transport.round_trip("POST", server.url + "/", {}, b"{}", 5.0).status == 200
    assert (server.connections, len(server.requests)) == (2, 2)


@pytest.mark.parametrize(
    ("method", "resent"), [("GET", True), ("PUT", True), ("DELETE", True), ("POST", False), ("PATCH", False)]
)
def test_a_reused_connection_broken_under_a_request_resends_only_idempotent_methods(
    serve: Callable[[Script], Server], method: str, resent: bool
) -> None:
    server = serve(lambda n, _head: None if n == 2 else OK)  # the second request meets a close
    transport = Transport(configuration(server.url))
    transport.round_trip("GET", server.url + "/", {}, None, 5.0)
    if resent:
        assert transport.round_trip(method, server.url + "/", {}, b"{}", 5.0).status == 200
        assert len(server.requests) == 3
    else:
        with pytest.raises(OSError):
            transport.round_trip(method, server.url + "/", {}, b"{}", 5.0)
        assert len(server.requests) == 2


def test_a_new_connection_broken_under_a_request_is_not_resent(serve: Callable[[Script], Server]) -> None:
    server = serve(lambda _n, _head: None)
    with pytest.raises(OSError):
        Transport(configuration(server.url)).round_trip("GET", server.url + "/", {}, None, 5.0)
    assert len(server.requests) == 1


def refused_url() -> str:
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize(("retries", "attempts"), [(None, 4), (False, 1), (1, 2)])
def test_a_refused_connect_is_tried_again_as_configured(
    monkeypatch: pytest.MonkeyPatch, retries: object, attempts: int
) -> None:
    url = refused_url()
    transport = Transport(configuration(url, retries=retries))
    tries: list[int] = []
    real_open = transport._open

    def counting_open(timeout: float) -> object:
        tries.append(1)
        return real_open(timeout)

    monkeypatch.setattr(transport, "_open", counting_open)
    with pytest.raises(ConnectionRefusedError):
        transport.round_trip("POST", url + "/", {}, b"{}", 2.0)
    assert len(tries) == attempts


def test_a_read_timeout_is_raised_and_not_retried(serve: Callable[[Script], Server]) -> None:
    stall = threading.Event()
    server = serve(lambda n, _head: (stall.wait(5) and None) if n == 2 else OK)
    transport = Transport(configuration(server.url))
    transport.round_trip("GET", server.url + "/", {}, None, 5.0)
    with pytest.raises(TimeoutError):
        transport.round_trip("GET", server.url + "/", {}, None, (2.0, 0.3))
    stall.set()
    assert len(server.requests) == 2


def test_a_malformed_reply_is_a_connection_error(serve: Callable[[Script], Server]) -> None:
    server = serve(always(b"SPDY/9 who knows\r\n\r\n"))
    with pytest.raises(ConnectionError, match=r"not an HTTP/1\.x status line"):
        Transport(configuration(server.url, retries=False)).round_trip("POST", server.url + "/", {}, b"{}", 5.0)


def test_close_closes_the_idle_connections_and_keeps_none_after(serve: Callable[[Script], Server]) -> None:
    server = serve(always(OK))
    transport = Transport(configuration(server.url))
    transport.round_trip("GET", server.url + "/", {}, None, 5.0)
    transport.close()
    assert transport._idle == []
    transport.round_trip("GET", server.url + "/", {}, None, 5.0)
    assert transport._idle == []
