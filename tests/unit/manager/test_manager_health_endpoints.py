"""/healthz and /healthz/ping as upstream's (they cannot fail); the lease watchdog on /livez (issue 20, item 2)."""

from __future__ import annotations

import http.client
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from jobflow_controller.manager.config import Options
from jobflow_controller.manager.endpoints import Endpoints

LEASE_LOST = "failed election to renew leadership on lease jobflow-controller"


class Health:
    """What each check answers: None is healthy, a string is the reason it is not."""

    def __init__(self) -> None:
        self.leader: str | None = None
        self.synced: str | None = None
        self.stopping: str | None = None


@pytest.fixture
def health() -> Health:
    return Health()


@pytest.fixture
def port(health: Health) -> Iterator[int]:
    endpoints = Endpoints(
        Options(enable_healthz=True, healthz_address="127.0.0.1:0"),
        CollectorRegistry(),
        leader_election=lambda: health.leader,
        informer_sync=lambda: health.synced,
        shutdown=lambda: health.stopping,
    )
    endpoints.start()
    try:
        yield endpoints.servers[0].port
    finally:
        endpoints.stop()


def get(port: int, path: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        reply = connection.getresponse()
        return reply.status, reply.read().decode()
    finally:
        connection.close()


def test_healthz_and_healthz_ping_answer_ok_as_upstream(port: int) -> None:
    assert get(port, "/healthz") == (200, "ok")
    assert get(port, "/healthz/ping") == (200, "ok")
    assert get(port, "/healthz?verbose") == (200, "[+]ping ok\nhealthz check passed\n")


def test_healthz_cannot_fail_even_when_the_lease_is_lost_or_the_caches_wait(port: int, health: Health) -> None:
    health.leader, health.synced, health.stopping = LEASE_LOST, "not synced", "shutting down"
    assert get(port, "/healthz") == (200, "ok")
    assert get(port, "/healthz/ping") == (200, "ok")


def test_livez_fails_when_the_leader_stopped_renewing_its_lease(port: int, health: Health) -> None:
    assert get(port, "/livez") == (200, "ok")
    assert get(port, "/livez/leaderElection") == (200, "ok")
    health.leader = LEASE_LOST
    code, body = get(port, "/livez")
    assert code == 500
    assert body == f"[+]ping ok\n[-]leaderElection failed: {LEASE_LOST}\nlivez check failed\n"
    assert get(port, "/livez/leaderElection") == (500, f"internal server error: {LEASE_LOST}\n")
    assert get(port, "/livez/ping") == (200, "ok")


def test_readyz_and_its_checks_alone(port: int, health: Health) -> None:
    health.synced = "informer caches have not synced yet"
    assert get(port, "/readyz")[0] == 500
    assert get(port, "/readyz/informer-sync") == (500, "internal server error: informer caches have not synced yet\n")
    assert get(port, "/readyz/shutdown") == (200, "ok")
    health.synced = None
    assert get(port, "/readyz") == (200, "ok")


@pytest.mark.parametrize("path", ["/nope", "/healthz/leaderElection", "/healthz/nope", "/livez/", "/ping"])
def test_anything_else_is_404(port: int, path: str) -> None:
    assert get(port, path) == (404, "404 page not found\n")
