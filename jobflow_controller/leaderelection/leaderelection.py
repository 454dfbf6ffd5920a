"""The leader elector (client-go `tools/leaderelection/leaderelection.go`).

Candidates race to write their identity into a lock record (a Lease). The leader rewrites it
every `retry_period`; the others watch for the record to *change*. A candidate may take over only
when it has seen no change for the record's `leaseDurationSeconds`, measured on its own clock
from the moment it last saw a change. The remote timestamps come from another machine's clock
and are never compared, so the scheme tolerates clock skew (but not skew *rate*: keep
`lease_duration` / `renew_deadline` at least the ratio of the fastest to the slowest clock).
This does not fence: during a lost renewal a deposed leader may act for up to `renew_deadline`
before it notices, which is why the manager exits when leadership is lost.

Threads stand in for goroutines: `run` blocks the calling thread; `on_started_leading` and
`on_new_leader` run on their own daemon threads, as client-go runs them in goroutines. The
`threading.Event` passed to `run` is the context; the event given to `on_started_leading` is the
derived "leading" context, set when leadership ends or `run`'s event is set.
"""

from __future__ import annotations

import datetime
import math
import random
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Protocol, TypeVar

import structlog

from workqueue import RealClock as WorkqueueRealClock

from .healthz import HealthzAdaptor, LeaderElectionUnhealthyError
from .metrics import LeaderMetrics, NoopLeaderMetrics
from .resourcelock import LeaderElectionRecord, ResourceLock, is_conflict, is_not_found

__all__ = [
    "DEFAULT_LEASE_DURATION",
    "DEFAULT_RENEW_DEADLINE",
    "DEFAULT_RETRY_PERIOD",
    "JITTER_FACTOR",
    "Clock",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "LeaderElector",
    "RealClock",
    "default_identity",
    "jitter",
    "run_or_die",
]

logger = structlog.get_logger(__name__)

_T = TypeVar("_T")

#: client-go's `JitterFactor`: acquire retries wait `retry_period * [1, 2.2)`.
JITTER_FACTOR = 1.2

# component-base's RecommendedDefaultLeaderElectionConfiguration, used by kube-controller-manager
# and vc-controller-manager. client-go itself has no defaults.
DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0

# What Go's context errors say when the poll stops; kept for log parity with klog's output.
_CONTEXT_CANCELED = "context canceled"
_DEADLINE_EXCEEDED = "context deadline exceeded"


class Clock(Protocol):
    """The time source the elector needs; the workqueue's RealClock/FakeClock satisfy it.

    `now` is monotonic seconds (lease expiry is judged on it), `wall` is the aware-UTC time written
    into the record, and `sleep` returns True as soon as `stop` is set (False when the time ran out).
    """

    def now(self) -> float: ...

    def wall(self) -> datetime.datetime: ...

    def sleep(self, seconds: float, stop: threading.Event | None = None, /) -> bool: ...


# The project's one real clock satisfies `Clock`; re-exported so callers need not know where it lives.
RealClock = WorkqueueRealClock


def jitter(duration: float, max_factor: float, rng: random.Random | None = None) -> float:
    """`wait.Jitter`: a duration in [duration, duration * (1 + max_factor)); factor <= 0 means 1."""
    if max_factor <= 0.0:
        max_factor = 1.0
    r = rng.random() if rng is not None else random.random()
    return duration + r * max_factor * duration


def default_identity() -> str:
    """`<hostname>_<uuid>`, as controller managers build it: the hostname tells operators which
    pod leads, the uuid keeps two processes on one host (or a restarted pod) apart."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True, slots=True)
class LeaderCallbacks:
    """client-go's `LeaderCallbacks`.

    `on_started_leading(leading)` runs on its own thread once the lease is acquired; `leading` is
    set when leadership ends. `on_stopped_leading()` runs on `run`'s thread when `run` returns,
    **always**, even if leadership was never acquired, so do not assume it follows a start.
    `on_new_leader(identity)` runs on its own thread whenever the observed holder changes,
    including the first observation, ourselves, and "" after a release.
    """

    on_started_leading: Callable[[threading.Event], None] | None = None
    on_stopped_leading: Callable[[], None] | None = None
    on_new_leader: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """client-go's `LeaderElectionConfig`; durations are seconds.

    `lease_duration`: how long a candidate waits, from the last *observed change* of the record,
    before it may take over. `renew_deadline`: how long the leader keeps retrying a renewal before
    it gives up leadership. `retry_period`: the interval between attempts. They must satisfy
    lease_duration > renew_deadline > JITTER_FACTOR * retry_period > 0.

    `release_on_cancel`: on stop, clear the holder so a successor need not wait out the lease. Set
    it only if everything guarded by the lease has finished before the stop event is set;
    otherwise two processes may act at once. `name` labels the metrics and the health error.
    `watch_dog` is tied to the elector by `run_or_die`, as in client-go.
    """

    lock: ResourceLock
    callbacks: LeaderCallbacks
    lease_duration: float = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD
    watch_dog: HealthzAdaptor | None = None
    release_on_cancel: bool = False
    name: str = ""


def _nanos(seconds: float) -> int:
    """A duration as Go's integer nanoseconds, so validation compares exactly as Go's does."""
    return math.floor(seconds * 1e9 + 0.5)


def _validate(config: LeaderElectionConfig) -> None:
    """`NewLeaderElector`'s checks, in its order and with its messages."""
    lease = _nanos(config.lease_duration)
    renew = _nanos(config.renew_deadline)
    retry = _nanos(config.retry_period)
    if lease <= renew:
        raise ValueError("leaseDuration must be greater than renewDeadline")
    if renew <= int(JITTER_FACTOR * float(retry)):
        raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
    if lease < 1:
        raise ValueError("leaseDuration must be greater than zero")
    if renew < 1:
        raise ValueError("renewDeadline must be greater than zero")
    if retry < 1:
        raise ValueError("retryPeriod must be greater than zero")
    if config.callbacks.on_started_leading is None:
        raise ValueError("OnStartedLeading callback must not be nil")
    if config.callbacks.on_stopped_leading is None:
        raise ValueError("OnStoppedLeading callback must not be nil")
    if config.lock is None:
        raise ValueError("Lock must not be nil.")
    if config.lock.identity() == "":
        raise ValueError("Lock identity is empty")


class LeaderElector:
    """A leader-election client. Build it, then call `run(stop)` on a thread of your choosing.

    Raises ValueError (client-go's messages) when the config is invalid.
    """

    def __init__(
        self,
        config: LeaderElectionConfig,
        *,
        clock: Clock | None = None,
        metrics: LeaderMetrics | None = None,
        rng: random.Random | None = None,
    ) -> None:
        _validate(config)
        self._config = config
        self._clock: Clock = clock if clock is not None else RealClock()
        self._metrics: LeaderMetrics = metrics if metrics is not None else NoopLeaderMetrics()
        self._rng = rng if rng is not None else random.Random()
        # Guards the observed record and time, which the health check reads from another thread.
        self._mu = threading.Lock()
        self._observed_record = LeaderElectionRecord()
        # None: nothing observed yet, so the first read record always counts as a change.
        self._observed_raw_record: bytes | None = None
        # Monotonic seconds of the last observed change; -inf is Go's zero time (long ago).
        self._observed_time = -math.inf
        # The holder last reported to on_new_leader; may lag the observed holder briefly.
        self._reported_leader = ""
        self._metrics.leader_off(config.name)

    @property
    def config(self) -> LeaderElectionConfig:
        return self._config

    # -- public API ---------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Acquire, lead, renew; return when `stop` is set or leadership is lost.

        `on_stopped_leading` runs on every exit. On leadership loss the caller should exit the
        process (as vc-controller-manager does): the guarded work may still be running.
        """
        try:
            if not self._acquire(stop):
                return  # stopped before we became leader
            leading = threading.Event()
            if stop.is_set():
                leading.set()
            started = self._config.callbacks.on_started_leading
            assert started is not None  # checked by _validate
            threading.Thread(
                target=started, args=(leading,), name="leader-elector-started-leading", daemon=True
            ).start()
            try:
                self._renew(stop, leading)
            finally:
                leading.set()
        finally:
            stopped = self._config.callbacks.on_stopped_leading
            assert stopped is not None  # checked by _validate
            stopped()

    def get_leader(self) -> str:
        """The identity of the last observed leader, "" if none yet. Informational only."""
        return self._get_observed_record().holder_identity

    def is_leader(self) -> bool:
        """True if the last observed leader is this candidate."""
        return self._get_observed_record().holder_identity == self._config.lock.identity()

    def check(self, max_tolerable_expired_lease: float) -> None:
        """Raise `LeaderElectionUnhealthyError` if we lead but have not renewed for longer than
        lease_duration + `max_tolerable_expired_lease`. We should have lost leadership and exited
        long before; still being here means something is stuck (kubernetes#70819)."""
        if not self.is_leader():
            return  # a hot standby is not our concern
        with self._mu:
            last_observation = self._observed_time
        if self._clock.now() - last_observation > self._config.lease_duration + max_tolerable_expired_lease:
            raise LeaderElectionUnhealthyError(f"failed election to renew leadership on lease {self._config.name}")

    # -- loops --------------------------------------------------------------------------------

    def _acquire(self, stop: threading.Event) -> bool:
        """Try at once, then every retry_period * [1, 2.2) (`wait.JitterUntil`, sliding) until we
        lead. Returns False if `stop` was set first."""
        lock = self._config.lock
        desc = lock.describe()
        logger.info("Attempting to acquire leader lease...", lock=desc)
        succeeded = False
        while not stop.is_set():
            succeeded = self._try_acquire_or_renew()
            self._maybe_report_transition()
            if succeeded:
                lock.record_event("became leader")
                self._metrics.leader_on(self._config.name)
                logger.info("Successfully acquired lease", lock=desc)
                break
            logger.debug("Failed to acquire lease", lock=desc)
            if self._clock.sleep(jitter(self._config.retry_period, JITTER_FACTOR, self._rng), stop):
                break
        return succeeded

    def _renew(self, stop: threading.Event, leading: threading.Event) -> None:
        """Renew every retry_period (`wait.Until`); each round may retry for renew_deadline.

        Returns when a round fails (leadership lost) or `stop` is set; then releases the lease if
        configured and records "stopped leading".
        """
        lock = self._config.lock
        desc = lock.describe()
        try:
            while not stop.is_set():
                err = self._renew_round(stop)
                self._maybe_report_transition()
                if err is None:
                    logger.debug("Successfully renewed lease", lock=desc)
                    if self._clock.sleep(self._config.retry_period, stop):
                        break
                    continue
                self._metrics.leader_off(self._config.name)
                logger.info("Failed to renew lease", lock=desc, err=err)
                break
            if stop.is_set():
                # Go's leading context is cancelled together with its parent: tell the guarded
                # work to stop before we release the lease.
                leading.set()
            if self._config.release_on_cancel:
                self._release()
        finally:
            lock.record_event("stopped leading")

    def _renew_round(self, stop: threading.Event) -> str | None:
        """`wait.PollUntilContextTimeout(retry_period, renew_deadline, immediate=true)`.

        Tries now, then on every tick (ticks are retry_period apart, counted from the round's
        start as Go's non-sliding timer counts them) while the deadline has not been reached.
        Returns None on success, else the Go context error text explaining why the round ended.
        """
        period = self._config.retry_period
        start = self._clock.now()
        deadline = start + self._config.renew_deadline
        next_tick = start + period
        if stop.is_set():
            return _CONTEXT_CANCELED
        if self._try_acquire_or_renew():
            return None
        while True:
            wait_for = min(next_tick, deadline) - self._clock.now()
            if wait_for > 0 and self._clock.sleep(wait_for, stop):
                return _CONTEXT_CANCELED
            if stop.is_set():
                return _CONTEXT_CANCELED
            now = self._clock.now()
            if now >= deadline:
                return _DEADLINE_EXCEEDED
            if now < next_tick:
                continue  # woke early; wait out the rest of the tick
            next_tick = now + period
            if self._try_acquire_or_renew():
                return None

    # -- the algorithm ------------------------------------------------------------------------

    def _try_acquire_or_renew(self) -> bool:
        """One attempt to acquire or renew the lease; True if we hold it afterwards."""
        lock = self._config.lock
        now = self._clock.now()
        wall = self._clock.wall()
        record = LeaderElectionRecord(
            holder_identity=lock.identity(),
            lease_duration_seconds=_nanos(self._config.lease_duration) // 1_000_000_000,
            acquire_time=wall,
            renew_time=wall,
        )

        # 1. Fast path: as the leader, update optimistically against the last version we wrote.
        if self.is_leader() and self._is_lease_valid(now):
            old_observed = self._get_observed_record()
            record = replace(
                record,
                acquire_time=old_observed.acquire_time,
                leader_transitions=old_observed.leader_transitions,
            )
            _, err = _attempt(partial(lock.update, record))
            if err is None:
                self._set_observed_record(record)
                return True
            logger.debug(
                "Failed to update lease optimistically, falling back to slow path",
                lock=lock.describe(),
                err=str(err),
            )

        # 2. Obtain the record, or create it.
        got, err = _attempt(lock.get)
        if got is None:
            if not is_not_found(err):
                logger.error("Error retrieving lease lock", lock=lock.describe(), err=str(err))
                return False
            _, err = _attempt(partial(lock.create, record))
            if err is not None:
                logger.error("Error initially creating lease lock", lock=lock.describe(), err=str(err))
                return False
            self._set_observed_record(record)
            return True
        old_record, old_raw = got

        # 3. A changed record restarts the expiry clock (local time, never the remote timestamps).
        with self._mu:
            changed = self._observed_raw_record != old_raw
        if changed:
            self._set_observed_record(old_record, raw=old_raw)
        if old_record.holder_identity and self._is_lease_valid(now) and not self.is_leader():
            logger.debug(
                "Lease is held by and has not yet expired",
                lock=lock.describe(),
                holder=old_record.holder_identity,
            )
            return False

        # 4. Ours to write: keep our acquire time when renewing, count a transition on takeover.
        if self.is_leader():
            record = replace(
                record,
                acquire_time=old_record.acquire_time,
                leader_transitions=old_record.leader_transitions,
            )
            self._metrics.slowpath_exercised(self._config.name)
        else:
            record = replace(record, leader_transitions=old_record.leader_transitions + 1)

        _, err = _attempt(partial(lock.update, record))
        if err is not None:
            logger.error("Failed to update lease", lock=lock.describe(), err=str(err))
            return False
        self._set_observed_record(record)
        return True

    def _release(self) -> bool:
        """Give the lease up if we hold it: holder "", leaseDurationSeconds 1, transitions kept.

        A 409 (an in-flight renewal bumped the resourceVersion) re-reads and retries, as on
        client-go master, within renew_deadline (the context timeout Go uses).
        """
        lock = self._config.lock
        deadline = self._clock.now() + self._config.renew_deadline
        first = True
        while True:
            if not first and self._clock.now() >= deadline:
                logger.error("error retrieving resource lock", lock=lock.describe(), err=_DEADLINE_EXCEEDED)
                return False
            first = False
            got, err = _attempt(lock.get)
            if got is None:
                if not is_not_found(err):
                    logger.error("error retrieving resource lock", lock=lock.describe(), err=str(err))
                    return False
                logger.info("lease lock not found", lock=lock.describe())
                return False
            old_record = got[0]

            if not self.is_leader():
                return True
            wall = self._clock.wall()
            record = LeaderElectionRecord(
                leader_transitions=old_record.leader_transitions,
                lease_duration_seconds=1,
                renew_time=wall,
                acquire_time=wall,
            )
            _, err = _attempt(partial(lock.update, record))
            if err is not None:
                if is_conflict(err):
                    logger.debug("Conflict when releasing lease, retrying", lock=lock.describe())
                    continue
                logger.error("Failed to release lease", lock=lock.describe(), err=str(err))
                return False
            self._set_observed_record(record)
            return True

    def _maybe_report_transition(self) -> None:
        """Tell on_new_leader (on its own thread) when the observed holder changed."""
        with self._mu:
            holder = self._observed_record.holder_identity
            if holder == self._reported_leader:
                return
            self._reported_leader = holder
        callback = self._config.callbacks.on_new_leader
        if callback is not None:
            threading.Thread(target=callback, args=(holder,), name="leader-elector-new-leader", daemon=True).start()

    def _is_lease_valid(self, now: float) -> bool:
        with self._mu:
            return self._observed_time + self._observed_record.lease_duration_seconds > now

    def _set_observed_record(self, record: LeaderElectionRecord, *, raw: bytes | None = None) -> None:
        """Adopt `record` and stamp the local time we saw it; `raw` also replaces the raw record
        used for change detection (only records read from the lock carry one)."""
        observed_at = self._clock.now()
        with self._mu:
            self._observed_record = record
            self._observed_time = observed_at
            if raw is not None:
                self._observed_raw_record = raw

    def _get_observed_record(self) -> LeaderElectionRecord:
        with self._mu:
            return self._observed_record


def _attempt(call: Callable[[], _T]) -> tuple[_T | None, Exception | None]:
    """Run one lock operation and hand back its error as a value, the way Go returns one.

    To the elector every failure (an API status, a refused connection, a timeout, a bug in a
    lock) is one failed attempt that the loops retry on schedule; none may kill the elector's
    thread, or a leader would silently stop renewing while its callbacks keep running.
    """
    try:
        return call(), None
    except Exception as err:  # noqa: BLE001 - any failure is a failed attempt (see docstring)
        return None, err


def run_or_die(
    config: LeaderElectionConfig,
    stop: threading.Event,
    *,
    clock: Clock | None = None,
    metrics: LeaderMetrics | None = None,
) -> None:
    """client-go's `RunOrDie`: build the elector (ValueError if invalid), tie the watchdog, run."""
    le = LeaderElector(config, clock=clock, metrics=metrics)
    if config.watch_dog is not None:
        config.watch_dog.set_leader_election(le)
    le.run(stop)
