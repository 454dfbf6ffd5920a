"""The manager's wiring with and without --shards: the default builds today's controllers and
nothing of sharding; --shards builds per-shard units whose informers see only their shard."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from jobflow_controller.kube.config import ConfigError
from jobflow_controller.manager.options import Options
from jobflow_controller.manager.server import Manager
from jobflow_controller.manager.shards import ShardUnit
from jobflow_controller.sharding import shard_for_namespace
from jobflow_controller.sharding.fanout import LocalListerWatcher

KUBECONFIG = """apiVersion: v1
kind: Config
current-context: c
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
"""


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


@pytest.fixture
def kubeconfig(tmp_path: Path) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    return str(path)


@pytest.fixture
def managers() -> Iterator[list[Manager]]:
    made: list[Manager] = []
    yield made
    for manager in made:
        manager.broadcaster.shutdown(timeout=1.0)
        manager.rest.close()
        manager.event_rest.close()


def _namespace_of(shard: int, shards: int = 3) -> str:
    return next(f"ns-{i}" for i in range(1000) if shard_for_namespace(f"ns-{i}", shards) == shard)


NS_OF_SHARD_0, NS_OF_SHARD_2 = _namespace_of(0), _namespace_of(2)


def build(managers: list[Manager], **options: object) -> Manager:
    manager = Manager(Options(**options))  # type: ignore[arg-type]
    managers.append(manager)
    return manager


def test_without_shards_the_manager_builds_the_controllers_and_nothing_of_sharding(
    kubeconfig: str, managers: list[Manager]
) -> None:
    manager = build(managers, kubeconfig=kubeconfig)
    assert sorted(c.name for c in manager.controllers) == [
        "cronjobflow-controller",
        "jobflow-controller",
        "jobflowtrigger-controller",
        "jobtemplate-controller",
    ]
    assert manager.shard_units is None and manager.watchdog is not None
    assert b"jobflow_controller_shards_held" not in generate_latest(manager.registry)


def test_with_shards_the_process_wide_controllers_are_replaced_by_units_made_per_held_shard(
    kubeconfig: str, managers: list[Manager]
) -> None:
    manager = build(managers, kubeconfig=kubeconfig, shards=3, shard_index=1)
    assert manager.controllers == []
    assert manager.preferred_shard == 1
    assert b"jobflow_controller_shards_held 0.0" in generate_latest(manager.registry)
    assert manager._caches_synced() is None  # holding no shard, the replica is Ready


def test_a_units_informers_are_fed_from_the_replicas_shared_informers_through_its_shards_filter(
    kubeconfig: str, managers: list[Manager]
) -> None:
    manager = build(managers, kubeconfig=kubeconfig, shards=3, shard_index=1)
    unit: ShardUnit = manager._new_unit(2)
    other: ShardUnit = manager._new_unit(0)
    try:
        assert manager.shard_sources is not None
        hubs = manager.shard_sources.hubs()
        for resource in (unit.factory.job_flows(), unit.factory.job_templates(), unit.factory.jobs()):
            lister_watcher = resource.informer()._lw
            assert isinstance(lister_watcher, LocalListerWatcher)
            assert lister_watcher.owns({"metadata": {"namespace": NS_OF_SHARD_2}})
            assert not lister_watcher.owns({"metadata": {"namespace": NS_OF_SHARD_0}})
        # One source informer per resource for the replica, whatever the units.
        other_lw = other.factory.jobs().informer()._lw
        assert isinstance(other_lw, LocalListerWatcher)
        assert other_lw.hubs == unit.factory.jobs().informer()._lw.hubs
        assert len(manager.shard_sources.hubs()) == len(hubs)
        assert sorted(c.name for c in unit.controllers) == [
            "cronjobflow-controller",
            "jobflow-controller",
            "jobflowtrigger-controller",
            "jobtemplate-controller",
        ]
    finally:
        unit.rest.close()
        other.rest.close()


def test_a_units_client_shares_the_process_budget_and_is_cancelled_by_the_units_hard_stop(
    kubeconfig: str, managers: list[Manager]
) -> None:
    manager = build(managers, kubeconfig=kubeconfig, shards=3)
    unit: ShardUnit = manager._new_unit(0)
    try:
        assert unit.rest.limiter is manager.rest.limiter
        assert unit.rest.cancel is unit.hard_stop
        assert unit.rest.cancel is not manager.hard_stop
    finally:
        unit.rest.close()


def test_units_share_one_set_of_jobflow_counters(kubeconfig: str, managers: list[Manager]) -> None:
    manager = build(managers, kubeconfig=kubeconfig, shards=3)
    first, second = manager._new_unit(0), manager._new_unit(1)
    try:
        assert first.controllers[0].metrics is second.controllers[0].metrics  # type: ignore[union-attr]
    finally:
        first.rest.close()
        second.rest.close()


def test_a_fixed_shard_without_leader_election_needs_an_index(
    kubeconfig: str, managers: list[Manager], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POD_NAME", "laptop")
    with pytest.raises(ConfigError, match="--shard-index"):
        build(managers, kubeconfig=kubeconfig, shards=3, leader_elect=False)


def test_losing_a_shard_stops_its_unit_hard_and_leaves_the_process_running(
    kubeconfig: str, managers: list[Manager]
) -> None:
    # No API server answers: the unit's informers are still listing when the Lease is lost.
    manager = build(managers, kubeconfig=kubeconfig, shards=3, shard_index=0)
    assert manager.shard_units is not None
    stop, lost = threading.Event(), threading.Event()
    runner = threading.Thread(target=manager._run_shard, args=(0, stop, lost), daemon=True)
    runner.start()
    wait_until(lambda: manager.shard_units is not None and manager.shard_units.held() == [0])
    unit = manager.shard_units.get(0)
    assert unit is not None and not unit.hard_stop.is_set()
    lost.set()
    runner.join(10.0)
    assert not runner.is_alive()
    assert unit.hard_stop.is_set()  # its client refuses every further request
    assert manager.shard_units.held() == []
    assert not manager.stop.is_set() and not manager.hard_stop.is_set()


def test_a_drained_unit_also_ends_with_its_client_cancelled(kubeconfig: str, managers: list[Manager]) -> None:
    manager = build(managers, kubeconfig=kubeconfig, shards=3, shard_index=0, graceful_shutdown_timeout=1.0)
    stop, lost = threading.Event(), threading.Event()
    runner = threading.Thread(target=manager._run_shard, args=(0, stop, lost), daemon=True)
    runner.start()
    wait_until(lambda: manager.shard_units is not None and manager.shard_units.held() == [0])
    assert manager.shard_units is not None
    unit = manager.shard_units.get(0)
    assert unit is not None
    stop.set()
    runner.join(15.0)
    assert not runner.is_alive()
    assert unit.hard_stop.is_set()


def test_a_fixed_shard_is_not_ready_before_its_unit_runs(kubeconfig: str, managers: list[Manager]) -> None:
    """--leader-elect=false --shards=3 --shard-index=1: that shard is the replica's whole job."""
    manager = build(managers, kubeconfig=kubeconfig, shards=3, shard_index=1, leader_elect=False)
    assert manager._caches_synced() == "shard 1 has not started yet"
