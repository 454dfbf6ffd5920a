"""The shard filter: which namespaces, and so which objects, a shard owns (its units' views use it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "informers"))  # the shared fakes

from informers_fakes import new_object

from jobflow_controller.sharding import ShardFilter, shard_for_namespace

SHARDS = 3
#: Namespaces of known shards (pinned by test_sharding_hash): team-a is shard 1, team-b shard 2.
OURS, THEIRS = "team-a", "team-b"
SHARD = ShardFilter(shard_for_namespace(OURS, SHARDS), SHARDS)


def test_filter_owns_exactly_the_namespaces_its_shard_hashes_to() -> None:
    assert SHARD.owns(new_object("x", OURS))
    assert not SHARD.owns(new_object("x", THEIRS))


def test_shard_outside_the_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"not one of 0\.\.2"):
        ShardFilter(3, 3)


@pytest.mark.parametrize("obj", [None, "text", {}, {"metadata": None}, {"metadata": {"namespace": None}}])
def test_malformed_objects_count_as_cluster_scoped(obj: object) -> None:
    assert SHARD.owns(obj) == SHARD.owns_namespace("")
