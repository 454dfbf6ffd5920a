"""Shard membership: which Leases a replica campaigns for when, and its units' start and stop.

The campaign runs real LeaderElectors on threads over a fake clock (moved only by the test) and
one in-memory Lease per shard; "another replica" is the test writing a shard's Lease itself.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "leaderelection"))  # the shared fakes

from leaderelection_fakes import FakeClock, FakeLeaseServer, FakeLock

from jobflow_controller.leaderelection import LeaderElectionRecord
from jobflow_controller.sharding import ShardCampaign, shard_lease_name

LEASE, RENEW, RETRY = 15.0, 10.0, 2.0
ME, OTHER = "me", "other"


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.002)
    return condition()


class _RecordingLock(FakeLock):
    """A FakeLock that notes, in the shared journal, when it releases its Lease."""

    def __init__(self, shard: int, server: FakeLeaseServer, journal: list[str]) -> None:
        super().__init__(ME, server)
        self._shard = shard
        self._journal = journal
        self._mu = threading.Lock()

    def update(self, record: LeaderElectionRecord) -> None:
        with self._mu:
            super().update(record)
        if not record.holder_identity:
            self._journal.append(f"released {self._shard}")


class Replica:
    """One replica's campaign over three shards, with units that note their start and stop."""

    def __init__(self, preferred: int | None, servers: list[FakeLeaseServer] | None = None) -> None:
        self.clock = FakeClock(auto_advance=False)
        self.servers = servers or [FakeLeaseServer() for _ in range(3)]
        self.journal: list[str] = []
        self.lost: dict[int, threading.Event] = {}
        self.locks = [_RecordingLock(i, server, self.journal) for i, server in enumerate(self.servers)]
        self.campaign = ShardCampaign(
            3,
            preferred,
            lock_for=lambda shard: self.locks[shard],
            run_shard=self._run_shard,
            name_for=lambda shard: shard_lease_name("jobflow-controller", shard),
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
            clock=self.clock,
        )
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.campaign.run, args=(self.stop,), daemon=True)

    def _run_shard(self, shard: int, stop: threading.Event, lost: threading.Event) -> None:
        self.journal.append(f"started {shard}")
        self.lost[shard] = lost
        while not stop.wait(0.002) and not lost.is_set():
            pass
        time.sleep(0.05)  # a unit takes a moment to drain: its Lease must not be released before
        self.journal.append(f"{'lost' if lost.is_set() and not stop.is_set() else 'stopped'} {shard}")

    def advance(self, seconds: float, step: float = 0.5) -> None:
        """Move the fake clock in small steps, giving the electors' threads time to run in between."""
        moved = 0.0
        while moved < seconds:
            self.clock.step(step)
            moved += step
            time.sleep(0.01)

    def holder(self, shard: int) -> str:
        record = self.servers[shard].record
        return record.holder_identity if record is not None else ""


def held_by_other() -> FakeLeaseServer:
    return FakeLeaseServer(LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=int(LEASE)))


def renew_as_other(server: FakeLeaseServer, clock: FakeClock) -> None:
    """The other holder's renewal: a new renewTime, so the record changes as a real renewal does."""
    assert server.record is not None
    server.write(dataclasses.replace(server.record, renew_time=clock.wall()))


@pytest.fixture
def replicas() -> Iterator[list[Replica]]:
    made: list[Replica] = []
    yield made
    for replica in made:
        replica.stop.set()
        replica.thread.join(5.0)


def start(replicas: list[Replica], replica: Replica) -> Replica:
    replicas.append(replica)
    replica.thread.start()
    return replica


def test_preferred_shard_is_campaigned_for_at_once_and_the_others_after_one_lease_duration() -> None:
    campaign = Replica(preferred=1).campaign
    assert [campaign.start_delay(shard) for shard in range(3)] == [LEASE, 0.0, LEASE]


def test_without_a_preferred_shard_every_shard_is_campaigned_for_at_once() -> None:
    campaign = Replica(preferred=None).campaign
    assert [campaign.start_delay(shard) for shard in range(3)] == [0.0, 0.0, 0.0]


def test_preferred_shard_outside_the_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"not one of 0\.\.2"):
        ShardCampaign(3, 3, lock_for=lambda s: FakeLock(), run_shard=lambda *a: None, name_for=str)


def test_replica_takes_its_preferred_shard_at_once_and_touches_no_other_lease_before_the_delay(
    replicas: list[Replica],
) -> None:
    replica = start(replicas, Replica(preferred=1))
    assert wait_until(lambda: replica.campaign.held() == {1})
    replica.advance(LEASE - 1.0)
    assert replica.campaign.held() == {1}
    assert replica.locks[0].ops == [] and replica.locks[2].ops == []
    assert replica.journal == ["started 1"]


def test_free_shards_are_taken_once_the_takeover_delay_has_passed(replicas: list[Replica]) -> None:
    replica = start(replicas, Replica(preferred=1))
    assert wait_until(lambda: replica.campaign.held() == {1})
    replica.advance(LEASE + 1.0)
    assert wait_until(lambda: replica.campaign.held() == {0, 1, 2})
    assert {replica.holder(shard) for shard in range(3)} == {ME}


def test_shard_whose_holder_keeps_renewing_is_never_taken(replicas: list[Replica]) -> None:
    servers = [held_by_other(), FakeLeaseServer(), FakeLeaseServer()]
    replica = start(replicas, Replica(preferred=1, servers=servers))
    for _ in range(int(4 * LEASE)):
        replica.advance(1.0)
        renew_as_other(servers[0], replica.clock)
    assert wait_until(lambda: replica.campaign.held() == {1, 2})
    assert replica.holder(0) == OTHER
    assert "started 0" not in replica.journal


def test_shard_of_a_dead_replica_is_taken_over_once_its_lease_expires(replicas: list[Replica]) -> None:
    servers = [held_by_other(), FakeLeaseServer(), FakeLeaseServer()]
    replica = start(replicas, Replica(preferred=1, servers=servers))
    replica.advance(LEASE + 1.0)  # the other replica stops renewing shard 0 from now on
    assert wait_until(lambda: replica.campaign.held() == {1, 2})
    assert replica.holder(0) == OTHER
    replica.advance(LEASE + 2 * RETRY + 1.0)
    assert wait_until(lambda: 0 in replica.campaign.held())
    assert replica.holder(0) == ME


def test_losing_one_shard_stops_its_unit_hard_and_leaves_the_other_units_running(replicas: list[Replica]) -> None:
    replica = start(replicas, Replica(preferred=1))
    replica.advance(LEASE + 1.0)
    assert wait_until(lambda: replica.campaign.held() == {0, 1, 2})
    # Another replica overwrites shard 2's Lease: our renewals conflict until the renew deadline.
    replica.servers[2].write(LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=int(LEASE)))
    for _ in range(int(RENEW + 2 * RETRY)):
        replica.advance(1.0)
        renew_as_other(replica.servers[2], replica.clock)
    assert wait_until(lambda: "lost 2" in replica.journal)
    assert replica.lost[2].is_set()
    assert not replica.lost[0].is_set() and not replica.lost[1].is_set()
    assert replica.campaign.held() == {0, 1}
    assert "stopped 0" not in replica.journal and "stopped 1" not in replica.journal


def test_lost_shard_is_campaigned_for_again_and_won_back_when_the_other_holder_dies(
    replicas: list[Replica],
) -> None:
    replica = start(replicas, Replica(preferred=2))
    assert wait_until(lambda: replica.campaign.held() == {2})
    replica.servers[2].write(LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=int(LEASE)))
    for _ in range(int(RENEW + 2 * RETRY)):
        replica.advance(1.0)
        renew_as_other(replica.servers[2], replica.clock)
    assert wait_until(lambda: "lost 2" in replica.journal)
    replica.advance(LEASE + 2 * RETRY + 1.0)  # the other holder is silent now
    # On a loaded machine the campaign's thread may not be waiting on the clock yet when it moved:
    # keep time going (one retry period at a time) until it has taken the shard back.
    deadline = time.monotonic() + 30.0
    while replica.journal.count("started 2") < 2 and time.monotonic() < deadline:
        replica.advance(RETRY)
        wait_until(lambda: replica.journal.count("started 2") == 2, timeout=0.2)
    assert replica.journal.count("started 2") == 2
    assert replica.holder(2) == ME


def test_on_stop_every_unit_stops_before_its_lease_is_released(replicas: list[Replica]) -> None:
    replica = start(replicas, Replica(preferred=0))
    replica.advance(LEASE + 1.0)
    assert wait_until(lambda: replica.campaign.held() == {0, 1, 2})
    replica.stop.set()
    replica.thread.join(5.0)
    assert not replica.thread.is_alive()
    for shard in range(3):
        assert replica.journal.index(f"stopped {shard}") < replica.journal.index(f"released {shard}")
        assert replica.holder(shard) == ""
    assert replica.campaign.held() == frozenset()


def test_stop_during_the_takeover_delay_ends_the_campaign_without_touching_other_leases(
    replicas: list[Replica],
) -> None:
    replica = start(replicas, Replica(preferred=0))
    assert wait_until(lambda: replica.campaign.held() == {0})
    replica.stop.set()
    replica.thread.join(5.0)
    assert not replica.thread.is_alive()
    assert replica.locks[1].ops == [] and replica.locks[2].ops == []
