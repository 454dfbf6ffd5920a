"""The health and metrics servers' connection deadline and cap, on real sockets (issue 21, item 6)."""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from jobflow_controller.manager import healthz
from jobflow_controller.manager.config import Options
from jobflow_controller.manager.endpoints import Endpoints
from jobflow_controller.manager.healthz import EndpointServer

CHECKS: dict[str, list[tuple[str, healthz.Check]]] = {"/livez": [("ping", lambda: None)]}


def get(port: int, path: str, host: str = "127.0.0.1") -> tuple[int, str]:
    connection = http.client.HTTPConnection(host, port, timeout=5)
    try:
        connection.request("GET", path)
        reply = connection.getresponse()
        return reply.status, reply.read().decode()
    finally:
        connection.close()


def connect(port: int, host: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection((host, port), timeout=10)


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """How long until the server closed `sock` (EOF or reset), or None if it is still open after `seconds`."""
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        data = sock.recv(1024)
    except ConnectionResetError:
        return time.monotonic() - started
    except TimeoutError:
        return None
    assert data == b"", data
    return time.monotonic() - started


def wait_for(condition: object, timeout: float = 5.0) -> None:
    until = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < until, "timed out"
        time.sleep(0.01)


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[EndpointServer]:
    limits = getattr(request, "param", {})
    endpoint = EndpointServer("127.0.0.1:0", checks=CHECKS, **limits).start()
    try:
        yield endpoint
    finally:
        endpoint.stop()


def test_the_limits_are_the_documented_ones() -> None:
    assert (healthz.REQUEST_DEADLINE, healthz.ANSWER_TIMEOUT, healthz.MAX_CONNECTIONS) == (5.0, 10.0, 64)


@pytest.mark.parametrize("server", [{"request_deadline": 0.3}], indirect=True)
def test_an_idle_connection_is_closed_after_the_deadline(server: EndpointServer) -> None:
    with connect(server.port) as idle:
        took = closed_within(idle, 5)
    assert took is not None and 0.2 <= took < 2
    wait_for(lambda: server.server.connections.open == 0)


@pytest.mark.parametrize("server", [{"request_deadline": 0.5}], indirect=True)
def test_a_request_dripped_slower_than_the_deadline_is_cut_off(server: EndpointServer) -> None:
    started = time.monotonic()
    with connect(server.port) as slow:
        try:
            for byte in b"GET /livez HTTP/1.0\r\n\r\n":
                slow.sendall(bytes([byte]))
                time.sleep(0.1)
        except OSError:  # closed under our feet: what is tested
            pass
        closed_within(slow, 5)
    assert time.monotonic() - started < 2  # the whole request would take 2.3 s


@pytest.mark.parametrize("server", [{"max_connections": 2, "request_deadline": 30.0}], indirect=True)
def test_connections_beyond_the_cap_are_closed_at_once_and_served_again_once_some_go(server: EndpointServer) -> None:
    first, second = connect(server.port), connect(server.port)
    wait_for(lambda: server.server.connections.open == 2)
    with connect(server.port) as third:
        took = closed_within(third, 5)
    assert took is not None and took < 1  # long before the 30 s deadline
    assert server.server.connections.open == 2
    first.close()
    second.close()
    wait_for(lambda: server.server.connections.open == 0)
    assert get(server.port, "/livez") == (200, "ok")


@pytest.mark.parametrize("server", [{"request_deadline": 30.0}], indirect=True)
def test_a_header_flood_is_cut_off_at_the_header_limit(server: EndpointServer) -> None:
    with connect(server.port) as flood:
        flood.sendall(b"GET /livez HTTP/1.0\r\n")
        try:
            for _ in range(64):
                flood.sendall(b"X-Filler: " + b"a" * 1000 + b"\r\n")
        except OSError:
            pass
        took = closed_within(flood, 5)
    assert took is not None


@pytest.fixture
def endpoints() -> Iterator[Endpoints]:
    # Two listeners, as the defaults (:11251 and :8081) are: "localhost" only to name another address.
    options = Options(
        enable_healthz=True, healthz_address="127.0.0.1:0", enable_metrics=True, listen_address="localhost:0"
    )
    running = Endpoints(
        options, CollectorRegistry(), leader_election=lambda: None, informer_sync=lambda: None, shutdown=lambda: None
    )
    running.start()
    try:
        yield running
    finally:
        running.stop()


def test_a_flood_of_idle_metrics_connections_does_not_stop_livez(endpoints: Endpoints) -> None:
    health, metrics = endpoints.servers
    assert health.checks and metrics.registry is not None and health.registry is None
    flood = [connect(metrics.port, "localhost") for _ in range(healthz.MAX_CONNECTIONS)]
    try:
        wait_for(lambda: metrics.server.connections.open == healthz.MAX_CONNECTIONS)
        with connect(metrics.port, "localhost") as one_more:
            assert closed_within(one_more, 5) is not None  # the metrics server is full
        for _ in range(3):
            assert get(health.port, "/livez") == (200, "ok")
    finally:
        for sock in flood:
            sock.close()
    wait_for(lambda: metrics.server.connections.open == 0)
    assert get(metrics.port, "/metrics", "localhost")[0] == 200
