"""The interner: equal parts of cached objects become one, and nothing observable changes."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from informers import Interner, StringTable


def job(name: str, *, image: str = "trainer:v1", phase: str = "Running") -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "default",
            "resourceVersion": "7",
            "labels": {"volcano.sh/createdByJobFlow": "default.flow"},
            "ownerReferences": [{"kind": "JobFlow", "name": "flow", "controller": True}],
        },
        "spec": {
            "queue": "default",
            "minAvailable": 1,
            "tasks": [
                {"name": "master", "replicas": 1, "template": {"spec": {"containers": [{"image": image}]}}},
                {"name": "worker", "replicas": 2, "template": {"spec": {"containers": [{"image": "worker:v1"}]}}},
            ],
        },
        "status": {"state": {"phase": phase}, "running": 1},
    }


# -- StringTable ------------------------------------------------------------------------------


def test_equal_strings_come_back_as_one_string() -> None:
    table = StringTable()
    first = table.share("".join(["Run", "ning"]))
    second = table.share("".join(["Runn", "ing"]))
    assert first == "Running"
    assert second is first


def test_strings_longer_than_max_length_are_not_kept() -> None:
    table = StringTable(max_length=4)
    table.share("long string")
    assert len(table) == 0


def test_the_string_table_stays_within_two_generations() -> None:
    table = StringTable(capacity=2)
    for i in range(10):
        table.share(f"s{i}")
    assert len(table) <= 4


def test_a_string_in_use_survives_a_generation_change() -> None:
    table = StringTable(capacity=2)
    kept = table.share("".join(["ke", "pt"]))
    table.share("a")
    table.share("b")  # "kept" and "a" are now the old generation
    assert table.share("".join(["k", "ept"])) is kept  # found there, moved to the young one
    table.share("c")
    table.share("d")
    assert table.share("".join(["kep", "t"])) is kept


def test_a_capacity_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="capacity"):
        StringTable(capacity=0)


def test_compact_copies_every_container_and_leaves_the_input_alone() -> None:
    obj = job("a")
    before = copy.deepcopy(obj)
    out = StringTable().compact(obj)
    assert out == before
    assert obj == before
    assert out["spec"] is not obj["spec"]
    assert out["spec"]["tasks"][0] is not obj["spec"]["tasks"][0]


# -- Interner ---------------------------------------------------------------------------------


def test_the_interned_object_equals_its_input_which_is_not_modified() -> None:
    obj = job("a")
    before = copy.deepcopy(obj)
    out = Interner()(obj)
    assert out == before
    assert obj == before
    assert json.dumps(out) == json.dumps(before)  # key order kept


def test_equal_subtrees_of_two_objects_are_one_object() -> None:
    intern = Interner()
    intern(job("first"))  # seen once: not kept yet
    a = intern(job("a"))
    b = intern(job("b"))
    assert a["spec"] is b["spec"]
    assert a["status"] is b["status"]
    assert a["metadata"]["labels"] is b["metadata"]["labels"]
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]


def test_the_top_level_and_metadata_are_never_shared() -> None:
    intern = Interner()
    a = intern(job("same"))
    b = intern(job("same"))
    assert a == b
    assert a is not b
    assert a["metadata"] is not b["metadata"]


def test_a_subtree_seen_once_is_not_kept() -> None:
    intern = Interner()
    intern({"metadata": {"name": "a"}, "status": {"state": {"lastTransitionTime": "10:00:01"}}})
    intern({"metadata": {"name": "b"}, "status": {"state": {"lastTransitionTime": "10:00:02"}}})
    assert len(intern) == 0


def test_subtrees_that_differ_in_one_field_share_everything_else() -> None:
    intern = Interner()
    intern(job("first"))
    a = intern(job("a", image="trainer:v1"))
    b = intern(job("b", image="trainer:v2"))
    assert a["spec"] is not b["spec"]
    assert a["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] == "trainer:v1"
    assert b["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] == "trainer:v2"
    assert a["spec"]["tasks"][1] is b["spec"]["tasks"][1]


def test_strings_of_different_objects_are_shared() -> None:
    intern = Interner()
    a = intern(json.loads(json.dumps(job("a"))))
    b = intern(json.loads(json.dumps(job("b"))))
    assert a["metadata"]["namespace"] is b["metadata"]["namespace"]
    assert a["kind"] is b["kind"]


@pytest.mark.parametrize(("one", "other"), [(1, 1.0), (1, True), (0, False), (0.0, -0.0), (None, "null")])
def test_values_that_compare_equal_in_python_but_differ_in_json_are_not_shared(one: Any, other: Any) -> None:
    intern = Interner()
    a = intern({"metadata": {"name": "a"}, "spec": {"value": one}})
    b = intern({"metadata": {"name": "b"}, "spec": {"value": other}})
    assert json.dumps(a["spec"]["value"]) == json.dumps(one)
    assert json.dumps(b["spec"]["value"]) == json.dumps(other)


def test_dicts_with_the_same_items_in_another_order_keep_their_own_order() -> None:
    intern = Interner()
    intern({"metadata": {"name": "a"}, "spec": {"x": 1, "y": 2}})
    b = intern({"metadata": {"name": "b"}, "spec": {"y": 2, "x": 1}})
    assert list(b["spec"]) == ["y", "x"]


def test_interning_its_own_output_gives_an_equal_object() -> None:
    intern = Interner()
    intern(job("first"))
    once = intern(job("a"))
    twice = intern(once)
    assert twice == once
    assert twice["spec"] is once["spec"]


def test_what_is_not_a_dict_is_returned_as_is() -> None:
    tombstone = object()
    assert Interner()(tombstone) is tombstone


def test_a_value_that_is_not_plain_json_is_left_alone() -> None:
    marker = object()
    obj = {"metadata": {"name": "a"}, "spec": {"thing": marker}}
    out = Interner()(obj)
    assert out["spec"]["thing"] is marker


def test_below_max_depth_a_new_subtree_is_copied_with_shared_strings() -> None:
    intern = Interner(max_depth=0)
    a = intern(job("a", image="trainer:v1"))
    b = intern(job("b", image="trainer:v2"))
    assert a["spec"]["tasks"][1] == b["spec"]["tasks"][1]
    assert a["spec"]["tasks"][1] is not b["spec"]["tasks"][1]  # not looked for below depth 0


def test_the_subtree_table_stays_within_two_generations() -> None:
    intern = Interner(subtree_capacity=2)
    for i in range(20):
        for name in ("a", "b"):  # each spec seen twice, so kept
            intern({"metadata": {"name": name}, "spec": {"n": i}})
    assert 2 <= len(intern) <= 4


def test_a_bytes_fingerprint_is_kept_as_a_compact_copy() -> None:
    buffers: list[bytes] = []

    def fingerprint(value: Any) -> bytes:
        text = json.dumps(value, separators=(",", ":")).encode()
        buffers.append(text)
        return text

    intern = Interner(fingerprint=fingerprint)
    intern({"metadata": {"name": "a"}, "spec": {"n": 1}})
    intern({"metadata": {"name": "b"}, "spec": {"n": 1}})
    b = intern({"metadata": {"name": "c"}, "spec": {"n": 1}})
    assert b["spec"] == {"n": 1}
    kept = list(intern._subtrees._young)  # the table's keys
    assert kept == [b'{"n":1}']
    assert all(key is not buffer for key in kept for buffer in buffers)
