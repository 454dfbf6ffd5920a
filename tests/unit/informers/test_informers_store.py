"""Store, ThreadSafeStore and indices (client-go ``store_test.go``, ``thread_safe_store_test.go``,
``index_test.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from informers_fakes import new_object

from informers import (
    NAMESPACE_INDEX,
    IndexerConflictError,
    IndexFuncError,
    KeyFuncError,
    ThreadSafeStore,
    UnknownIndexError,
    meta_namespace_index_func,
    new_indexer,
    new_store,
)


def item(name: str, val: str) -> dict[str, Any]:
    return {"name": name, "val": val}


def name_key(o: Any) -> str:
    return str(o["name"])


def by_val(o: Any) -> list[str]:
    return [str(o["val"])]


def test_store_add_get_update_delete_list_replace() -> None:
    store = new_store(name_key)
    store.add(item("foo", "bar"))
    assert store.get(item("foo", "")) == (item("foo", "bar"), True)
    store.update(item("foo", "baz"))
    assert store.get_by_key("foo") == (item("foo", "baz"), True)
    store.delete(item("foo", ""))
    assert store.get_by_key("foo") == (None, False)

    for name in ("a", "b", "c"):
        store.add(item(name, "v"))
    assert sorted(o["name"] for o in store.list()) == ["a", "b", "c"]
    assert sorted(store.list_keys()) == ["a", "b", "c"]

    store.replace([item("foo", "foo"), item("bar", "bar")], "0")
    assert sorted(store.list_keys()) == ["bar", "foo"]


def test_deleting_an_absent_key_is_a_no_op() -> None:
    store = new_store(name_key)
    store.delete(item("missing", ""))
    assert store.list() == []


def test_a_key_function_error_is_a_key_error() -> None:
    store = new_store()
    with pytest.raises(KeyFuncError, match="couldn't create key for object"):
        store.add({"no": "metadata"})


def test_store_returns_the_object_it_was_given() -> None:
    store = new_store()
    o = new_object("x")
    store.add(o)
    assert store.get_by_key("default/x")[0] is o


def test_index_finds_objects_sharing_a_value() -> None:
    indexer = new_indexer(name_key, {"by_val": by_val})
    indexer.add(item("a", "b"))
    indexer.add(item("c", "d"))
    indexer.add(item("e", "b"))
    assert sorted(o["name"] for o in indexer.index("by_val", item("z", "b"))) == ["a", "e"]
    assert sorted(o["name"] for o in indexer.by_index("by_val", "d")) == ["c"]
    assert indexer.index_keys("by_val", "b") == ["a", "e"]


def test_namespace_index() -> None:
    indexer = new_indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    indexer.add(new_object("a", "ns1"))
    indexer.add(new_object("b", "ns2"))
    indexer.add(new_object("c", "ns1"))
    assert indexer.index_keys(NAMESPACE_INDEX, "ns1") == ["ns1/a", "ns1/c"]
    assert sorted(indexer.list_index_func_values(NAMESPACE_INDEX)) == ["ns1", "ns2"]


def test_an_index_value_disappears_with_its_last_object() -> None:
    store = ThreadSafeStore({"by_val": by_val})
    store.add("key1", item("key1", "foo"))
    store.add("key2", item("key2", "foo"))
    store.delete("key1")
    assert store.list_index_func_values("by_val") == ["foo"]
    store.delete("key2")
    assert store.list_index_func_values("by_val") == []


def test_an_update_moves_an_object_between_index_values() -> None:
    def multi(o: Any) -> list[str]:
        return str(o["val"]).split(",")

    store = ThreadSafeStore({"multi": multi})
    store.add("key1", item("key1", "foo"))
    store.add("key2", item("key2", "bar"))
    store.update("key2", item("key2", "foo,bar"))
    assert store.index_keys("multi", "foo") == ["key1", "key2"]
    assert store.index_keys("multi", "bar") == ["key2"]
    store.update("key2", item("key2", "bar"))
    assert store.index_keys("multi", "foo") == ["key1"]


def test_multi_value_index_keys() -> None:
    def users(o: Any) -> list[str]:
        return list(o["users"])

    indexer = new_indexer(name_key, {"byUser": users})
    indexer.add({"name": "one", "users": ["ernie", "bert"]})
    indexer.add({"name": "two", "users": ["bert", "oscar"]})
    indexer.add({"name": "tre", "users": ["ernie", "elmo"]})
    assert indexer.index_keys("byUser", "ernie") == ["one", "tre"]
    assert indexer.index_keys("byUser", "elmo1") == []
    indexer.delete({"name": "tre", "users": []})
    assert indexer.index_keys("byUser", "ernie") == ["one"]
    assert indexer.index_keys("byUser", "elmo") == []
    indexer.update({"name": "two", "users": ["oscar"]})
    assert indexer.index_keys("byUser", "bert") == ["one"]


def test_index_func_values_are_distinct() -> None:
    indexer = new_indexer(name_key, {"by_val": by_val})
    for name, val in (("a", "x"), ("b", "x"), ("c", "y")):
        indexer.add(item(name, val))
    assert sorted(indexer.list_index_func_values("by_val")) == ["x", "y"]


def test_replace_rebuilds_every_index() -> None:
    indexer = new_indexer(name_key, {"by_val": by_val})
    indexer.add(item("a", "old"))
    indexer.replace([item("b", "new")], "7")
    assert indexer.index_keys("by_val", "old") == []
    assert indexer.index_keys("by_val", "new") == ["b"]


def test_add_indexers_indexes_existing_items() -> None:
    indexer = new_indexer(name_key)
    indexer.add(item("a", "x"))
    indexer.add_indexers({"by_val": by_val})
    assert indexer.index_keys("by_val", "x") == ["a"]


def test_add_indexers_rejects_a_name_conflict() -> None:
    indexer = new_indexer(name_key, {"by_val": by_val})
    with pytest.raises(IndexerConflictError, match="indexer conflict"):
        indexer.add_indexers({"by_val": by_val})


def test_an_unknown_index_is_an_error() -> None:
    indexer = new_indexer(name_key)
    with pytest.raises(UnknownIndexError, match="Index with name nope does not exist"):
        indexer.by_index("nope", "x")


def test_a_failing_index_function_is_fatal_and_leaves_the_store_unchanged() -> None:
    def broken(o: Any) -> list[str]:
        if o["val"] == "bad":
            raise ValueError("cannot index")
        return [o["val"]]

    indexer = new_indexer(name_key, {"broken": broken})
    indexer.add(item("a", "good"))
    with pytest.raises(IndexFuncError, match='unable to calculate an index entry for key "a" on index "broken"'):
        indexer.update(item("a", "bad"))
    assert indexer.get_by_key("a") == (item("a", "good"), True)
    assert indexer.index_keys("broken", "good") == ["a"]
