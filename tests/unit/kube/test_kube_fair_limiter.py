"""The client's QPS limiter takes turns by namespace (fair_limiter.py, docs/fairness.md)."""

from __future__ import annotations

import threading

import pytest

from jobflow_controller.kube.errors import RequestCancelled
from jobflow_controller.kube.fair_limiter import FairTokenBucket, FairTokens, tenant_of_path
from workqueue import FakeClock


@pytest.mark.parametrize(
    ("path", "tenant"),
    [
        ("/apis/batch.volcano.sh/v1alpha1/namespaces/team-a/jobs", "team-a"),
        ("/apis/flow.volcano.sh/v1alpha1/namespaces/team-b/jobflows/x/status", "team-b"),
        ("/api/v1/namespaces/team-c/events", "team-c"),
        ("/api/v1/namespaces/team-d", "team-d"),
        ("/apis/flow.volcano.sh/v1alpha1/jobflows", ""),
        ("/api/v1/namespaces", ""),
        ("/apis/flow.volcano.sh/v1alpha1", ""),
    ],
)
def test_a_requests_tenant_is_the_namespace_its_path_names(path: str, tenant: str) -> None:
    assert tenant_of_path(path) == tenant


def _grant_order(arrivals: list[str], qps: float = 10.0, burst: int = 1) -> list[str]:
    """Every arrival at time 0 (the bucket's burst taken by the first ones), then a token every
    1/qps s: the tenants in the order their requests are granted."""
    tokens = FairTokens(qps, burst, now=0.0)
    tickets = [tokens.take(tenant, 0.0) for tenant in arrivals]
    order = [t.tenant for t in tickets if t.granted]
    step = 0
    while len(order) < len(arrivals):
        step += 1
        order += [t.tenant for t in tokens.grant(step / qps)]
    return [str(t) for t in order]


@pytest.mark.parametrize(
    ("arrivals", "granted"),
    [
        pytest.param(
            ["big", "big", "big", "big", "small"],
            ["big", "small", "big", "big", "big"],
            id="a tenant arriving behind a backlog goes before it",
        ),
        pytest.param(
            ["a", "a", "b", "b", "c"],
            ["a", "b", "c", "a", "b"],
            id="three tenants share the tokens equally, FIFO within each",
        ),
        pytest.param(["one", "one", "one"], ["one", "one", "one"], id="one tenant alone: first come, first served"),
    ],
)
def test_tokens_go_to_the_waiting_tenants_in_turn(arrivals: list[str], granted: list[str]) -> None:
    assert _grant_order(arrivals) == granted


def test_the_rate_and_the_burst_are_client_gos() -> None:
    tokens = FairTokens(qps=10.0, burst=2, now=0.0)
    assert [tokens.take("a", 0.0).granted for _ in range(3)] == [True, True, False]
    assert tokens.grant(0.05) == []  # half a token
    assert [t.tenant for t in tokens.grant(0.1)] == ["a"]
    assert tokens.take("a", 10.0).granted  # idle: the bucket refilled, to its burst only
    assert tokens.take("a", 10.0).granted
    assert not tokens.take("a", 10.0).granted


def test_backlog_is_the_wait_of_a_request_last_in_line() -> None:
    tokens = FairTokens(qps=10.0, burst=1, now=0.0)
    assert tokens.backlog(0.0) == 0.0
    tokens.take("a", 0.0)
    tokens.take("a", 0.0)
    tokens.take("b", 0.0)
    assert tokens.backlog(0.0) == pytest.approx(0.3)  # two waiting, then it


def test_a_cancelled_ticket_leaves_its_line_and_its_tenants_turn() -> None:
    tokens = FairTokens(qps=10.0, burst=1, now=0.0)
    tokens.take("a", 0.0)
    gone = tokens.take("b", 0.0)
    tokens.take("c", 0.0)
    tokens.cancel(gone)
    assert [t.tenant for t in tokens.grant(0.1)] == ["c"]
    assert len(tokens) == 0


def test_the_bucket_grants_a_newcomer_before_another_tenants_waiting_requests() -> None:
    """Real threads, real time (qps 50): three threads of one tenant keep the bucket busy; a request
    of another tenant, made while they wait, gets the next token but the one already due."""
    bucket = FairTokenBucket(qps=50.0, burst=1)
    order: list[str] = []
    lock = threading.Lock()
    newcomer_waiting = threading.Event()

    def busy() -> None:
        for _ in range(8):
            bucket.accept(tenant="big")
            with lock:
                order.append("big")
                if len(order) == 6:
                    newcomer_waiting.set()

    threads = [threading.Thread(target=busy) for _ in range(3)]
    for thread in threads:
        thread.start()
    newcomer_waiting.wait(5)
    with lock:
        before = len(order)
    bucket.accept(tenant="small")
    with lock:
        after = len(order)
    for thread in threads:
        thread.join(5)
    assert after - before <= 2  # at most the token already due, and one granted while we looked


def test_a_stopped_client_stops_waiting_for_its_token() -> None:
    bucket = FairTokenBucket(qps=0.01, burst=1, clock=FakeClock())
    bucket.accept(tenant="a")
    stop = threading.Event()
    threading.Timer(0.05, stop.set).start()
    with pytest.raises(RequestCancelled):
        bucket.accept(stop, tenant="a")
    assert bucket.backlog() > 0
