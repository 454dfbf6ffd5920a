"""Reading the Leases (sharding/leases.py): live members, shard holders, free shards, stale members."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from jobflow_controller.sharding.leases import LeaseObserver, member_lease_name, shard_lease_name

WALL = datetime.datetime(2026, 12, 6, 10, 0, 0, tzinfo=datetime.UTC)
BASE = "jobflow-controller"


def lease(name: str, holder: str, *, renewed: float = 0.0, duration: int = 15, uid: str = "u") -> dict[str, Any]:
    """A Lease as the API returns it; `renewed` is its renewTime in seconds after WALL."""
    renew = (WALL + datetime.timedelta(seconds=renewed)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {
        "metadata": {"name": name, "uid": uid},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration, "renewTime": renew},
    }


def member(identity: str, **kw: Any) -> dict[str, Any]:
    return lease(member_lease_name(BASE, identity), identity, **kw)


def shard(index: int, holder: str, **kw: Any) -> dict[str, Any]:
    return lease(shard_lease_name(BASE, index), holder, **kw)


@pytest.mark.parametrize(
    ("identity", "name"),
    [
        ("pod-0_1b2c", "jobflow-controller-member-pod-0-1b2c"),
        ("Host.Example_UUID", "jobflow-controller-member-host.example-uuid"),
        ("__", "jobflow-controller-member-replica"),
        ("x" * 400, ("jobflow-controller-member-" + "x" * 400)[:253]),
    ],
)
def test_member_lease_name_is_a_valid_lease_name(identity: str, name: str) -> None:
    assert member_lease_name(BASE, identity) == name
    assert len(name) <= 253


def test_live_members_and_holders_are_read_and_other_leases_ignored() -> None:
    observer = LeaseObserver(BASE, 3, stale_after=15.0)
    seen = observer.observe(
        [
            member("a"),
            member("b"),
            shard(0, "a"),
            shard(2, "b"),
            lease("jobflow-controller", "leader"),
            lease("x", "y"),
        ],
        now=100.0,
        wall=WALL,
    )
    assert seen.members == {"a", "b"}
    assert dict(seen.holders) == {0: "a", 2: "b"}
    assert set(seen.free_for) == {1}


def test_a_record_unchanged_for_its_duration_on_our_clock_is_expired_whatever_its_renew_time() -> None:
    observer = LeaseObserver(BASE, 1, stale_after=15.0)
    observer.observe([member("a"), shard(0, "a")], now=100.0, wall=WALL)
    still = observer.observe([member("a"), shard(0, "a")], now=114.0, wall=WALL)
    assert still.members == {"a"} and dict(still.holders) == {0: "a"}
    gone = observer.observe([member("a"), shard(0, "a")], now=118.0, wall=WALL)
    assert gone.members == frozenset() and dict(gone.holders) == {}
    assert gone.free_for[0] == pytest.approx(3.0)


def test_a_renewed_record_stays_alive() -> None:
    observer = LeaseObserver(BASE, 1, stale_after=15.0)
    for step in range(10):
        seen = observer.observe([member("a", renewed=2.0 * step)], now=100.0 + 2.0 * step * 5, wall=WALL)
        assert seen.members == {"a"}


def test_a_released_record_is_free_since_it_was_seen_released() -> None:
    observer = LeaseObserver(BASE, 1, stale_after=15.0)
    observer.observe([shard(0, "a")], now=100.0, wall=WALL)
    first = observer.observe(
        [shard(0, "", renewed=1.0, duration=1)], now=101.0, wall=WALL + datetime.timedelta(seconds=1)
    )
    later = observer.observe(
        [shard(0, "", renewed=1.0, duration=1)], now=111.0, wall=WALL + datetime.timedelta(seconds=11)
    )
    assert dict(first.holders) == {} and first.free_for[0] == pytest.approx(0.0)
    assert later.free_for[0] == pytest.approx(10.0)


def test_first_sight_of_an_old_record_trusts_its_renew_time_minus_the_skew_allowance() -> None:
    observer = LeaseObserver(BASE, 1, stale_after=15.0)
    hour_later = WALL + datetime.timedelta(hours=1)
    seen = observer.observe([member("dead"), shard(0, "dead")], now=100.0, wall=hour_later)
    assert seen.members == frozenset()
    assert dict(seen.holders) == {}


def test_first_sight_of_a_fresh_record_counts_it_alive() -> None:
    observer = LeaseObserver(BASE, 1, stale_after=15.0)
    seen = observer.observe([member("a", renewed=-1.0)], now=100.0, wall=WALL)
    assert seen.members == {"a"}


def test_a_missing_shard_lease_is_free_since_it_was_first_missed() -> None:
    observer = LeaseObserver(BASE, 2, stale_after=15.0)
    observer.observe([shard(0, "a")], now=100.0, wall=WALL)
    seen = observer.observe([shard(0, "a", renewed=5)], now=105.0, wall=WALL)
    assert seen.free_for == {1: pytest.approx(5.0)}


def test_a_member_lease_dead_past_the_stale_time_is_reported_for_deletion() -> None:
    observer = LeaseObserver(BASE, 1, stale_after=15.0)
    observer.observe([member("dead", uid="u1")], now=100.0, wall=WALL)
    assert observer.observe([member("dead", uid="u1")], now=125.0, wall=WALL).stale_members == ()
    stale = observer.observe([member("dead", uid="u1")], now=131.0, wall=WALL).stale_members
    assert stale == ((member_lease_name(BASE, "dead"), "u1"),)


def test_shard_leases_are_never_reported_stale() -> None:
    observer = LeaseObserver(BASE, 1, stale_after=15.0)
    observer.observe([shard(0, "dead")], now=100.0, wall=WALL)
    assert observer.observe([shard(0, "dead")], now=1000.0, wall=WALL).stale_members == ()


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"holderIdentity": "a", "leaseDurationSeconds": "x", "renewTime": "not a time"},
        {"holderIdentity": "a", "leaseDurationSeconds": -5, "renewTime": 12},
        {"holderIdentity": None, "leaseDurationSeconds": None},
    ],
)
def test_malformed_specs_are_read_as_free_or_expired_never_raise(spec: dict[str, Any]) -> None:
    observer = LeaseObserver(BASE, 1, stale_after=15.0)
    seen = observer.observe([{"metadata": {"name": shard_lease_name(BASE, 0)}, "spec": spec}], now=1.0, wall=WALL)
    assert dict(seen.holders) == {}
