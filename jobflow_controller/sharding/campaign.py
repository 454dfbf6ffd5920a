"""Elastic shards on Kubernetes itself: one Lease per shard, one membership Lease per replica.

A replica keeps a membership Lease of its own (`<lease>-member-<identity>`) and runs one elector
per shard, all the time: an elector that may not take its shard still follows the shard's Lease
(from the campaign's LIST, cachedlock.py), so the moment it is allowed it knows whether the Lease
has expired and takes it at once. What it is allowed to take, and which held shards it hands over, is decided every
retry period by the rebalancing rule (rebalance.py) from one LIST of the Leases (leases.py): under
its quota it campaigns for free shards, above it it hands shards over to a member under its quota,
and a shard free for `takeover_delay` is anyone's.

Winning a shard's Lease runs its unit; losing it stops that unit hard (another replica may be
writing already) while the process and its other units go on; handing a shard over, like a
SIGTERM, drains its unit first and only then releases the Lease. Two replicas never sync one
shard at once for the reason two leaders never do: the holder gives up after `renew_deadline`
without a renewal, the others take over only `lease_duration` after they last saw the Lease
change, lease_duration > renew_deadline + retry_period, and a Lease is released only once its
unit has stopped. The rebalancing only decides who *may* campaign, never who holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from jobflow_controller.leaderelection import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    Clock,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LeaderMetrics,
    RealClock,
    ResourceLock,
)

from .cachedlock import CachedReadLock
from .leases import LeaseObserver, Observation, member_lease_name, shard_lease_name
from .rebalance import View, plan

log = structlog.get_logger(__name__)

#: How often the rebalancer, before it has joined, looks at the stop event.
STOP_POLL = 0.05
#: How often an idle term's release watcher wakes on its own (a release or the stop wakes it at once).
WAKE_POLL = 1.0

#: run_shard(shard, stop, lost): run the shard's unit until `stop` (drain) or `lost` (hard stop).
RunShard = Callable[[int, threading.Event, threading.Event], None]

__all__ = ["LeaseAccess", "RunShard", "ShardCampaign", "shard_lease_name"]


class LeaseAccess:
    """The campaign's reads and deletes of the namespace's Leases (the manager gives the client), and
    `to_record`, a Lease's spec as a leader-election record (kube/lease_lock.py's conversion)."""

    def __init__(
        self,
        base: str,
        list_leases: Callable[[], list[Mapping[str, Any]]],
        delete_lease: Callable[[str, str], None],
        member_lock: ResourceLock,
        to_record: Callable[[Mapping[str, Any]], LeaderElectionRecord],
    ) -> None:
        self.base = base
        self.list_leases = list_leases
        self.delete_lease = delete_lease
        self.member_lock = member_lock
        self.to_record = to_record


class ShardCampaign:
    """Holds the shards the rebalancing rule lets it win, and runs `run_shard` for each one held."""

    def __init__(
        self,
        shards: int,
        preferred: int | None,
        *,
        lock_for: Callable[[int], ResourceLock],
        run_shard: RunShard,
        name_for: Callable[[int], str],
        leases: LeaseAccess,
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
        self.identity = leases.member_lock.identity()
        self._lock_for = lock_for
        self._run_shard = run_shard
        self._name_for = name_for
        self._leases = leases
        self._lease_duration = lease_duration
        self._renew_deadline = renew_deadline
        self._retry_period = retry_period
        self.takeover_delay = lease_duration if takeover_delay is None else takeover_delay
        self._clock: Clock = clock if clock is not None else RealClock()
        self._metrics = metrics
        self._observer = LeaseObserver(leases.base, shards, stale_after=lease_duration)
        self._mu = threading.Lock()
        self._held: set[int] = set()
        self._allowed: frozenset[int] = frozenset()
        self._releases = {shard: threading.Event() for shard in range(shards)}
        # Set with a release and on the stop, so a term's watcher need not poll.
        self._wakes = {shard: threading.Event() for shard in range(shards)}
        self._electors: dict[int, LeaderElector] = {}
        #: Lease name -> spec, from the last LIST (the standby electors read it: cachedlock.py).
        self._specs: dict[str, Mapping[str, Any]] = {}
        self._member_up = threading.Event()

    # -- what the manager reads -------------------------------------------------------------------
    def held(self) -> frozenset[int]:
        """The shards whose unit is running now."""
        with self._mu:
            return frozenset(self._held)

    def may_acquire(self, shard: int) -> bool:
        with self._mu:
            return shard in self._allowed

    def _cached_spec(self, name: str) -> Mapping[str, Any] | None:
        with self._mu:
            return self._specs.get(name)

    def check(self, max_tolerable_expired_lease: float) -> None:
        """The healthz watchdog over every shard: raises if a held Lease has gone unrenewed too long."""
        with self._mu:
            electors = list(self._electors.values())
        for elector in electors:
            elector.check(max_tolerable_expired_lease)

    # -- the rule, applied --------------------------------------------------------------------------
    def rebalance_once(self) -> None:
        """Read the Leases, apply the rule: allow campaigns, request handovers, delete stale members."""
        try:
            leases = self._leases.list_leases()
        except Exception as err:  # noqa: BLE001 - an unread view changes nothing; the next tick retries
            log.warning("cannot list the shards' Leases", error=str(err))
            return
        specs = {str((lease.get("metadata") or {}).get("name") or ""): lease.get("spec") or {} for lease in leases}
        with self._mu:
            self._specs = specs
        seen = self._observer.observe(leases, self._clock.now(), self._clock.wall())
        view = self._view(seen)
        held = self.held()
        decided = plan(view, held)
        with self._mu:
            self._allowed = decided.campaign
        for shard in sorted(decided.release):
            log.info("handing shard over", shard=shard, members=len(view.members), held=sorted(held))
            self._releases[shard].set()
            self._wakes[shard].set()
        for name, uid in seen.stale_members:
            try:
                self._leases.delete_lease(name, uid)
                log.info("deleted a stale member Lease", lease=name)
            except Exception as err:  # noqa: BLE001 - another replica may have deleted it first
                log.debug("cannot delete a stale member Lease", lease=name, error=str(err))

    def _view(self, seen: Observation) -> View:
        return View(
            me=self.identity,
            shards=self.shards,
            members=seen.members | {self.identity},
            holders=seen.holders,
            free_for=seen.free_for,
            preferred=self.preferred,
            takeover_delay=self.takeover_delay,
        )

    # -- run --------------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Campaign until `stop`; return once every unit stopped and its Lease was released."""
        member_stop = threading.Event()
        threads = [threading.Thread(target=self._membership, args=(member_stop,), name="shard-member", daemon=True)]
        threads += [threading.Thread(target=self._rebalance, args=(stop,), name="shard-rebalance", daemon=True)]
        threads += [
            threading.Thread(target=self._campaign, args=(shard, stop), name=f"shard-{shard}-campaign", daemon=True)
            for shard in range(self.shards)
        ]
        for thread in threads:
            thread.start()
        stop.wait()
        for wake in self._wakes.values():
            wake.set()
        for thread in threads[1:]:
            thread.join()
        member_stop.set()  # the membership goes last: held shards were released above
        threads[0].join()
        try:
            self._leases.delete_lease(member_lease_name(self._leases.base, self.identity), "")
        except Exception as err:  # noqa: BLE001 - the others delete it once it is stale
            log.debug("cannot delete our member Lease", error=str(err))

    def _membership(self, stop: threading.Event) -> None:
        """Hold our membership Lease (nobody else campaigns for it) until `stop`."""
        lock = self._leases.member_lock
        while not stop.is_set():
            config = LeaderElectionConfig(
                lock=lock,
                callbacks=LeaderCallbacks(
                    on_started_leading=lambda _l: self._member_up.set(), on_stopped_leading=_noop
                ),
                lease_duration=self._lease_duration,
                renew_deadline=self._renew_deadline,
                retry_period=self._retry_period,
                release_on_cancel=True,
                name=member_lease_name(self._leases.base, self.identity),
            )
            LeaderElector(config, clock=self._clock, metrics=self._metrics).run(stop)

    def _rebalance(self, stop: threading.Event) -> None:
        """Apply the rule every retry period, the first time one period after joining (so replicas
        started together see each other before they reach for shards)."""
        while not self._member_up.is_set():
            if stop.wait(STOP_POLL):
                return
        if self._clock.sleep(self._retry_period, stop):
            return
        while not stop.is_set():
            self.rebalance_once()
            if self._clock.sleep(self._retry_period, stop):
                return

    def _campaign(self, shard: int, stop: threading.Event) -> None:
        while not stop.is_set():
            self._term(shard, stop)

    def _term(self, shard: int, stop: threading.Event) -> None:
        """One run of the elector for `shard`: acquire, run the unit, until lost, handed over or `stop`."""
        release, wake = self._releases[shard], self._wakes[shard]
        release.clear()
        if not stop.is_set():
            wake.clear()
        term = _Term(shard, stop, release, wake, self._run_shard, self._held_changed)
        lock = CachedReadLock(
            self._lock_for(shard),
            self._name_for(shard),
            cached=self._cached_spec,
            use_api=lambda: self.may_acquire(shard),
            to_record=self._leases.to_record,
        )
        config = LeaderElectionConfig(
            lock=lock,
            callbacks=LeaderCallbacks(on_started_leading=term.started_leading, on_stopped_leading=_noop),
            lease_duration=self._lease_duration,
            renew_deadline=self._renew_deadline,
            retry_period=self._retry_period,
            release_on_cancel=True,
            name=self._name_for(shard),
            may_acquire=lambda: self.may_acquire(shard) and not release.is_set(),
        )
        elector = LeaderElector(config, clock=self._clock, metrics=self._metrics)
        with self._mu:
            self._electors[shard] = elector
        watcher = threading.Thread(target=term.release_when_unit_done, name=f"shard-{shard}-release", daemon=True)
        watcher.start()
        try:
            elector.run(term.elector_stop)
        finally:
            if term.unit_started.is_set():
                # Lost: the unit is stopping hard; the next term may begin only once it has.
                term.unit_done.wait()
            term.elector_stop.set()
            watcher.join()
            with self._mu:
                if self._electors.get(shard) is elector:
                    del self._electors[shard]
                if release.is_set():
                    # Handed over: not ours to take again until the next view says so.
                    self._allowed = self._allowed - {shard}
        if term.lost_it.is_set() and not stop.is_set():
            log.warning("shard lost", shard=shard)

    def _held_changed(self, shard: int, held: bool) -> None:
        with self._mu:
            if held:
                self._held.add(shard)
            else:
                self._held.discard(shard)


class _Term:
    """One term of a shard's elector: the unit it runs, and the order in which it ends."""

    def __init__(
        self,
        shard: int,
        stop: threading.Event,
        release: threading.Event,
        wake: threading.Event,
        run_shard: RunShard,
        held_changed: Callable[[int, bool], None],
    ) -> None:
        self.shard = shard
        self.stop = stop
        self.release = release
        self.wake = wake
        self._run_shard = run_shard
        self._held_changed = held_changed
        self.elector_stop = threading.Event()
        self.unit_stop = threading.Event()
        self.unit_started = threading.Event()
        self.unit_done = threading.Event()
        self.lost_it = threading.Event()

    def started_leading(self, lost: threading.Event) -> None:
        shard = self.shard
        self.unit_started.set()
        try:
            if self.unit_stop.is_set() or lost.is_set():
                return  # won just as the process began to stop (or lost already): run nothing
            self._held_changed(shard, True)
            log.info("shard acquired", shard=shard)
            self._run_shard(shard, self.unit_stop, lost)
        finally:
            if lost.is_set() and not self.unit_stop.is_set():
                self.lost_it.set()
            self._held_changed(shard, False)
            self.unit_done.set()
            log.info("shard unit stopped", shard=shard, lost=self.lost_it.is_set(), handed_over=self.release.is_set())

    def release_when_unit_done(self) -> None:
        """The elector releases the Lease when its stop is set, so set it only once the unit that the
        Lease guards has stopped: a successor must never overlap our last syncs."""
        while not self.elector_stop.is_set():
            self.wake.wait(WAKE_POLL)
            if self.stop.is_set() or self.release.is_set():
                self.unit_stop.set()
                if self.unit_started.is_set():
                    self.unit_done.wait()
                self.elector_stop.set()


def _noop() -> None:
    return None
