"""client-go's `TestReleaseLeaseLeases`, `TestReleaseMethodCallsGet` and
`TestReleaseRetriesOnConflict`, plus the cases where release must not write."""

from __future__ import annotations

from leaderelection_fakes import FakeClock, FakeLeaseServer, FakeLock, NewLeaderRecorder, make_config, seed

from jobflow_controller.leaderelection import LeaderElectionRecord, LeaderElector, LockConflictError


def test_release_acquired_lock() -> None:
    clock = FakeClock()
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="baz"))
    lock = FakeLock("baz", server)
    reported = NewLeaderRecorder()
    elector = LeaderElector(make_config(lock, on_new_leader=reported), clock=clock)

    assert elector._try_acquire_or_renew()
    elector._maybe_report_transition()
    assert reported.wait_for(1) == ["baz"]

    assert elector._release()

    observed = elector._get_observed_record()
    assert observed.holder_identity == ""
    assert observed.leader_transitions == 0
    assert lock.ops == ["get", "update", "get", "update"]
    assert server.record == LeaderElectionRecord(
        holder_identity="",
        lease_duration_seconds=1,
        acquire_time=clock.wall(),
        renew_time=clock.wall(),
        leader_transitions=0,
    )
    elector._maybe_report_transition()
    assert reported.wait_for(2) == ["baz", ""]
    assert lock.events == []


def test_release_method_calls_get() -> None:
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="baz", lease_duration_seconds=10))
    lock = FakeLock("baz", server)
    clock = FakeClock()
    elector = LeaderElector(make_config(lock), clock=clock)
    seed(elector, LeaderElectionRecord(holder_identity="baz"), clock.now())

    elector._release()

    assert lock.ops[0] == "get"


def test_release_retries_on_conflict() -> None:
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="baz", lease_duration_seconds=10))
    conflicted: list[bool] = []

    def hook(op: str, n: int) -> None:
        if op == "update" and not conflicted:
            conflicted.append(True)
            raise LockConflictError('leases.coordination.k8s.io "bar": the object has been modified')

    lock = FakeLock("baz", server, hook=hook)
    clock = FakeClock()
    elector = LeaderElector(make_config(lock), clock=clock)
    seed(elector, LeaderElectionRecord(holder_identity="baz"), clock.now())

    assert elector._release()

    assert conflicted == [True]
    assert lock.ops == ["get", "update", "get", "update"]
    assert server.record is not None and server.record.holder_identity == ""


def test_release_gives_up_when_conflicts_outlast_the_renew_deadline() -> None:
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="baz", lease_duration_seconds=10))
    clock = FakeClock()

    def hook(op: str, n: int) -> None:
        if op == "update":
            clock.step(1.0)
            raise LockConflictError("the object has been modified")

    lock = FakeLock("baz", server, hook=hook)
    elector = LeaderElector(make_config(lock, renew_deadline=5.0), clock=clock)
    seed(elector, LeaderElectionRecord(holder_identity="baz"), clock.now())

    assert not elector._release()
    assert lock.ops.count("update") == 5


def test_release_is_a_no_op_when_another_candidate_leads() -> None:
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=10))
    lock = FakeLock("baz", server)
    clock = FakeClock()
    elector = LeaderElector(make_config(lock), clock=clock)
    seed(elector, LeaderElectionRecord(holder_identity="bing"), clock.now())

    assert elector._release()

    assert lock.ops == ["get"]
    assert server.record is not None and server.record.holder_identity == "bing"


def test_release_fails_when_the_lock_is_gone() -> None:
    lock = FakeLock("baz", FakeLeaseServer())
    clock = FakeClock()
    elector = LeaderElector(make_config(lock), clock=clock)
    seed(elector, LeaderElectionRecord(holder_identity="baz"), clock.now())

    assert not elector._release()
    assert lock.ops == ["get"]
