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

import math
import random
import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TypeVar

import structlog

from .config import (
    JITTER_FACTOR,
    Clock,
    LeaderElectionConfig,
    RealClock,
    jitter,
    nanos,
    validate,
)
from .healthz import LeaderElectionUnhealthyError
from .metrics import LeaderMetrics, NoopLeaderMetrics
from .resourcelock import LeaderElectionRecord, is_conflict, is_not_found

__all__ = ["LeaderElector", "run_or_die"]

logger = structlog.get_logger(__name__)

_T = TypeVar("_T")

# What Go's context errors say when the poll stops; kept for log parity with klog's output.
_CONTEXT_CANCELED = "context canceled"
_DEADLINE_EXCEEDED = "context deadline exceeded"


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
        validate(config)
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
            assert started is not None  # checked by validate
            threading.Thread(
                target=started, args=(leading,), name="leader-elector-started-leading", daemon=True
            ).start()
            try:
                self._renew(stop, leading)
            finally:
                leading.set()
        finally:
            stopped = self._config.callbacks.on_stopped_leading
            assert stopped is not None  # checked by validate
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
                # Go's leading context is cancelled with its parent: stop the work, then release.
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
            lease_duration_seconds=nanos(self._config.lease_duration) // 1_000_000_000,
            acquire_time=wall,
            renew_time=wall,
        )

        # 1. Fast path: as the leader, update optimistically against the last version we wrote.
        if self.is_leader() and self._is_lease_valid(now) and self._try_update_optimistically(record):
            return True

        # 2. Obtain the record, or create it.
        got, err = _attempt(lock.get)
        if got is None:
            if not is_not_found(err):
                logger.error("Error retrieving lease lock", lock=lock.describe(), err=str(err))
                return False
            if not self._config.may_acquire():
                return False  # not ours to create now
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
        if not self.is_leader() and not self._config.may_acquire():
            return False  # not ours to take now (the gate; renewals are never gated)

        # 4. Ours to write: keep our acquire time when renewing, count a transition on takeover.
        record = self._successor(record, old_record)
        _, err = _attempt(partial(lock.update, record))
        if err is not None:
            logger.error("Failed to update lease", lock=lock.describe(), err=str(err))
            return False
        self._set_observed_record(record)
        return True

    def _try_update_optimistically(self, record: LeaderElectionRecord) -> bool:
        """The leader's renewal against the last record it wrote, without reading the lock first."""
        lock = self._config.lock
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
        return False

    def _successor(self, record: LeaderElectionRecord, old_record: LeaderElectionRecord) -> LeaderElectionRecord:
        """The record to write over `old_record`: a renewal keeps its acquire time, a takeover counts."""
        if self.is_leader():
            self._metrics.slowpath_exercised(self._config.name)
            return replace(
                record,
                acquire_time=old_record.acquire_time,
                leader_transitions=old_record.leader_transitions,
            )
        return replace(record, leader_transitions=old_record.leader_transitions + 1)

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
