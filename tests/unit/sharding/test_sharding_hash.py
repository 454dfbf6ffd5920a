"""The shard of a namespace: FNV-1a, the same in every process, replica and Python version."""

from __future__ import annotations

import subprocess
import sys

import pytest

from jobflow_controller.sharding import fnv32a, ordinal_from_name, shard_for_namespace


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968)],
)
def test_fnv32a_matches_the_published_test_vectors(data: bytes, expected: int) -> None:
    assert fnv32a(data) == expected


def test_shard_of_a_namespace_is_pinned_so_no_release_can_move_namespaces_silently() -> None:
    assert [shard_for_namespace(ns, 3) for ns in ("default", "volcano-system", "team-a", "team-b")] == [0, 1, 1, 2]


def test_shard_of_a_namespace_is_the_same_in_another_process_with_another_hash_seed() -> None:
    code = "from jobflow_controller.sharding import shard_for_namespace as s; print(s('team-a', 7), s('ml', 7))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code], env={"PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True
        ).stdout
        for seed in ("1", "2")
    }
    assert outputs == {f"{shard_for_namespace('team-a', 7)} {shard_for_namespace('ml', 7)}\n"}


def test_every_shard_gets_namespaces_from_a_dozen() -> None:
    shards = {shard_for_namespace(f"shard-e2e-{i:02d}", 3) for i in range(12)}
    assert shards == {0, 1, 2}


def test_one_shard_owns_everything() -> None:
    assert {shard_for_namespace(f"ns-{i}", 1) for i in range(50)} == {0}


def test_zero_shards_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        shard_for_namespace("default", 0)


@pytest.mark.parametrize(
    ("name", "ordinal"),
    [("jobflow-controller-0", 0), ("jobflow-controller-12", 12), ("jobflow-controller", None), ("host", None)],
)
def test_ordinal_is_the_statefulset_suffix_of_the_pod_name(name: str, ordinal: int | None) -> None:
    assert ordinal_from_name(name) == ordinal
