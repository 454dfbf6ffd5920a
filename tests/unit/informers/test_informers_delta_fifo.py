"""DeltaFIFO semantics, ported from client-go's ``tools/cache/delta_fifo_test.go``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from informers import (
    DeletedFinalStateUnknown,
    Delta,
    DeltaFIFO,
    Deltas,
    DeltaType,
    FIFOClosedError,
    KeyFuncError,
)

Added, Updated, Deleted, Replaced, Sync = (
    DeltaType.ADDED,
    DeltaType.UPDATED,
    DeltaType.DELETED,
    DeltaType.REPLACED,
    DeltaType.SYNC,
)


def obj(name: str, val: Any) -> dict[str, Any]:
    return {"name": name, "val": val}


def key_of(o: Any) -> str:
    return str(o["name"])


class KnownObjects:
    """The cache the FIFO feeds, as a fixed set of objects (client-go's ``literalListerGetter``)."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        self.objects = {key_of(o): o for o in objects}

    def list_keys(self) -> list[str]:
        return list(self.objects)

    def get_by_key(self, key: str) -> tuple[Any, bool]:
        if key in self.objects:
            return self.objects[key], True
        return None, False


def new_fifo(
    known: KnownObjects | None = None,
    *,
    emit_replaced: bool = False,
    transformer: Callable[[Any], Any] | None = None,
) -> DeltaFIFO:
    return DeltaFIFO(
        key_function=key_of,
        known_objects=known,
        emit_delta_type_replaced=emit_replaced,
        transformer=transformer,
    )


def pop(f: DeltaFIFO) -> Deltas:
    return f.pop(lambda deltas, is_in_initial_list: None)


def newest_val(deltas: Deltas) -> Any:
    newest = deltas.newest()
    assert newest is not None
    return newest.object["val"]


def test_pops_preserve_each_producers_order() -> None:
    f = new_fifo()

    def produce(prefix: str) -> None:
        for i in range(500):
            f.add(obj(f"{prefix}{i}", i))

    producers = [threading.Thread(target=produce, args=(p,)) for p in ("a", "b")]
    for t in producers:
        t.start()
    last = {"a": -1, "b": -1}
    for _ in range(1000):
        deltas = pop(f)
        newest = deltas.newest()
        assert newest is not None
        producer = newest.object["name"][0]
        assert newest.object["val"] > last[producer]
        last[producer] = newest.object["val"]
    for t in producers:
        t.join()
    assert last == {"a": 499, "b": 499}


def test_a_queued_delete_survives_a_replace_that_readds_the_object() -> None:
    # k8s issue 83810
    f = new_fifo(KnownObjects(obj("foo", 1)))
    f.delete(obj("foo", 1))
    f.replace([obj("foo", 2)])
    assert pop(f) == [Delta(Deleted, obj("foo", 1)), Delta(Sync, obj("foo", 2))]


def _case_add_replace_empty(f: DeltaFIFO) -> list[Delta]:
    o = obj("foo", 5)
    f.add(o)
    f.replace([])
    return [Delta(Added, o), Delta(Deleted, DeletedFinalStateUnknown("foo", o))]


def _case_add_delete_replace_empty(f: DeltaFIFO) -> list[Delta]:
    o = obj("foo", 5)
    f.add(o)
    f.delete(o)
    f.replace([])
    return [Delta(Added, o), Delta(Deleted, o)]


def _case_add_replace_twice_replace_empty(f: DeltaFIFO) -> list[Delta]:
    o = obj("foo", 5)
    f.add(o)
    f.replace([o])
    f.replace([o])
    f.replace([])
    return [Delta(Added, o), Delta(Sync, o), Delta(Sync, o), Delta(Deleted, DeletedFinalStateUnknown("foo", o))]


def _case_add_replace_empty_twice(f: DeltaFIFO) -> list[Delta]:
    o = obj("foo", 5)
    f.add(o)
    f.replace([])
    f.replace([])
    return [Delta(Added, o), Delta(Deleted, DeletedFinalStateUnknown("foo", o))]


def _case_add_delete_add_replace_empty(f: DeltaFIFO) -> list[Delta]:
    o, o2 = obj("foo", 5), obj("foo", 6)
    f.add(o)
    f.delete(o)
    f.add(o2)
    f.replace([])
    return [
        Delta(Added, o),
        Delta(Deleted, o),
        Delta(Added, o2),
        Delta(Deleted, DeletedFinalStateUnknown("foo", o2)),
    ]


@pytest.mark.parametrize("known", [KnownObjects, None], ids=["empty-known-objects", "no-known-objects"])
@pytest.mark.parametrize(
    "scenario",
    [
        _case_add_replace_empty,
        _case_add_delete_replace_empty,
        _case_add_replace_twice_replace_empty,
        _case_add_replace_empty_twice,
        _case_add_delete_add_replace_empty,
    ],
)
def test_replace_tombstones_objects_that_are_only_in_the_queue(
    known: Callable[[], KnownObjects] | None, scenario: Callable[[DeltaFIFO], list[Delta]]
) -> None:
    f = new_fifo(known() if known else None)
    expected = scenario(f)
    assert pop(f) == expected
    assert len(f) == 0
    assert f.get_by_key("foo") == (None, False)


def test_replace_with_replaced_emission_marks_relisted_objects_replaced() -> None:
    f = new_fifo(KnownObjects(), emit_replaced=True)
    o = obj("foo", 5)
    f.add(o)
    f.replace([o])
    f.replace([])
    assert pop(f) == [Delta(Added, o), Delta(Replaced, o), Delta(Deleted, DeletedFinalStateUnknown("foo", o))]


def test_add_update_delete_keep_every_delta_under_one_key() -> None:
    f = new_fifo()
    f.add(obj("foo", 10))
    f.update(obj("foo", 12))
    f.delete(obj("foo", 15))
    assert f.list() == [obj("foo", 15)]
    assert f.list_keys() == ["foo"]

    popped: list[Deltas] = []

    def pop_forever() -> None:
        try:
            while True:
                popped.append(pop(f))
        except FIFOClosedError:
            pass

    consumer = threading.Thread(target=pop_forever)
    consumer.start()
    time.sleep(0.03)
    assert len(popped) == 1
    assert [d.type for d in popped[0]] == [Added, Updated, Deleted]
    assert newest_val(popped[0]) == 15
    assert f.get_by_key("foo") == (None, False)
    f.close()
    consumer.join(1)
    assert not consumer.is_alive()


def test_transformer_runs_exactly_once_per_object_including_tombstoned_ones() -> None:
    calls: list[Any] = []

    def transform(o: Any) -> Any:
        assert not o.get("transformed"), f"transformed twice: {o}"
        calls.append(o["val"])
        return {**o, "transformed": True}

    f = new_fifo(transformer=transform)
    f.add(obj("foo", 10))
    f.add(obj("bar", 11))
    f.update(obj("foo", 12))
    f.delete(obj("foo", 15))
    f.replace([])
    f.add(obj("bar", 16))
    f.replace([])

    assert f.list_keys() == ["foo", "bar"]
    assert sorted(calls) == [10, 11, 12, 15, 16]
    foo, _ = f.get_by_key("foo")
    bar, _ = f.get_by_key("bar")
    assert foo is not None and bar is not None
    # foo's real delete was kept over the relist's tombstone.
    assert foo[-1] == Delta(Deleted, {"name": "foo", "val": 15, "transformed": True})
    # bar's tombstone holds the newest (already transformed) object.
    assert bar[-1] == Delta(Deleted, DeletedFinalStateUnknown("bar", {"name": "bar", "val": 16, "transformed": True}))
    for delta in [*foo, *bar]:
        inner = delta.object.obj if isinstance(delta.object, DeletedFinalStateUnknown) else delta.object
        assert inner["transformed"]


def test_resync_replays_are_not_transformed() -> None:
    known = KnownObjects({"name": "foo", "val": 1, "transformed": True})
    f = new_fifo(known, transformer=lambda o: {**o, "transformed": "again"})
    f.resync()
    assert pop(f) == [Delta(Sync, {"name": "foo", "val": 1, "transformed": True})]


def test_without_known_objects_a_delete_of_an_unqueued_key_is_dropped() -> None:
    f = new_fifo()
    f.add(obj("foo", 10))
    f.update(obj("bar", 15))
    f.add(obj("qux", 17))
    f.delete(obj("qux", 18))
    f.delete(obj("baz", 20))  # never queued and no cache to ask: dropped
    assert [newest_val(pop(f)) for _ in range(3)] == [10, 15, 18]
    assert len(f) == 0


def test_with_known_objects_a_delete_of_a_cached_key_is_queued() -> None:
    f = new_fifo(KnownObjects(obj("foo", 5), obj("bar", 6), obj("baz", 7)))
    f.add(obj("foo", 10))
    f.update(obj("bar", 15))
    f.delete(obj("baz", 20))
    assert [newest_val(pop(f)) for _ in range(3)] == [10, 15, 20]
    assert len(f) == 0


def test_with_known_objects_a_delete_of_an_unknown_key_is_dropped() -> None:
    f = new_fifo(KnownObjects(obj("foo", 5)))
    f.delete(obj("bar", 6))
    assert len(f) == 0


def test_resync_skips_keys_that_have_queued_deltas() -> None:
    f = new_fifo(KnownObjects(obj("foo", 5)))
    f.delete(obj("foo", 10))
    f.resync()
    assert pop(f) == [Delta(Deleted, obj("foo", 10))]


def test_resync_queues_a_sync_for_every_known_object() -> None:
    f = new_fifo(KnownObjects(obj("foo", 5)))
    f.resync()
    assert pop(f) == [Delta(Sync, obj("foo", 5))]


def test_resync_without_known_objects_does_nothing() -> None:
    f = new_fifo()
    f.resync()
    assert len(f) == 0


def test_update_then_resync_does_not_replay_the_stale_cached_object() -> None:
    f = new_fifo(KnownObjects(obj("foo", 5)))
    f.update(obj("foo", 6))
    f.resync()
    assert pop(f) == [Delta(Updated, obj("foo", 6))]


def test_deleting_an_existing_object_keeps_both_deltas() -> None:
    f = new_fifo(KnownObjects())
    f.add(obj("foo", 5))
    f.delete(obj("foo", 6))
    deltas, exists = f.get_by_key("foo")
    assert exists and deltas is not None
    assert len(deltas) == 2
    assert deltas[-1].type is Deleted


def _known() -> KnownObjects:
    return KnownObjects(obj("foo", 5), obj("bar", 6), obj("baz", 7))


def test_replace_tombstones_known_objects_missing_from_the_list() -> None:
    f = new_fifo(_known())
    f.delete(obj("baz", 10))
    f.replace([obj("foo", 5)])
    assert [pop(f) for _ in range(3)] == [
        [Delta(Deleted, obj("baz", 10))],
        [Delta(Sync, obj("foo", 5))],
        [Delta(Deleted, DeletedFinalStateUnknown("bar", obj("bar", 6)))],
    ]


def test_replace_tombstones_a_queued_add_with_its_queued_object() -> None:
    f = new_fifo(_known())
    f.add(obj("baz", 10))
    f.replace([obj("foo", 5)])
    assert [pop(f) for _ in range(3)] == [
        [Delta(Added, obj("baz", 10)), Delta(Deleted, DeletedFinalStateUnknown("baz", obj("baz", 10)))],
        [Delta(Sync, obj("foo", 5))],
        [Delta(Deleted, DeletedFinalStateUnknown("bar", obj("bar", 6)))],
    ]


def test_replace_tombstones_a_readded_object_with_the_newest_state() -> None:
    f = new_fifo(_known())
    f.delete(obj("bar", 6))
    f.add(obj("bar", 100))
    f.replace([obj("foo", 5)])
    assert [pop(f) for _ in range(3)] == [
        [
            Delta(Deleted, obj("bar", 6)),
            Delta(Added, obj("bar", 100)),
            Delta(Deleted, DeletedFinalStateUnknown("bar", obj("bar", 100))),
        ],
        [Delta(Sync, obj("foo", 5))],
        [Delta(Deleted, DeletedFinalStateUnknown("baz", obj("baz", 7)))],
    ]


def test_consecutive_replaces_collapse_repeated_tombstones() -> None:
    f = new_fifo(_known())
    f.replace([obj("bar", 100), obj("foo", 5)])
    f.replace([obj("foo", 5)])
    assert [pop(f) for _ in range(3)] == [
        [Delta(Sync, obj("bar", 100)), Delta(Deleted, DeletedFinalStateUnknown("bar", obj("bar", 100)))],
        [Delta(Sync, obj("foo", 5)), Delta(Sync, obj("foo", 5))],
        [Delta(Deleted, DeletedFinalStateUnknown("baz", obj("baz", 7)))],
    ]


def test_replace_without_known_objects_tombstones_only_queued_keys() -> None:
    f = new_fifo()
    f.add(obj("baz", 10))
    f.replace([obj("foo", 5)])
    assert [pop(f) for _ in range(2)] == [
        [Delta(Added, obj("baz", 10)), Delta(Deleted, DeletedFinalStateUnknown("baz", obj("baz", 10)))],
        [Delta(Sync, obj("foo", 5))],
    ]
    assert len(f) == 0


def test_replace_with_replaced_emission_tombstones_the_same_way() -> None:
    f = new_fifo(_known(), emit_replaced=True)
    f.delete(obj("baz", 10))
    f.replace([obj("foo", 6)])
    assert [pop(f) for _ in range(3)] == [
        [Delta(Deleted, obj("baz", 10))],
        [Delta(Replaced, obj("foo", 6))],
        [Delta(Deleted, DeletedFinalStateUnknown("bar", obj("bar", 6)))],
    ]


def test_replace_delta_type_is_replaced_when_emission_is_on() -> None:
    f = new_fifo(KnownObjects(obj("foo", 5)), emit_replaced=True)
    f.replace([obj("foo", 5)])
    assert pop(f) == [Delta(Replaced, obj("foo", 5))]


def test_has_synced_counts_the_initial_replaces_tombstones() -> None:
    f = new_fifo(_known())
    f.replace([obj("foo", 5)])
    seen: list[tuple[list[DeltaType], bool]] = []
    for _ in range(3):
        assert not f.has_synced()
        f.pop(lambda deltas, initial: seen.append(([d.type for d in deltas], initial)))
    assert seen == [([Sync], True), ([Deleted], True), ([Deleted], True)]
    assert f.has_synced()


def test_pops_after_the_initial_list_are_not_in_the_initial_list() -> None:
    f = new_fifo()
    f.replace([obj("foo", 1)])
    pop(f)
    f.add(obj("bar", 2))
    flags: list[bool] = []
    f.pop(lambda deltas, initial: flags.append(initial))
    assert flags == [False]


def test_a_key_keeps_its_first_queue_position() -> None:
    f = new_fifo()
    f.add(obj("foo", 10))
    f.add(obj("bar", 1))
    f.add(obj("foo", 11))
    f.add(obj("foo", 13))
    f.add(obj("zab", 30))
    assert newest_val(pop(f)) == 13
    f.add(obj("foo", 14))
    assert [newest_val(pop(f)) for _ in range(3)] == [1, 30, 14]


def test_key_of_objects_tombstones_and_deltas() -> None:
    f = new_fifo()
    assert f.key_of(obj("foo", 1)) == "foo"
    assert f.key_of(DeletedFinalStateUnknown("bar", obj("bar", 1))) == "bar"
    assert f.key_of(Deltas([Delta(Added, obj("a", 1)), Delta(Updated, obj("b", 2))])) == "b"
    assert f.key_of(Deltas([Delta(Deleted, DeletedFinalStateUnknown("c", None))])) == "c"


def test_key_of_empty_deltas_is_an_error() -> None:
    with pytest.raises(KeyFuncError):
        new_fifo().key_of(Deltas())


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        ([], False),
        (["add"], True),
        (["replace-empty"], True),
        (["replace-ab"], False),
        (["replace-ab", "pop"], False),
        (["replace-ab", "pop", "pop"], True),
        (["replace-a1-a2", "pop"], True),
    ],
)
def test_has_synced(actions: list[str], expected: bool) -> None:
    f = new_fifo()
    for action in actions:
        if action == "add":
            f.add(obj("a", 1))
        elif action == "replace-empty":
            f.replace([])
        elif action == "replace-ab":
            f.replace([obj("a", 1), obj("b", 2)])
        elif action == "replace-a1-a2":
            f.replace([obj("a", 1), obj("a", 2)])
        elif action == "pop":
            pop(f)
    assert f.has_synced() is expected


def test_close_unblocks_every_waiting_pop() -> None:
    f = new_fifo()
    results: list[BaseException] = []
    lock = threading.Lock()

    def blocked_pop() -> None:
        try:
            pop(f)
        except FIFOClosedError as err:
            with lock:
                results.append(err)

    threads = [threading.Thread(target=blocked_pop) for _ in range(10)]
    for t in threads:
        t.start()
    time.sleep(0.01)
    f.close()
    deadline = time.monotonic() + 0.5
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert len(results) == 10
    assert f.is_closed()


def test_a_closed_queue_still_hands_out_what_it_holds() -> None:
    f = new_fifo()
    f.add(obj("foo", 1))
    f.close()
    assert newest_val(pop(f)) == 1
    with pytest.raises(FIFOClosedError, match="DeltaFIFO: manipulating with closed queue"):
        pop(f)


def test_a_failing_process_drops_the_item_and_propagates() -> None:
    f = new_fifo()
    f.add(obj("foo", 1))

    def fail(deltas: Deltas, initial: bool) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        f.pop(fail)
    assert len(f) == 0
    assert f.get_by_key("foo") == (None, False)


def test_only_two_deletes_in_a_row_collapse() -> None:
    f = new_fifo()
    f.add(obj("foo", 1))
    f.update(obj("foo", 2))
    f.update(obj("foo", 3))
    f.delete(obj("foo", 4))
    f.delete(obj("foo", 5))
    assert pop(f) == [
        Delta(Added, obj("foo", 1)),
        Delta(Updated, obj("foo", 2)),
        Delta(Updated, obj("foo", 3)),
        Delta(Deleted, obj("foo", 4)),
    ]
