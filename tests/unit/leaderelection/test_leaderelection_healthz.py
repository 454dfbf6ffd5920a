"""client-go's `TestLeaderElectionHealthChecker` and `TestCheckMethodRace`."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest
from leaderelection_fakes import FakeClock, FakeLeaseServer, FakeLock, make_config, seed

from jobflow_controller.leaderelection import (
    HealthzAdaptor,
    LeaderElectionRecord,
    LeaderElectionUnhealthyError,
    LeaderElector,
    new_leader_healthz_adaptor,
    run_or_die,
)

MINUTE = 60.0


def elector_observed(holder: str, *, elapsed: float) -> LeaderElector:
    """An elector named "foo" with a 1-minute lease, identity "healthTest", that observed
    `holder` `elapsed` seconds ago."""
    clock = FakeClock()
    config = make_config(
        FakeLock("healthTest"), lease_duration=MINUTE, renew_deadline=30.0, retry_period=2.0, name="foo"
    )
    elector = LeaderElector(config, clock=clock)
    seed(elector, LeaderElectionRecord(holder_identity=holder), clock.now())
    clock.step(elapsed)
    return elector


def test_check_before_leader_elector_is_set_is_healthy() -> None:
    adaptor = new_leader_healthz_adaptor(20.0)
    adaptor.check()
    assert adaptor.name() == "leaderElection"


def test_check_when_the_lease_is_far_expired_is_unhealthy() -> None:
    adaptor = HealthzAdaptor(20.0)
    adaptor.set_leader_election(elector_observed("healthTest", elapsed=3600.0))
    with pytest.raises(LeaderElectionUnhealthyError) as excinfo:
        adaptor.check()
    assert str(excinfo.value) == "failed election to renew leadership on lease foo"


def test_check_when_the_lease_is_far_expired_but_held_by_another_server_is_healthy() -> None:
    adaptor = HealthzAdaptor(20.0)
    adaptor.set_leader_election(elector_observed("otherServer", elapsed=3600.0))
    adaptor.check()


def test_check_when_the_lease_is_not_expired_is_healthy() -> None:
    adaptor = HealthzAdaptor(20.0)
    adaptor.set_leader_election(elector_observed("healthTest", elapsed=0.0))
    adaptor.check()


def test_check_when_the_lease_is_expired_but_inside_the_timeout_is_healthy() -> None:
    adaptor = HealthzAdaptor(20.0)
    adaptor.set_leader_election(elector_observed("healthTest", elapsed=MINUTE + 1.0))
    adaptor.check()


def test_check_turns_unhealthy_just_past_lease_plus_timeout() -> None:
    adaptor = HealthzAdaptor(20.0)
    adaptor.set_leader_election(elector_observed("healthTest", elapsed=MINUTE + 20.0))
    adaptor.check()  # exactly at the limit: still healthy ("more than")
    adaptor.set_leader_election(elector_observed("healthTest", elapsed=MINUTE + 20.5))
    with pytest.raises(LeaderElectionUnhealthyError):
        adaptor.check()


def test_run_or_die_ties_the_watch_dog() -> None:
    stop = threading.Event()
    stop.set()
    adaptor = HealthzAdaptor(20.0)
    lock = FakeLock("baz", FakeLeaseServer())
    config = dataclasses.replace(make_config(lock), watch_dog=adaptor)
    run_or_die(config, stop, clock=FakeClock())
    assert adaptor._le is not None


def test_check_races_with_a_running_elector() -> None:
    """Check reads the observed record from another thread while the elector writes it."""
    stop = threading.Event()
    lock = FakeLock("baz", FakeLeaseServer())
    elector = LeaderElector(make_config(lock, lease_duration=0.2, renew_deadline=0.1, retry_period=0.005))
    runner = threading.Thread(target=elector.run, args=(stop,))
    runner.start()
    try:
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            elector.check(1.0)
            time.sleep(0.01)
    finally:
        stop.set()
        runner.join(5.0)
    assert not runner.is_alive()
    assert "create" in lock.ops and lock.ops.count("update") > 3
