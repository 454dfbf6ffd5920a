"""Shard membership on Kubernetes itself: one Lease per shard, each won with the leader elector.

A replica runs one campaign per shard. It campaigns at once for its preferred shard (its
StatefulSet ordinal, or --shard-index) and for every other shard only after `takeover_delay`
(one lease duration by default): at start-up each replica takes its own shard before anyone
reaches for the others, and later the others are there for the taking when their holder dies and
its Lease expires. Winning a shard's Lease runs that shard's controller unit; losing it stops the
unit hard, exactly as a lost lease stops the single-replica manager, but only that unit: the
process and its other shards go on.

Two replicas never sync one shard at once for the same reason two leaders never do: the holder
gives up after `renew_deadline` without a renewal, the others may take over only `lease_duration`
after they last saw the Lease change, and lease_duration > renew_deadline + retry_period. A Lease
is released (so a successor need not wait) only after its unit has stopped, never before; and a
new term for a shard starts only once the previous term's unit has stopped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from jobflow_controller.leaderelection import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    Clock,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    LeaderMetrics,
    RealClock,
    ResourceLock,
)

log = structlog.get_logger(__name__)

#: How often a term's release watcher looks at the campaign's stop event.
STOP_POLL = 0.05

#: run_shard(shard, stop, lost): run the shard's unit until `stop` (drain) or `lost` (hard stop).
RunShard = Callable[[int, threading.Event, threading.Event], None]


def shard_lease_name(base: str, shard: int) -> str:
    """The Lease of shard `shard`: `jobflow-controller-shard-<shard>` for the default base name."""
    return f"{base}-shard-{shard}"


class ShardCampaign:
    """Holds as many shards' Leases as it can win and runs `run_shard` for each one held."""

    def __init__(
        self,
        shards: int,
        preferred: int | None,
        *,
        lock_for: Callable[[int], ResourceLock],
        run_shard: RunShard,
        name_for: Callable[[int], str],
        lease_duration: float = DEFAULT_LEASE_DURATION,
        renew_deadline: float = DEFAULT_RENEW_DEADLINE,
        retry_period: float = DEFAULT_RETRY_PERIOD,
        takeover_delay: float | None = None,
        clock: Clock | None = None,
        metrics: LeaderMetrics | None = None,
    ) -> None:
        if shards < 1:
            raise ValueError(f"shards must be at least 1, got {shards}")
        if preferred is not None and not 0 <= preferred < shards:
            raise ValueError(f"preferred shard {preferred} is not one of 0..{shards - 1}")
        self.shards = shards
        self.preferred = preferred
        self._lock_for = lock_for
        self._run_shard = run_shard
        self._name_for = name_for
        self._lease_duration = lease_duration
        self._renew_deadline = renew_deadline
        self._retry_period = retry_period
        self.takeover_delay = lease_duration if takeover_delay is None else takeover_delay
        self._clock: Clock = clock if clock is not None else RealClock()
        self._metrics = metrics
        self._mu = threading.Lock()
        self._held: set[int] = set()
        self._electors: dict[int, LeaderElector] = {}

    # -- what the manager reads -------------------------------------------------------------------
    def held(self) -> frozenset[int]:
        """The shards whose unit is running now."""
        with self._mu:
            return frozenset(self._held)

    def start_delay(self, shard: int) -> float:
        """How long after start-up the campaign for `shard` begins: 0 for the preferred shard (and for
        every shard when there is none), `takeover_delay` for the others."""
        if self.preferred is None or shard == self.preferred:
            return 0.0
        return self.takeover_delay

    def check(self, max_tolerable_expired_lease: float) -> None:
        """The healthz watchdog over every shard: raises if a held Lease has gone unrenewed too long."""
        with self._mu:
            electors = list(self._electors.values())
        for elector in electors:
            elector.check(max_tolerable_expired_lease)

    # -- run --------------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Campaign for every shard until `stop`; return once every unit stopped and its Lease was released."""
        threads = [
            threading.Thread(target=self._campaign, args=(shard, stop), name=f"shard-{shard}-campaign", daemon=True)
            for shard in range(self.shards)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _campaign(self, shard: int, stop: threading.Event) -> None:
        delay = self.start_delay(shard)
        if delay > 0 and self._clock.sleep(delay, stop):
            return
        while not stop.is_set():
            self._term(shard, stop)

    def _term(self, shard: int, stop: threading.Event) -> None:
        """One run of the elector for `shard`: acquire, run the unit, until the Lease is lost or `stop`."""
        elector_stop = threading.Event()
        unit_started = threading.Event()
        unit_done = threading.Event()

        def started_leading(lost: threading.Event) -> None:
            unit_started.set()
            try:
                if stop.is_set() or lost.is_set():
                    return  # won just as the process began to stop (or lost already): run nothing
                with self._mu:
                    self._held.add(shard)
                log.info("shard acquired", shard=shard)
                self._run_shard(shard, stop, lost)
            finally:
                with self._mu:
                    self._held.discard(shard)
                unit_done.set()
                log.info("shard unit stopped", shard=shard, lost=not stop.is_set())

        def release_when_unit_done() -> None:
            # The elector releases the Lease when its stop is set, so set it only once the unit
            # that the Lease guards has stopped: a successor must never overlap our last syncs.
            while not elector_stop.is_set():
                if stop.wait(STOP_POLL):
                    if unit_started.is_set():
                        unit_done.wait()
                    elector_stop.set()

        config = LeaderElectionConfig(
            lock=self._lock_for(shard),
            callbacks=LeaderCallbacks(on_started_leading=started_leading, on_stopped_leading=lambda: None),
            lease_duration=self._lease_duration,
            renew_deadline=self._renew_deadline,
            retry_period=self._retry_period,
            release_on_cancel=True,
            name=self._name_for(shard),
        )
        elector = LeaderElector(config, clock=self._clock, metrics=self._metrics)
        with self._mu:
            self._electors[shard] = elector
        watcher = threading.Thread(target=release_when_unit_done, name=f"shard-{shard}-release", daemon=True)
        watcher.start()
        try:
            elector.run(elector_stop)
        finally:
            if unit_started.is_set():
                # Lost: the unit is stopping hard; the next term may begin only once it has.
                unit_done.wait()
            elector_stop.set()
            watcher.join()
            with self._mu:
                if self._electors.get(shard) is elector:
                    del self._electors[shard]
        if not stop.is_set():
            log.warning("shard lost", shard=shard)
