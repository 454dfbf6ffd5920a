"""The standby electors' lock (sharding/cachedlock.py): reads from the last LIST unless the shard may
be taken or is ours; writes always go to the API."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "leaderelection"))  # the shared fakes

from leaderelection_fakes import FakeLeaseServer, FakeLock

from jobflow_controller.kube.lease_lock import (
    leader_election_record_to_lease_spec,
    lease_spec_to_leader_election_record,
)
from jobflow_controller.leaderelection import LeaderElectionRecord, LockNotFoundError
from jobflow_controller.sharding.cachedlock import CachedReadLock

OTHER = LeaderElectionRecord(holder_identity="other", lease_duration_seconds=15)


def lock(
    cache: dict[str, Any], gate: list[bool], server: FakeLeaseServer | None = None
) -> tuple[CachedReadLock, FakeLock]:
    inner = FakeLock("me", server or FakeLeaseServer(OTHER))
    wrapped = CachedReadLock(
        inner, "shard-0", cached=cache.get, use_api=lambda: gate[0], to_record=lease_spec_to_leader_election_record
    )
    return wrapped, inner


def test_a_gated_read_comes_from_the_list_without_a_request() -> None:
    cache = {"shard-0": leader_election_record_to_lease_spec(OTHER)}
    wrapped, inner = lock(cache, [False])
    record, raw = wrapped.get()
    assert record.holder_identity == "other" and raw == record.raw()
    assert inner.ops == []


def test_a_gated_read_of_a_lease_missing_from_the_list_is_not_found() -> None:
    wrapped, inner = lock({}, [False])
    with pytest.raises(LockNotFoundError):
        wrapped.get()
    assert inner.ops == []


def test_an_allowed_read_goes_to_the_api() -> None:
    wrapped, inner = lock({}, [True])
    assert wrapped.get()[0].holder_identity == "other"
    assert inner.ops == ["get"]


def test_once_ours_every_read_goes_to_the_api_until_released() -> None:
    gate = [True]
    wrapped, inner = lock({}, gate, FakeLeaseServer())
    wrapped.create(LeaderElectionRecord(holder_identity="me", lease_duration_seconds=15))
    gate[0] = False
    wrapped.get()
    assert inner.ops == ["create", "get"]
    wrapped.update(LeaderElectionRecord(holder_identity="", lease_duration_seconds=1))
    with pytest.raises(LockNotFoundError):
        wrapped.get()  # released: back to the (empty) list
    assert inner.ops == ["create", "get", "update"]


def test_a_listed_record_naming_us_is_read_again_from_the_api() -> None:
    """Regression: a LIST from before our own release made a new term's elector renew a released Lease."""
    mine = LeaderElectionRecord(holder_identity="me", lease_duration_seconds=15)
    released = LeaderElectionRecord(holder_identity="", lease_duration_seconds=1)
    wrapped, inner = lock({"shard-0": leader_election_record_to_lease_spec(mine)}, [False], FakeLeaseServer(released))
    assert wrapped.get()[0].holder_identity == ""
    assert inner.ops == ["get"]
