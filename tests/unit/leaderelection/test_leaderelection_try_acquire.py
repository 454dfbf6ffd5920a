"""client-go's `testTryAcquireOrRenew` table, plus transition counting across candidates.

Each case seeds what the elector last observed, puts a record on the fake server, makes one
attempt (two, after a 3 s step, for the short lease) and checks the outcome, the holder, the API
calls made, the transition count and the leader reported to `on_new_leader`. The elector's
identity is "baz" and the lease duration 10 s, as upstream.
"""

from __future__ import annotations

import dataclasses
import datetime
import math

import pytest
from leaderelection_fakes import FakeClock, FakeLeaseServer, FakeLock, NewLeaderRecorder, make_config, seed

from jobflow_controller.leaderelection import LeaderElectionRecord, LeaderElector

HOUR = 3600.0


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    server_record: LeaderElectionRecord | None
    expected_ops: tuple[str, ...]
    expect_success: bool
    out_holder: str
    transition_leader: bool = False
    observed_record: LeaderElectionRecord = dataclasses.field(default_factory=LeaderElectionRecord)
    # Relative to the clock's now; -inf is Go's zero time.
    observed_offset: float = -math.inf
    retry_after: float = 0.0


CASES = [
    Case(
        name="acquire from no object",
        server_record=None,
        expected_ops=("get", "create"),
        expect_success=True,
        out_holder="baz",
    ),
    Case(
        # A Lease whose spec is empty reads as the zero record.
        name="acquire from object without annotations",
        server_record=LeaderElectionRecord(),
        expected_ops=("get", "update"),
        expect_success=True,
        transition_leader=True,
        out_holder="baz",
    ),
    Case(
        name="acquire from led object with the lease duration seconds",
        server_record=LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=3),
        expected_ops=("get", "get", "update"),
        expect_success=True,
        transition_leader=True,
        out_holder="baz",
        retry_after=3.0,
    ),
    Case(
        name="acquire from unled object",
        server_record=LeaderElectionRecord(holder_identity=""),
        expected_ops=("get", "update"),
        expect_success=True,
        transition_leader=True,
        out_holder="baz",
    ),
    Case(
        name="acquire from led, unacked object",
        server_record=LeaderElectionRecord(holder_identity="bing"),
        observed_record=LeaderElectionRecord(holder_identity="bing"),
        observed_offset=-1000 * HOUR,
        expected_ops=("get", "update"),
        expect_success=True,
        transition_leader=True,
        out_holder="baz",
    ),
    Case(
        name="acquire from empty led, acked object",
        server_record=LeaderElectionRecord(holder_identity=""),
        observed_offset=1000 * HOUR,
        expected_ops=("get", "update"),
        expect_success=True,
        transition_leader=True,
        out_holder="baz",
    ),
    Case(
        # Upstream's record has no leaseDurationSeconds and relies on the real clock ticking
        # between two Now() calls to make the just-observed lease "valid"; the fake clock does
        # not tick, so the record carries the 10 s a real holder would write.
        name="don't acquire from led, acked object",
        server_record=LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=10),
        observed_offset=1000 * HOUR,
        expected_ops=("get",),
        expect_success=False,
        out_holder="bing",
    ),
    Case(
        # The fast path is tried first but the lock has no resourceVersion yet (no get/create),
        # so it fails without an API call and the slow path renews.
        name="renew already acquired object",
        server_record=LeaderElectionRecord(holder_identity="baz"),
        observed_record=LeaderElectionRecord(holder_identity="baz"),
        observed_offset=1000 * HOUR,
        expected_ops=("get", "update"),
        expect_success=True,
        out_holder="baz",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_try_acquire_or_renew(case: Case) -> None:
    clock = FakeClock()
    lock = FakeLock("baz", FakeLeaseServer(case.server_record))
    reported = NewLeaderRecorder()
    elector = LeaderElector(make_config(lock, lease_duration=10.0, on_new_leader=reported), clock=clock)
    seed(elector, case.observed_record, clock.now() + case.observed_offset)

    succeeded = elector._try_acquire_or_renew()
    if succeeded != case.expect_success and case.retry_after:
        clock.step(case.retry_after)
        succeeded = elector._try_acquire_or_renew()

    assert succeeded == case.expect_success
    observed = elector._get_observed_record()
    assert observed.holder_identity == case.out_holder
    assert tuple(lock.ops) == case.expected_ops
    assert observed.leader_transitions == (1 if case.transition_leader else 0)
    elector._maybe_report_transition()
    assert reported.wait_for(1) == [case.out_holder]
    assert lock.events == []


def test_acquired_record_carries_identity_duration_and_times() -> None:
    clock = FakeClock()
    lock = FakeLock("baz", FakeLeaseServer())
    elector = LeaderElector(make_config(lock, lease_duration=15.0, renew_deadline=10.0), clock=clock)

    assert elector._try_acquire_or_renew()

    stored = lock.server.record
    assert stored == LeaderElectionRecord(
        holder_identity="baz",
        lease_duration_seconds=15,
        acquire_time=clock.wall(),
        renew_time=clock.wall(),
        leader_transitions=0,
    )


def test_renewal_keeps_acquire_time_and_advances_renew_time() -> None:
    clock = FakeClock()
    lock = FakeLock("baz", FakeLeaseServer())
    elector = LeaderElector(make_config(lock), clock=clock)
    assert elector._try_acquire_or_renew()
    acquired_at = clock.wall()

    clock.step(2.0)
    assert elector._try_acquire_or_renew()

    stored = lock.server.record
    assert stored is not None
    assert stored.acquire_time == acquired_at
    assert stored.renew_time == clock.wall()
    assert stored.leader_transitions == 0
    assert lock.ops == ["get", "create", "update"]  # the renewal took the fast path


def test_fresh_change_restarts_the_expiry_clock() -> None:
    """Expiry is judged from when *we* saw the record change, not from its renewTime."""
    clock = FakeClock()
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=10))
    lock = FakeLock("baz", server)
    elector = LeaderElector(make_config(lock), clock=clock)

    assert not elector._try_acquire_or_renew()
    clock.step(9.0)
    # bing renews, with a renewTime far in the past: only the change matters.
    server.write(
        LeaderElectionRecord(
            holder_identity="bing",
            lease_duration_seconds=10,
            renew_time=clock.wall() - datetime.timedelta(hours=1000),
        )
    )
    assert not elector._try_acquire_or_renew()
    clock.step(9.0)
    assert not elector._try_acquire_or_renew()  # 9 s since the last change: still valid
    clock.step(1.0)
    assert elector._try_acquire_or_renew()  # 10 s without change: expired
    assert elector.get_leader() == "baz"


def test_leader_transitions_count_each_takeover_but_not_the_create() -> None:
    clock = FakeClock()
    server = FakeLeaseServer()
    a = LeaderElector(make_config(FakeLock("a", server), lease_duration=10.0), clock=clock)
    b = LeaderElector(make_config(FakeLock("b", server), lease_duration=10.0), clock=clock)

    assert a._try_acquire_or_renew()  # creates: transitions stay 0
    assert not b._try_acquire_or_renew()  # b first sees a's record now
    assert server.record is not None and server.record.leader_transitions == 0

    clock.step(10.0)  # a stopped renewing; b has seen no change for a full lease
    assert b._try_acquire_or_renew()
    assert server.record.holder_identity == "b"
    assert server.record.leader_transitions == 1

    # a's optimistic renewal conflicts; its re-read shows b holding a valid lease.
    assert not a._try_acquire_or_renew()
    assert not a.is_leader()
    assert a.get_leader() == "b"

    clock.step(10.0)
    assert a._try_acquire_or_renew()  # reacquire after b's lease lapsed
    assert server.record.holder_identity == "a"
    assert server.record.leader_transitions == 2


def test_released_lease_is_taken_at_once_and_counts_a_transition() -> None:
    clock = FakeClock()
    server = FakeLeaseServer()
    a = LeaderElector(make_config(FakeLock("a", server)), clock=clock)
    b = LeaderElector(make_config(FakeLock("b", server)), clock=clock)
    assert a._try_acquire_or_renew()
    assert not b._try_acquire_or_renew()

    assert a._release()
    assert b._try_acquire_or_renew()  # empty holder: no need to wait out the lease

    assert server.record is not None
    assert server.record.holder_identity == "b"
    assert server.record.leader_transitions == 1


def test_reacquiring_own_released_lease_counts_a_transition() -> None:
    clock = FakeClock()
    server = FakeLeaseServer()
    a = LeaderElector(make_config(FakeLock("a", server)), clock=clock)
    assert a._try_acquire_or_renew()
    assert a._release()

    assert a._try_acquire_or_renew()

    assert server.record is not None
    assert server.record.holder_identity == "a"
    assert server.record.leader_transitions == 1
