"""`may_acquire` (ours): a gated candidate keeps reading and timing the record but takes nothing;
once allowed, it takes an expired Lease at once. Renewals are never gated."""

from __future__ import annotations

import dataclasses

from leaderelection_fakes import FakeClock, FakeLeaseServer, FakeLock, make_config

from jobflow_controller.leaderelection import LeaderElectionRecord, LeaderElector


def elector(lock: FakeLock, clock: FakeClock, gate: list[bool]) -> LeaderElector:
    config = dataclasses.replace(make_config(lock, lease_duration=10.0), may_acquire=lambda: gate[0])
    return LeaderElector(config, clock=clock)


def test_a_gated_candidate_creates_no_missing_lease() -> None:
    lock, clock = FakeLock("me"), FakeClock()
    le = elector(lock, clock, [False])
    assert le._try_acquire_or_renew() is False
    assert lock.ops == ["get"]
    assert lock.server.record is None


def test_a_gated_candidate_takes_no_free_lease_but_times_it_and_takes_it_at_once_when_allowed() -> None:
    other = LeaderElectionRecord(holder_identity="other", lease_duration_seconds=10)
    lock, clock = FakeLock("me", FakeLeaseServer(other)), FakeClock()
    gate = [False]
    le = elector(lock, clock, gate)
    assert le._try_acquire_or_renew() is False  # held, and we are not allowed anyway
    clock.step(11.0)
    assert le._try_acquire_or_renew() is False  # expired now, but gated
    assert "update" not in lock.ops
    gate[0] = True
    assert le._try_acquire_or_renew() is True  # no second lease duration to wait
    assert lock.server.record is not None and lock.server.record.holder_identity == "me"


def test_renewals_are_never_gated() -> None:
    lock, clock = FakeLock("me"), FakeClock()
    gate = [True]
    le = elector(lock, clock, gate)
    assert le._try_acquire_or_renew() is True
    gate[0] = False
    clock.step(1.0)
    assert le._try_acquire_or_renew() is True
    assert lock.server.record is not None and lock.server.record.holder_identity == "me"


def test_without_a_gate_a_candidate_behaves_as_client_go() -> None:
    lock, clock = FakeLock("me"), FakeClock()
    le = LeaderElector(make_config(lock), clock=clock)
    assert le._try_acquire_or_renew() is True
