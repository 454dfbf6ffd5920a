"""`leader_election_master_status{name}` and `leader_election_slowpath_total{name}`."""

from __future__ import annotations

import threading

from leaderelection_fakes import FakeClock, FakeLeaseServer, FakeLock, make_config
from prometheus_client import CollectorRegistry, generate_latest

from jobflow_controller.leaderelection import (
    LeaderElector,
    LockConflictError,
    PrometheusLeaderMetrics,
    ResourceLockError,
)


def status(registry: CollectorRegistry) -> float | None:
    value: float | None = registry.get_sample_value("leader_election_master_status", {"name": "jf"})
    return value


def test_status_is_zero_from_construction() -> None:
    registry = CollectorRegistry()
    LeaderElector(make_config(FakeLock("baz"), name="jf"), metrics=PrometheusLeaderMetrics(registry))
    assert status(registry) == 0.0


def test_status_is_one_while_leading() -> None:
    registry = CollectorRegistry()
    seen: list[float | None] = []
    done = threading.Event()

    def on_started(_: threading.Event) -> None:
        seen.append(status(registry))
        done.set()

    stop = threading.Event()
    clock = FakeClock(auto_advance=False)
    lock = FakeLock("baz", FakeLeaseServer())
    elector = LeaderElector(
        make_config(lock, name="jf", on_started_leading=on_started),
        clock=clock,
        metrics=PrometheusLeaderMetrics(registry),
    )
    runner = threading.Thread(target=elector.run, args=(stop,))
    runner.start()
    assert done.wait(5.0)
    stop.set()
    runner.join(5.0)

    assert seen == [1.0]
    # As in client-go, a stop between renewals does not reset the gauge; a failed renewal does.
    assert status(registry) == 1.0


def test_status_drops_to_zero_when_renewal_fails() -> None:
    registry = CollectorRegistry()

    def hook(op: str, n: int) -> None:
        if op == "update" and n >= 2:
            raise ResourceLockError("connection refused")

    lock = FakeLock("baz", FakeLeaseServer(), hook=hook)
    elector = LeaderElector(make_config(lock, name="jf"), clock=FakeClock(), metrics=PrometheusLeaderMetrics(registry))

    elector.run(threading.Event())

    assert status(registry) == 0.0


def test_slow_path_renewals_are_counted() -> None:
    registry = CollectorRegistry()
    stop = threading.Event()

    def hook(op: str, n: int) -> None:
        if op == "update" and n == 1:
            raise LockConflictError("fake conflict")  # first renewal: fast path fails, slow path renews
        if op == "update" and n == 3:
            stop.set()

    lock = FakeLock("baz", FakeLeaseServer(), hook=hook)
    elector = LeaderElector(make_config(lock, name="jf"), clock=FakeClock(), metrics=PrometheusLeaderMetrics(registry))

    elector.run(stop)

    assert lock.ops == ["get", "create", "update", "get", "update", "update"]
    assert registry.get_sample_value("leader_election_slowpath_total", {"name": "jf"}) == 1.0


def test_exposition_names_match_component_base() -> None:
    registry = CollectorRegistry()
    metrics = PrometheusLeaderMetrics(registry)
    metrics.leader_on("jf")
    metrics.slowpath_exercised("jf")
    text = generate_latest(registry).decode()
    assert 'leader_election_master_status{name="jf"} 1.0' in text
    assert 'leader_election_slowpath_total{name="jf"} 1.0' in text
