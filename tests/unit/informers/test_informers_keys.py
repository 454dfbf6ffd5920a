"""Cache keys and tombstones (client-go ``store.go``, ``object-names.go``, ``controller_test.go``)."""

from __future__ import annotations

import pytest
from informers_fakes import new_object

from informers import (
    DeletedFinalStateUnknown,
    ExplicitKey,
    ObjectName,
    deletion_handling_meta_namespace_key_func,
    deletion_handling_object_to_name,
    meta_namespace_key_func,
    object_to_name,
    parse_object_name,
    split_meta_namespace_key,
)
from informers.meta import NoMetaError


def test_namespaced_key_is_namespace_slash_name() -> None:
    assert meta_namespace_key_func(new_object("ml-pipeline", "default")) == "default/ml-pipeline"


def test_cluster_scoped_key_is_the_name() -> None:
    assert meta_namespace_key_func(new_object("node-1", "")) == "node-1"


def test_explicit_key_passes_through() -> None:
    assert meta_namespace_key_func(ExplicitKey("a/b")) == "a/b"


def test_an_object_without_metadata_has_no_key() -> None:
    with pytest.raises(NoMetaError, match="object has no meta"):
        meta_namespace_key_func({"kind": "Pod"})


@pytest.mark.parametrize(
    ("key", "expected"),
    [("ns/name", ("ns", "name")), ("name", ("", "name")), ("", ("", ""))],
)
def test_split_meta_namespace_key(key: str, expected: tuple[str, str]) -> None:
    assert split_meta_namespace_key(key) == expected


def test_split_rejects_more_than_one_slash() -> None:
    with pytest.raises(ValueError, match='unexpected key format: "a/b/c"'):
        split_meta_namespace_key("a/b/c")


def test_deletion_handling_key_of_a_tombstone_is_its_key() -> None:
    tombstone = DeletedFinalStateUnknown("ns/gone", None)
    assert deletion_handling_meta_namespace_key_func(tombstone) == "ns/gone"
    assert deletion_handling_meta_namespace_key_func(new_object("x", "ns")) == "ns/x"


def test_deletion_handling_object_to_name_splits_a_tombstone_key() -> None:
    assert deletion_handling_object_to_name(DeletedFinalStateUnknown("ns/gone", None)) == ObjectName("ns", "gone")
    assert deletion_handling_object_to_name(DeletedFinalStateUnknown("gone", None)) == ObjectName("", "gone")


def test_object_name_round_trips_through_its_string() -> None:
    name = object_to_name(new_object("x", "ns"))
    assert str(name) == "ns/x"
    assert parse_object_name(str(name)) == name
    assert str(ObjectName("", "cluster-thing")) == "cluster-thing"
