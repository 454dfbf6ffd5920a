"""Transforms applied before objects are cached."""

from __future__ import annotations

import copy

import pytest
from informers_fakes import new_object

from informers import DeletedFinalStateUnknown, chain_transforms, strip_managed_fields
from informers.transforms import drop_fields, keep_fields


def test_strip_managed_fields_returns_a_new_object_without_them() -> None:
    obj = new_object("x", spec={"a": 1})
    obj["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    original = copy.deepcopy(obj)
    stripped = strip_managed_fields(obj)
    assert "managedFields" not in stripped["metadata"]
    assert stripped["metadata"]["name"] == "x"
    assert stripped["spec"] == {"a": 1}
    assert obj == original
    assert stripped is not obj and stripped["metadata"] is not obj["metadata"]


def test_strip_managed_fields_leaves_non_objects_alone() -> None:
    tombstone = DeletedFinalStateUnknown("ns/x", None)
    assert strip_managed_fields(tombstone) is tombstone
    assert strip_managed_fields({"no": "metadata"}) == {"no": "metadata"}


def test_chain_transforms_applies_left_to_right() -> None:
    def tag(obj: dict[str, object]) -> dict[str, object]:
        return {**obj, "tags": [*obj.get("tags", []), "t"]}  # type: ignore[misc]

    assert chain_transforms(tag, tag)({}) == {"tags": ["t", "t"]}


def test_strip_managed_fields_returns_an_object_without_them_as_is() -> None:
    obj = {"metadata": {"name": "a"}, "spec": {}}
    assert strip_managed_fields(obj) is obj


def test_drop_fields_removes_each_path_and_leaves_the_input_alone() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "managedFields": [{"manager": "m"}], "annotations": {"x": "1"}},
        "spec": {"big": "x" * 100},
        "status": {"phase": "Running"},
    }
    before = copy.deepcopy(obj)
    out = drop_fields("metadata.managedFields", "spec")(obj)
    assert out == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "annotations": {"x": "1"}},
        "status": {"phase": "Running"},
    }
    assert obj == before
    assert out["status"] is obj["status"]  # only the dicts on the way to a dropped field are copied


def test_drop_fields_returns_an_object_without_the_fields_as_is() -> None:
    obj = {"metadata": {"name": "a"}, "status": {}}
    assert drop_fields("spec", "metadata.managedFields", "status.missing.deep")(obj) is obj


def test_drop_fields_leaves_non_objects_alone() -> None:
    tombstone = object()
    assert drop_fields("spec")(tombstone) is tombstone


@pytest.mark.parametrize(
    "path", ["metadata", "metadata.name", "metadata.namespace", "metadata.resourceVersion", "kind"]
)
def test_drop_fields_refuses_what_an_informer_needs(path: str) -> None:
    with pytest.raises(ValueError, match="cannot do without"):
        drop_fields(path)


@pytest.mark.parametrize("paths", [(), ("spec..x",), ("",)])
def test_drop_fields_refuses_no_or_malformed_paths(paths: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        drop_fields(*paths)


def test_keep_fields_keeps_only_the_paths_asked_for_and_what_an_informer_needs() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "x",
            "namespace": "ns",
            "resourceVersion": "7",
            "uid": "u",
            "labels": {"a.b/c": "1", "d": "2"},
        },
        "spec": {"hostNetwork": True, "containers": [{"name": "m"}]},
        "status": {"phase": "Running", "conditions": []},
    }
    original = copy.deepcopy(obj)
    kept = keep_fields(("metadata", "labels", "a.b/c"), "spec.hostNetwork", "status")(obj)
    assert kept == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x", "namespace": "ns", "resourceVersion": "7", "labels": {"a.b/c": "1"}},
        "spec": {"hostNetwork": True},
        "status": {"phase": "Running", "conditions": []},
    }
    assert obj == original


def test_keep_fields_leaves_absent_fields_absent_and_is_idempotent() -> None:
    keep = keep_fields("spec.hostNetwork", "status.podIP", "metadata.deletionTimestamp")
    obj = {"metadata": {"name": "x"}, "spec": "not an object", "status": {}}
    assert keep(obj) == {"metadata": {"name": "x"}, "status": {}}
    assert keep(keep(obj)) == keep(obj)


def test_keep_fields_a_shorter_path_keeps_the_field_whole() -> None:
    keep = keep_fields("status.phase", "status")
    assert keep({"metadata": {}, "status": {"phase": "P", "podIP": "1"}})["status"] == {"phase": "P", "podIP": "1"}


def test_keep_fields_leaves_non_objects_alone_and_refuses_malformed_paths() -> None:
    tombstone = DeletedFinalStateUnknown("ns/x", None)
    assert keep_fields("spec")(tombstone) is tombstone
    with pytest.raises(ValueError, match="malformed"):
        keep_fields("spec..x")
    with pytest.raises(ValueError, match="at least one"):
        keep_fields()
