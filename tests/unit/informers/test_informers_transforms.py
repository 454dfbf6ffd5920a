"""Transforms applied before objects are cached."""

from __future__ import annotations

import copy

from informers import DeletedFinalStateUnknown, chain_transforms, strip_managed_fields
from informers.testing import new_object


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
