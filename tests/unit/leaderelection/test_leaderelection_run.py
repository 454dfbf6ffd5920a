"""`LeaderElector.run`: the acquire and renew loops, the callbacks, release on cancel.

Most tests run the elector synchronously on an auto-advancing fake clock: the fake lock's hook
sets the stop event at the moment upstream's test cancels its context, so the sequence of API
calls is exact and nothing sleeps for real.
"""

from __future__ import annotations

import random
import threading

import pytest
from leaderelection_fakes import (
    FakeClock,
    FakeLeaseServer,
    FakeLock,
    Hook,
    NewLeaderRecorder,
    make_config,
)

from jobflow_controller.leaderelection import (
    JITTER_FACTOR,
    LeaderElectionRecord,
    LeaderElector,
    LockConflictError,
    ResourceLockError,
    jitter,
)

CANCELED = ResourceLockError("context canceled")


def stop_at(stop: threading.Event, op: str, n: int) -> Hook:
    """A hook that sets `stop` during the n-th `op` call (which then succeeds)."""

    def hook(call: str, count: int) -> None:
        if call == op and count == n:
            stop.set()

    return hook


class StartedRecorder:
    """Captures the event handed to on_started_leading (which runs on its own thread)."""

    def __init__(self) -> None:
        self.called = threading.Event()
        self.leading: threading.Event | None = None

    def __call__(self, leading: threading.Event) -> None:
        self.leading = leading
        self.called.set()


# -- TestFastPathLeaderElection -----------------------------------------------------------------


def test_fast_path_renews_with_a_single_update() -> None:
    stop = threading.Event()
    lock = FakeLock("baz", FakeLeaseServer())

    def hook(op: str, n: int) -> None:
        if op == "update" and n == 2:
            stop.set()

    lock.hook = hook
    elector = LeaderElector(
        make_config(lock, lease_duration=15.0, renew_deadline=2.0, retry_period=1.0), clock=FakeClock()
    )

    elector.run(stop)

    assert lock.ops == ["get", "create", "update", "update"]


def test_fast_path_failure_falls_back_to_get_and_update() -> None:
    stop = threading.Event()
    lock = FakeLock("baz", FakeLeaseServer())

    def hook(op: str, n: int) -> None:
        if op == "update" and n == 2:
            raise LockConflictError("fake conflict")
        if op == "update" and n == 4:
            stop.set()

    lock.hook = hook
    elector = LeaderElector(
        make_config(lock, lease_duration=15.0, renew_deadline=2.0, retry_period=1.0), clock=FakeClock()
    )

    elector.run(stop)

    assert lock.ops == ["get", "create", "update", "update", "get", "update", "update"]


# -- TestReleaseOnCancellation_Leases -----------------------------------------------------------


def test_release_on_cancellation_during_update() -> None:
    stop = threading.Event()
    lock = FakeLock("baz", FakeLeaseServer())

    def hook(op: str, n: int) -> None:
        if op != "update":
            return
        if n in (1, 3):  # the optimistic renewals fail: each round takes the slow path
            raise CANCELED
        if n == 4:  # the stop arrives while this renewal is in flight, which then fails
            stop.set()
            raise CANCELED

    lock.hook = hook
    elector = LeaderElector(
        make_config(lock, lease_duration=15.0, renew_deadline=2.0, retry_period=1.0, release_on_cancel=True),
        clock=FakeClock(),
    )

    elector.run(stop)

    assert lock.ops == [
        "get",
        "create",
        "update",
        "get",
        "update",
        "update",
        "get",
        "update",
        "get",
        "update",
    ]
    released = lock.server.record
    assert released is not None
    assert released.holder_identity == ""
    assert released.lease_duration_seconds == 1
    assert lock.events == [
        "Normal LeaderElection baz became leader",
        "Normal LeaderElection baz stopped leading",
    ]


def test_release_on_cancellation_during_get() -> None:
    stop = threading.Event()
    lock = FakeLock("baz", FakeLeaseServer())

    def hook(op: str, n: int) -> None:
        if op == "update" and n % 2 == 1 and not stop.is_set():
            raise CANCELED  # always skip the fast path
        if op == "get" and n == 3:
            stop.set()
            raise CANCELED

    lock.hook = hook
    elector = LeaderElector(
        make_config(lock, lease_duration=15.0, renew_deadline=2.0, retry_period=1.0, release_on_cancel=True),
        clock=FakeClock(),
    )

    elector.run(stop)

    assert lock.ops == ["get", "create", "update", "get", "update", "update", "get", "get", "update"]
    assert lock.server.record is not None
    assert lock.server.record.holder_identity == ""
    assert lock.events == [
        "Normal LeaderElection baz became leader",
        "Normal LeaderElection baz stopped leading",
    ]


def test_release_keeps_transitions_and_stamps_now() -> None:
    stop = threading.Event()
    clock = FakeClock()
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="old", leader_transitions=4))
    lock = FakeLock("baz", server, hook=stop_at(stop, "update", 2))
    elector = LeaderElector(make_config(lock, release_on_cancel=True), clock=clock)

    elector.run(stop)

    assert server.record == LeaderElectionRecord(
        holder_identity="",
        lease_duration_seconds=1,
        acquire_time=clock.wall(),
        renew_time=clock.wall(),
        leader_transitions=5,
    )
    assert not elector.is_leader()


def test_no_release_without_release_on_cancel() -> None:
    stop = threading.Event()
    lock = FakeLock("baz", FakeLeaseServer(), hook=stop_at(stop, "update", 1))
    elector = LeaderElector(make_config(lock), clock=FakeClock())

    elector.run(stop)

    assert lock.server.record is not None
    assert lock.server.record.holder_identity == "baz"
    assert lock.ops == ["get", "create", "update"]


# -- the acquire loop ---------------------------------------------------------------------------


def test_acquire_retries_with_jitter_until_the_lease_expires() -> None:
    stop = threading.Event()
    clock = FakeClock()
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=15))
    lock = FakeLock("baz", server, hook=stop_at(stop, "update", 1))
    elector = LeaderElector(
        make_config(lock, lease_duration=15.0, renew_deadline=10.0, retry_period=2.0),
        clock=clock,
        rng=random.Random(7),
    )
    start = clock.now()

    elector.run(stop)

    acquire_sleeps = clock.sleeps  # the stop lands in the takeover, so the renew loop never sleeps
    assert acquire_sleeps, "should have waited for bing's lease"
    assert all(2.0 <= s < 2.0 * (1 + JITTER_FACTOR) for s in acquire_sleeps)
    assert sum(acquire_sleeps) >= 15.0
    assert sum(acquire_sleeps[:-1]) < 15.0  # took over on the first try after expiry
    assert server.record is not None
    assert server.record.holder_identity == "baz"
    assert server.record.leader_transitions == 1
    assert clock.now() - start == pytest.approx(sum(clock.sleeps))


def test_never_acquires_a_lease_that_keeps_being_renewed() -> None:
    stop = threading.Event()
    clock = FakeClock()
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=15))
    started = threading.Event()

    def hook(op: str, n: int) -> None:
        # bing renews before each of our reads
        server.write(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=15, leader_transitions=n))
        if n == 50:
            stop.set()

    lock = FakeLock("baz", server, hook=hook)
    stopped = threading.Event()
    elector = LeaderElector(
        make_config(lock, on_started_leading=lambda _: started.set(), on_stopped_leading=stopped.set),
        clock=clock,
    )

    elector.run(stop)

    assert set(lock.ops) == {"get"}
    assert not started.is_set()
    assert stopped.is_set()  # always called, even without leadership
    assert clock.now() - 1000.0 >= 49.0  # 49 jittered waits of at least retry_period
    assert lock.events == []


def test_run_with_stop_already_set_makes_no_api_call() -> None:
    stop = threading.Event()
    stop.set()
    stopped = threading.Event()
    lock = FakeLock("baz", FakeLeaseServer())
    elector = LeaderElector(make_config(lock, on_stopped_leading=stopped.set), clock=FakeClock())

    elector.run(stop)

    assert lock.ops == []
    assert stopped.is_set()


def test_jitter_stays_within_factor() -> None:
    rng = random.Random(1)
    values = [jitter(2.0, JITTER_FACTOR, rng) for _ in range(1000)]
    assert min(values) >= 2.0
    assert max(values) < 4.4
    assert jitter(2.0, 0.0, random.Random(3)) < 4.0  # non-positive factor means 1.0


# -- the renew loop -----------------------------------------------------------------------------


def test_renew_retries_every_retry_period_until_the_deadline_then_stops_leading() -> None:
    stop = threading.Event()
    clock = FakeClock()
    broken = threading.Event()

    def hook(op: str, n: int) -> None:
        if op == "update" and n == 2:
            broken.set()  # the API server becomes unreachable after the first renewal
        if broken.is_set():
            raise ResourceLockError("connection refused")

    lock = FakeLock("baz", FakeLeaseServer(), hook=hook)
    started = StartedRecorder()
    stopped = threading.Event()
    elector = LeaderElector(
        make_config(
            lock,
            lease_duration=15.0,
            renew_deadline=10.0,
            retry_period=2.0,
            on_started_leading=started,
            on_stopped_leading=stopped.set,
        ),
        clock=clock,
    )

    elector.run(stop)

    assert not stop.is_set()  # run returned on its own: leadership lost
    assert stopped.is_set()
    # Round 1 renewed at once; round 2 tried at 0, 2, 4, 6, 8 s and gave up at 10 s.
    assert clock.sleeps == [2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    assert lock.ops[:3] == ["get", "create", "update"]
    assert lock.ops[3:] == ["update", "get"] * 5  # each try: optimistic update, then a read
    # As in client-go, the observed record still names us; the caller must exit.
    assert elector.is_leader()
    assert started.called.wait(5.0)
    assert started.leading is not None and started.leading.is_set()
    assert lock.events == [
        "Normal LeaderElection baz became leader",
        "Normal LeaderElection baz stopped leading",
    ]


def test_leader_that_sees_a_takeover_loses_leadership() -> None:
    stop = threading.Event()
    clock = FakeClock()
    server = FakeLeaseServer()
    reported = NewLeaderRecorder()

    def hook(op: str, n: int) -> None:
        if op == "update" and n == 2:
            # bing took over (say our renewals had been stuck) just before this renewal
            server.write(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=15))

    lock = FakeLock("baz", server, hook=hook)
    elector = LeaderElector(
        make_config(lock, lease_duration=15.0, renew_deadline=10.0, retry_period=2.0, on_new_leader=reported),
        clock=clock,
    )

    elector.run(stop)

    assert elector.get_leader() == "bing"
    assert not elector.is_leader()
    assert reported.wait_for(2) == ["baz", "bing"]
    assert server.record is not None and server.record.holder_identity == "bing"


def test_stop_while_leading_sets_the_leading_event_and_calls_stopped() -> None:
    stop = threading.Event()
    clock = FakeClock(auto_advance=False)
    lock = FakeLock("baz", FakeLeaseServer())
    leading_events: list[threading.Event] = []
    started = threading.Event()
    order: list[str] = []

    def on_started(leading: threading.Event) -> None:
        leading_events.append(leading)
        order.append(f"started:{threading.current_thread().name}")
        started.set()

    elector = LeaderElector(
        make_config(lock, on_started_leading=on_started, on_stopped_leading=lambda: order.append("stopped")),
        clock=clock,
    )
    runner = threading.Thread(target=elector.run, args=(stop,))
    runner.start()
    assert started.wait(5.0)
    assert elector.is_leader()
    assert not leading_events[0].is_set()

    stop.set()
    runner.join(5.0)

    assert not runner.is_alive()
    assert leading_events[0].is_set()
    assert order == ["started:leader-elector-started-leading", "stopped"]
    assert lock.events[-1] == "Normal LeaderElection baz stopped leading"


def test_on_new_leader_fires_once_per_observed_holder_change() -> None:
    stop = threading.Event()
    clock = FakeClock()
    server = FakeLeaseServer(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=10))
    reported = NewLeaderRecorder()
    lock = FakeLock("baz", server, hook=stop_at(stop, "update", 3))
    elector = LeaderElector(make_config(lock, on_new_leader=reported), clock=clock)

    elector.run(stop)

    # bing while we waited (many retries, one report), then ourselves.
    assert reported.wait_for(2) == ["bing", "baz"]
    assert lock.ops.count("get") > 2
