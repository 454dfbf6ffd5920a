"""Elastic shards: which Leases a replica takes and hands over, and its units' start and stop.

The campaign runs real LeaderElectors on threads over a fake clock (moved only by the test) and
in-memory Leases; "another replica" is either a second campaign over the same Leases or the test
writing a Lease itself.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "leaderelection"))  # the shared fakes

from leaderelection_fakes import FakeClock, FakeLeaseServer, FakeLock

from jobflow_controller.kube.lease_lock import (
    leader_election_record_to_lease_spec,
    lease_spec_to_leader_election_record,
)
from jobflow_controller.leaderelection import LeaderElectionRecord
from jobflow_controller.sharding import LeaseAccess, ShardCampaign, member_lease_name, shard_lease_name

LEASE, RENEW, RETRY = 15.0, 10.0, 2.0
BASE = "jobflow-controller"
SHARDS = 3
OTHER = "other"

#: The fake API server: one lock at a time, whoever calls (two replicas share the Leases).
_API = threading.Lock()


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.002)
    return condition()


class Cluster:
    """The Leases of one namespace, by name, and the one clock every replica reads."""

    def __init__(self) -> None:
        self.clock = FakeClock(auto_advance=False)
        self.servers: dict[str, FakeLeaseServer] = {}
        self.journal: list[str] = []

    def server(self, name: str) -> FakeLeaseServer:
        with _API:
            return self.servers.setdefault(name, FakeLeaseServer())

    def list_leases(self) -> list[dict[str, Any]]:
        with _API:
            return [
                {"metadata": {"name": name, "uid": name}, "spec": leader_election_record_to_lease_spec(s.record)}
                for name, s in self.servers.items()
                if s.record is not None
            ]

    def delete(self, name: str, _uid: str) -> None:
        with _API:
            if name in self.servers:
                self.servers[name].record = None
        self.journal.append(f"deleted {name}")

    def holder(self, shard: int) -> str:
        record = self.server(shard_lease_name(BASE, shard)).record
        return record.holder_identity if record is not None else ""

    def advance(self, seconds: float, step: float = 0.5) -> None:
        """Move the fake clock in small steps, giving the threads time to run in between."""
        moved = 0.0
        while moved < seconds:
            self.clock.step(step)
            moved += step
            time.sleep(0.01)


class _Lock(FakeLock):
    """A FakeLock whose calls are atomic against every other replica's, and that notes releases."""

    def __init__(self, identity: str, name: str, cluster: Cluster) -> None:
        super().__init__(identity, cluster.server(name))
        self._name = name
        self._journal = cluster.journal

    def get(self) -> tuple[LeaderElectionRecord, bytes]:
        with _API:
            return super().get()

    def create(self, record: LeaderElectionRecord) -> None:
        with _API:
            super().create(record)

    def update(self, record: LeaderElectionRecord) -> None:
        with _API:
            super().update(record)
        if not record.holder_identity:
            self._journal.append(f"{self.identity()} released {self._name}")

    def describe(self) -> str:
        return f"default/{self._name}"


class Replica:
    """One replica's campaign over the cluster's shards, with units that note their start and stop."""

    def __init__(self, cluster: Cluster, identity: str, preferred: int | None = None) -> None:
        self.cluster = cluster
        self.identity = identity
        self.lost: dict[int, threading.Event] = {}
        self.locks = {s: _Lock(identity, shard_lease_name(BASE, s), cluster) for s in range(SHARDS)}
        member = _Lock(identity, member_lease_name(BASE, identity), cluster)
        self.campaign = ShardCampaign(
            SHARDS,
            preferred,
            lock_for=lambda shard: self.locks[shard],
            run_shard=self._run_shard,
            name_for=lambda shard: shard_lease_name(BASE, shard),
            leases=LeaseAccess(BASE, cluster.list_leases, cluster.delete, member, lease_spec_to_leader_election_record),
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
            clock=cluster.clock,
        )
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.campaign.run, args=(self.stop,), daemon=True)

    def _run_shard(self, shard: int, stop: threading.Event, lost: threading.Event) -> None:
        journal = self.cluster.journal
        journal.append(f"{self.identity} started {shard}")
        self.lost[shard] = lost
        while not stop.wait(0.002) and not lost.is_set():
            pass
        time.sleep(0.05)  # a unit takes a moment to drain: its Lease must not be released before
        ended = "lost" if lost.is_set() and not stop.is_set() else "stopped"
        journal.append(f"{self.identity} {ended} {shard}")

    def held(self) -> frozenset[int]:
        return self.campaign.held()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    made = Cluster()
    yield made


@pytest.fixture
def replicas() -> Iterator[list[Replica]]:
    made: list[Replica] = []
    yield made
    for replica in made:
        replica.stop.set()
    for replica in made:
        replica.thread.join(5.0)


def start(replicas: list[Replica], replica: Replica) -> Replica:
    replicas.append(replica)
    replica.thread.start()
    return replica


def run_until(cluster: Cluster, condition: Callable[[], bool], seconds: float = 60.0) -> bool:
    """Keep fake time moving (a retry period at a time) until `condition`, or `seconds` have passed."""
    moved = 0.0
    while moved < seconds:
        if wait_until(condition, timeout=0.05):
            return True
        cluster.advance(RETRY / 2)
        moved += RETRY / 2
    return condition()


def renew_as_other(server: FakeLeaseServer, clock: FakeClock) -> None:
    """The other holder's renewal: a new renewTime, so the record changes as a real renewal does."""
    with _API:
        assert server.record is not None
        server.write(dataclasses.replace(server.record, renew_time=clock.wall()))


def hold_as_other(cluster: Cluster, name: str) -> FakeLeaseServer:
    server = cluster.server(name)
    with _API:
        server.write(
            LeaderElectionRecord(
                holder_identity=OTHER, lease_duration_seconds=int(LEASE), renew_time=cluster.clock.wall()
            )
        )
    return server


def test_preferred_shard_outside_the_range_is_refused(cluster: Cluster) -> None:
    member = _Lock("me", member_lease_name(BASE, "me"), cluster)
    with pytest.raises(ValueError, match=r"not one of 0\.\.2"):
        ShardCampaign(
            3,
            3,
            lock_for=lambda s: FakeLock(),
            run_shard=lambda *a: None,
            name_for=str,
            leases=LeaseAccess(BASE, cluster.list_leases, cluster.delete, member, lease_spec_to_leader_election_record),
        )


def test_a_replica_alone_keeps_a_membership_lease_and_takes_every_shard(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    replica = start(replicas, Replica(cluster, "a"))
    assert run_until(cluster, lambda: replica.held() == {0, 1, 2})
    assert {cluster.holder(s) for s in range(SHARDS)} == {"a"}
    record = cluster.server(member_lease_name(BASE, "a")).record
    assert record is not None and record.holder_identity == "a"


def test_no_shard_is_taken_before_the_membership_lease_and_one_retry_period(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    replica = start(replicas, Replica(cluster, "a"))
    wait_until(lambda: cluster.server(member_lease_name(BASE, "a")).record is not None)
    time.sleep(0.1)
    assert replica.held() == frozenset()
    assert all(cluster.server(shard_lease_name(BASE, s)).record is None for s in range(SHARDS))


def test_a_second_replica_gets_its_quota_by_handover_without_a_restart(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    first = start(replicas, Replica(cluster, "a"))
    assert run_until(cluster, lambda: first.held() == {0, 1, 2})
    second = start(replicas, Replica(cluster, "b"))
    # Quotas of 3 over {a, b}: a (first in order) keeps 2, b gets 1.
    assert run_until(cluster, lambda: len(first.held()) == 2 and len(second.held()) == 1)
    moved = next(iter(second.held()))
    journal = cluster.journal
    # Handed over in the safe order: a's unit stopped, then a's Lease released, then b started.
    stopped = journal.index(f"a stopped {moved}")
    released = journal.index(f"a released {shard_lease_name(BASE, moved)}")
    assert stopped < released < journal.index(f"b started {moved}")
    assert first.thread.is_alive() and not any(first.lost[s].is_set() for s in first.held())
    # And it stays so: nothing moves back and forth.
    cluster.advance(4 * RETRY)
    assert len(first.held()) == 2 and second.held() == {moved}


def test_a_shard_whose_holder_keeps_renewing_is_never_taken(cluster: Cluster, replicas: list[Replica]) -> None:
    server = hold_as_other(cluster, shard_lease_name(BASE, 0))
    member = hold_as_other(cluster, member_lease_name(BASE, OTHER))
    replica = start(replicas, Replica(cluster, "a"))
    for _ in range(int(4 * LEASE)):
        cluster.advance(1.0)
        renew_as_other(server, cluster.clock)
        renew_as_other(member, cluster.clock)
    assert wait_until(lambda: replica.held() == {1, 2})
    assert cluster.holder(0) == OTHER
    assert "a started 0" not in cluster.journal


def test_the_shards_of_a_dead_replica_are_taken_once_its_leases_expire(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    hold_as_other(cluster, shard_lease_name(BASE, 0))
    hold_as_other(cluster, member_lease_name(BASE, OTHER))
    replica = start(replicas, Replica(cluster, "a"))
    # The other replica renews nothing from now on: both its Leases expire together.
    assert run_until(cluster, lambda: replica.held() == {0, 1, 2}, seconds=LEASE + 4 * RETRY)
    assert cluster.holder(0) == "a"


def test_a_stale_member_lease_is_deleted(cluster: Cluster, replicas: list[Replica]) -> None:
    hold_as_other(cluster, member_lease_name(BASE, OTHER))
    start(replicas, Replica(cluster, "a"))
    gone = f"deleted {member_lease_name(BASE, OTHER)}"
    assert run_until(cluster, lambda: gone in cluster.journal, seconds=3 * LEASE)


def test_losing_one_shard_stops_its_unit_hard_and_leaves_the_other_units_running(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    replica = start(replicas, Replica(cluster, "a"))
    assert run_until(cluster, lambda: replica.held() == {0, 1, 2})
    # Another replica overwrites shard 2's Lease: our renewals conflict until the renew deadline.
    server = hold_as_other(cluster, shard_lease_name(BASE, 2))
    for _ in range(int(RENEW + 2 * RETRY)):
        cluster.advance(1.0)
        renew_as_other(server, cluster.clock)
    assert wait_until(lambda: "a lost 2" in cluster.journal)
    assert replica.lost[2].is_set()
    assert not replica.lost[0].is_set() and not replica.lost[1].is_set()
    assert replica.held() == {0, 1}
    assert "a stopped 0" not in cluster.journal and "a stopped 1" not in cluster.journal


def test_a_lost_shard_is_won_back_when_the_other_holder_goes_silent(cluster: Cluster, replicas: list[Replica]) -> None:
    replica = start(replicas, Replica(cluster, "a"))
    assert run_until(cluster, lambda: replica.held() == {0, 1, 2})
    server = hold_as_other(cluster, shard_lease_name(BASE, 2))
    for _ in range(int(RENEW + 2 * RETRY)):
        cluster.advance(1.0)
        renew_as_other(server, cluster.clock)
    assert wait_until(lambda: "a lost 2" in cluster.journal)
    assert run_until(cluster, lambda: cluster.journal.count("a started 2") == 2, seconds=LEASE + 6 * RETRY)
    assert cluster.holder(2) == "a"


def test_on_stop_every_unit_stops_before_its_lease_is_released_and_the_membership_goes(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    replica = start(replicas, Replica(cluster, "a"))
    assert run_until(cluster, lambda: replica.held() == {0, 1, 2})
    replica.stop.set()
    replica.thread.join(5.0)
    assert not replica.thread.is_alive()
    journal = cluster.journal
    for shard in range(SHARDS):
        assert journal.index(f"a stopped {shard}") < journal.index(f"a released {shard_lease_name(BASE, shard)}")
        assert cluster.holder(shard) == ""
    assert f"deleted {member_lease_name(BASE, 'a')}" in journal
    assert replica.held() == frozenset()


def test_standby_electors_read_their_leases_from_the_campaigns_list_not_the_api(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    first = start(replicas, Replica(cluster, "a"))
    second = start(replicas, Replica(cluster, "b"))
    assert run_until(cluster, lambda: len(first.held()) + len(second.held()) == SHARDS and len(second.held()) == 1)
    standby = {s: second.locks[s] for s in range(SHARDS) if s not in second.held()}
    before = {s: lock.ops.count("get") for s, lock in standby.items()}
    cluster.advance(6 * RETRY)
    assert {s: lock.ops.count("get") for s, lock in standby.items()} == before
