"""Fakes for the leader-election tests: a clock and an in-memory lock with resourceVersions.

They stand in for client-go's `testingclock.FakeClock` and the fake clientset with reactors. The
lock keeps a server-side object and the resourceVersion it last observed, so a write by another
candidate in between makes `update` raise a 409 exactly as the API server would.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable

from jobflow_controller.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LockConflictError,
    LockNotFoundError,
    LockNotInitializedError,
    ResourceLock,
    ResourceLockError,
)

T0_WALL = datetime.datetime(2026, 12, 2, 9, 30, 24, 123456, tzinfo=datetime.UTC)


class FakeClock:
    """Monotonic seconds plus a matching wall clock, both moved only by the test.

    With `auto_advance` (the default) `sleep` advances time by the requested amount and returns at
    once, so `LeaderElector.run` can be driven synchronously and deterministically; every sleep
    is recorded in `sleeps`. Without it, `sleep` blocks until `step` moves time far enough or the
    stop event is set (polled every millisecond), for tests that run the elector on a thread.
    """

    def __init__(self, *, auto_advance: bool = True, start: float = 1000.0) -> None:
        self._start = start
        self._now = start
        self._auto_advance = auto_advance
        self._cond = threading.Condition()
        self._waiters = 0
        self.sleeps: list[float] = []

    def now(self) -> float:
        with self._cond:
            return self._now

    def wall(self) -> datetime.datetime:
        with self._cond:
            return T0_WALL + datetime.timedelta(seconds=self._now - self._start)

    def step(self, seconds: float) -> None:
        with self._cond:
            self._now += seconds
            self._cond.notify_all()

    def has_waiters(self) -> bool:
        with self._cond:
            return self._waiters > 0

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        self.sleeps.append(seconds)
        if stop is not None and stop.is_set():
            return True
        if self._auto_advance:
            self.step(seconds)
            return stop is not None and stop.is_set()
        with self._cond:
            target = self._now + seconds
            self._waiters += 1
            try:
                while self._now < target:
                    if stop is not None and stop.is_set():
                        return True
                    self._cond.wait(0.001)
            finally:
                self._waiters -= 1
        return stop is not None and stop.is_set()


class FakeLeaseServer:
    """The API server's copy of the lock object: a record (or nothing) and a resourceVersion."""

    def __init__(self, record: LeaderElectionRecord | None = None) -> None:
        self.record = record
        self.resource_version = 1 if record is not None else 0

    def write(self, record: LeaderElectionRecord) -> None:
        """Another client writes the object (bumping the resourceVersion)."""
        self.record = record
        self.resource_version += 1


Hook = Callable[[str, int], None]


class FakeLock:
    """An in-memory `ResourceLock` over a `FakeLeaseServer`.

    `ops` lists the API calls made ("get", "create", "update"), like the fake clientset's
    actions. `hook(op, n)` runs before the n-th call of that op (1-based) and may raise to fail
    it or set a stop event. As with client-go's LeaseLock, `update` before any get/create fails
    without an API call.
    """

    def __init__(
        self,
        identity: str = "baz",
        server: FakeLeaseServer | None = None,
        *,
        hook: Hook | None = None,
    ) -> None:
        self._identity = identity
        self.server = server if server is not None else FakeLeaseServer()
        self.hook = hook
        self.ops: list[str] = []
        self.events: list[str] = []
        self._counts: dict[str, int] = {}
        self._observed_rv: int | None = None

    def _call(self, op: str) -> None:
        self.ops.append(op)
        n = self._counts.get(op, 0) + 1
        self._counts[op] = n
        if self.hook is not None:
            self.hook(op, n)

    def get(self) -> tuple[LeaderElectionRecord, bytes]:
        self._call("get")
        record = self.server.record
        if record is None:
            raise LockNotFoundError('leases.coordination.k8s.io "bar" not found')
        self._observed_rv = self.server.resource_version
        return record, record.raw()

    def create(self, record: LeaderElectionRecord) -> None:
        self._call("create")
        if self.server.record is not None:
            raise ResourceLockError(
                'leases.coordination.k8s.io "bar" already exists', status=409, reason="AlreadyExists"
            )
        self.server.write(record)
        self._observed_rv = self.server.resource_version

    def update(self, record: LeaderElectionRecord) -> None:
        if self._observed_rv is None:
            raise LockNotInitializedError()
        self._call("update")
        if self.server.record is None:
            raise LockNotFoundError('leases.coordination.k8s.io "bar" not found')
        if self._observed_rv != self.server.resource_version:
            raise LockConflictError(
                'Operation cannot be fulfilled on leases.coordination.k8s.io "bar": '
                "the object has been modified; please apply your changes to the latest version and try again"
            )
        self.server.write(record)
        self._observed_rv = self.server.resource_version

    def record_event(self, message: str) -> None:
        self.events.append(f"Normal LeaderElection {self._identity} {message}")

    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return "foo/bar"


class NewLeaderRecorder:
    """Collects `on_new_leader` calls, which arrive on their own threads."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.leaders: list[str] = []

    def __call__(self, identity: str) -> None:
        with self._cond:
            self.leaders.append(identity)
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 5.0) -> list[str]:
        with self._cond:
            self._cond.wait_for(lambda: len(self.leaders) >= count, timeout)
            return list(self.leaders)


def noop_started(leading: threading.Event) -> None:
    pass


def noop_stopped() -> None:
    pass


def make_config(
    lock: ResourceLock,
    *,
    lease_duration: float = 10.0,
    renew_deadline: float = 5.0,
    retry_period: float = 1.0,
    on_started_leading: Callable[[threading.Event], None] = noop_started,
    on_stopped_leading: Callable[[], None] = noop_stopped,
    on_new_leader: Callable[[str], None] | None = None,
    release_on_cancel: bool = False,
    name: str = "",
) -> LeaderElectionConfig:
    return LeaderElectionConfig(
        lock=lock,
        callbacks=LeaderCallbacks(
            on_started_leading=on_started_leading,
            on_stopped_leading=on_stopped_leading,
            on_new_leader=on_new_leader,
        ),
        lease_duration=lease_duration,
        renew_deadline=renew_deadline,
        retry_period=retry_period,
        release_on_cancel=release_on_cancel,
        name=name,
    )


def seed(elector: LeaderElector, record: LeaderElectionRecord, observed_time: float) -> None:
    """Pre-set what the elector last observed, as client-go's tests build the struct directly."""
    elector._observed_record = record
    elector._observed_raw_record = record.raw()
    elector._observed_time = observed_time
