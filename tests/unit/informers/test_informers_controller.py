"""The low-level controller, process_deltas and the handler adapters (client-go ``controller.go``)."""

from __future__ import annotations

import threading
from typing import Any

from informers_fakes import FakeClock, FakeListerWatcher, RecordingHandler, eventually, new_informer, new_object

from informers import (
    DeletedFinalStateUnknown,
    Delta,
    Deltas,
    DeltaType,
    ResourceEventHandlerDetailedFuncs,
    ResourceEventHandlerFuncs,
    new_store,
    process_deltas,
)


def test_process_deltas_adds_unknown_objects_and_updates_known_ones() -> None:
    store = new_store()
    handler = RecordingHandler()
    v1 = new_object("a", resource_version="1")
    v2 = new_object("a", resource_version="2")
    process_deltas(handler, store, Deltas([Delta(DeltaType.REPLACED, v1), Delta(DeltaType.SYNC, v2)]), True)
    assert handler.snapshot() == [("add", v1, True), ("update", v1, v2)]
    assert store.get_by_key("default/a") == (v2, True)


def test_process_deltas_deletes_with_tombstones() -> None:
    store = new_store(key_func=lambda o: o.key if isinstance(o, DeletedFinalStateUnknown) else "default/a")
    handler = RecordingHandler()
    obj = new_object("a")
    store.add(obj)
    tombstone = DeletedFinalStateUnknown("default/a", obj)
    process_deltas(handler, store, Deltas([Delta(DeltaType.DELETED, tombstone)]), False)
    assert handler.snapshot() == [("delete", tombstone, None)]
    assert store.list() == []


def test_funcs_adapter_drops_the_initial_list_flag_and_tolerates_missing_funcs() -> None:
    added: list[Any] = []
    ResourceEventHandlerFuncs(add_func=added.append).on_add("x", True)
    ResourceEventHandlerFuncs().on_update("a", "b")
    ResourceEventHandlerFuncs().on_delete("a")
    assert added == ["x"]
    detailed: list[tuple[Any, bool]] = []
    ResourceEventHandlerDetailedFuncs(add_func=lambda o, flag: detailed.append((o, flag))).on_add("y", True)
    assert detailed == [("y", True)]


def test_new_informer_fills_its_store_and_notifies_its_handler() -> None:
    lw = FakeListerWatcher([new_object("a")])
    handler = RecordingHandler()
    store, controller = new_informer(lw, 0.0, handler, clock=FakeClock())
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    try:
        assert eventually(controller.has_synced)
        lw.add(new_object("b"))
        assert handler.wait_for(2)
        assert sorted(store.list_keys()) == ["default/a", "default/b"]
        assert controller.last_sync_resource_version() == "2"
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()


def test_a_processing_error_is_logged_and_the_loop_continues() -> None:
    lw = FakeListerWatcher([new_object("a"), new_object("b")])
    seen: list[str] = []

    def on_add(obj: Any) -> None:
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "a":
            raise RuntimeError("handler bug")

    store, controller = new_informer(lw, 0.0, ResourceEventHandlerFuncs(add_func=on_add), clock=FakeClock())
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    try:
        assert eventually(lambda: seen == ["a", "b"])
        assert sorted(store.list_keys()) == ["default/a", "default/b"]
    finally:
        stop.set()
        thread.join(5)
