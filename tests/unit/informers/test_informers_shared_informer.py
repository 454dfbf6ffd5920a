"""Shared informer semantics, ported from client-go's ``shared_informer_test.go`` and
``controller_test.go``, against the in-memory :class:`FakeListerWatcher`."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from informers_fakes import FakeClock, FakeListerWatcher, RecordingHandler, eventually, new_object

from informers import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    InformerStartedError,
    InformerStoppedError,
    ResourceEventHandlerDetailedFuncs,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    meta_namespace_index_func,
    meta_namespace_key_func,
    strip_managed_fields,
    wait_for_cache_sync,
)


def pod(name: str, labels: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    return new_object(name, labels=labels, **fields)


@contextmanager
def running(informer: SharedIndexInformer) -> Iterator[threading.Event]:
    stop = threading.Event()
    thread = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(5)
        assert not thread.is_alive(), "informer did not stop"


def synced(*funcs: Any) -> bool:
    return wait_for_cache_sync(threading.Event(), *funcs, timeout=5.0, poll_period=0.002)


def new_informer(lw: FakeListerWatcher, resync: float = 0.0, **kwargs: Any) -> SharedIndexInformer:
    kwargs.setdefault("clock", FakeClock())
    return SharedIndexInformer(lw, resync, name="test", **kwargs)


# -- cache and indices ------------------------------------------------------------------------


def label_values(obj: Any) -> list[str]:
    return sorted(obj["metadata"].get("labels", {}).values())


def test_the_indexer_follows_the_source_and_accepts_indexers_while_running() -> None:
    lw = FakeListerWatcher([pod("pod1", {"app": "a"}), pod("pod2", {"app": "b"})])
    informer = new_informer(lw, indexers={"labels": label_values})
    with running(informer):
        assert synced(informer.has_synced)
        indexer = informer.get_indexer()
        assert [o["metadata"]["name"] for o in indexer.by_index("labels", "a")] == ["pod1"]
        lw.add(pod("pod3", {"app": "a"}))
        assert eventually(lambda: indexer.index_keys("labels", "a") == ["default/pod1", "default/pod3"])
        informer.add_indexers({NAMESPACE_INDEX: meta_namespace_index_func})
        assert indexer.index_keys(NAMESPACE_INDEX, "default") == ["default/pod1", "default/pod2", "default/pod3"]
        assert sorted(indexer.list_index_func_values("labels")) == ["a", "b"]
    assert informer.get_store() is informer.get_indexer()


def test_by_default_the_cache_has_the_namespace_index() -> None:
    lw = FakeListerWatcher([new_object("a", "ns1"), new_object("b", "ns2")])
    informer = new_informer(lw)
    with running(informer):
        assert synced(informer.has_synced)
        assert informer.get_indexer().index_keys(NAMESPACE_INDEX, "ns1") == ["ns1/a"]


def test_the_cache_is_updated_before_handlers_are_told() -> None:
    lw = FakeListerWatcher()
    informer = new_informer(lw)
    seen_in_cache: list[bool] = []

    def on_add(obj: Any) -> None:
        seen_in_cache.append(informer.get_store().get(obj)[1])

    informer.add_event_handler(ResourceEventHandlerFuncs(add_func=on_add))
    with running(informer):
        assert synced(informer.has_synced)
        lw.add(pod("pod1"))
        assert eventually(lambda: seen_in_cache == [True])


def test_last_sync_resource_version_follows_the_source() -> None:
    lw = FakeListerWatcher([pod("pod1")])
    informer = new_informer(lw)
    assert informer.last_sync_resource_version() == ""
    with running(informer):
        assert synced(informer.has_synced)
        assert informer.last_sync_resource_version() == "1"
        lw.add(pod("pod2"))
        assert eventually(lambda: informer.last_sync_resource_version() == "2")


# -- notifications ----------------------------------------------------------------------------


def test_initial_list_adds_are_flagged_and_later_adds_are_not() -> None:
    lw = FakeListerWatcher([pod("pod1")])
    informer = new_informer(lw)
    handler = RecordingHandler()
    informer.add_event_handler(handler)
    with running(informer):
        assert handler.wait_for(1)
        lw.add(pod("pod2"))
        assert handler.wait_for(2)
    assert [(kind, o["metadata"]["name"], flag) for kind, o, flag in handler.snapshot()] == [
        ("add", "pod1", True),
        ("add", "pod2", False),
    ]


def test_updates_and_deletes_reach_every_handler_in_order() -> None:
    lw = FakeListerWatcher([pod("pod1")])
    informer = new_informer(lw)
    handlers = [RecordingHandler(), RecordingHandler()]
    for h in handlers:
        informer.add_event_handler(h)
    with running(informer):
        assert synced(informer.has_synced)
        stored = lw.modify(pod("pod1", {"v": "2"}))
        lw.delete(stored)
        for h in handlers:
            assert h.wait_for(3)
    for h in handlers:
        kinds = [e[0] for e in h.snapshot()]
        assert kinds == ["add", "update", "delete"]
        _, old, new = h.snapshot()[1]
        assert (old["metadata"]["resourceVersion"], new["metadata"]["resourceVersion"]) == ("1", "2")


def test_a_slow_handler_does_not_hold_up_the_others() -> None:
    lw = FakeListerWatcher([pod("pod1")])
    informer = new_informer(lw)
    release = threading.Event()
    informer.add_event_handler(ResourceEventHandlerFuncs(add_func=lambda obj: release.wait(5)))
    fast = RecordingHandler()
    informer.add_event_handler(fast)
    with running(informer):
        for i in range(2, 12):
            lw.add(pod(f"pod{i}"))
        assert fast.wait_for(11)
        release.set()


def test_a_registration_syncs_only_after_its_handler_processed_the_initial_list() -> None:
    lw = FakeListerWatcher([pod("pod1")])
    informer = new_informer(lw)
    release = threading.Event()
    registration = informer.add_event_handler(ResourceEventHandlerFuncs(add_func=lambda obj: release.wait(5)))
    assert not registration.has_synced()
    with running(informer):
        assert synced(informer.has_synced)
        assert not registration.has_synced()
        release.set()
        assert synced(registration.has_synced)


def test_a_handler_added_while_running_gets_the_cache_contents_first() -> None:
    lw = FakeListerWatcher([pod("pod1")])
    informer = new_informer(lw)
    first = informer.add_event_handler(RecordingHandler())
    assert not first.has_synced()
    with running(informer):
        assert synced(first.has_synced)
        gate = threading.Event()
        late = RecordingHandler()

        def gated_add(obj: Any, is_in_initial_list: bool) -> None:
            gate.wait(5)
            late.on_add(obj, is_in_initial_list)

        second = informer.add_event_handler(
            ResourceEventHandlerDetailedFuncs(add_func=gated_add, update_func=late.on_update)
        )
        assert not second.has_synced()
        gate.set()
        assert synced(second.has_synced)
        lw.add(pod("pod2"))
        assert late.wait_for(2)
    assert [(o["metadata"]["name"], flag) for _, o, flag in late.snapshot()] == [("pod1", True), ("pod2", False)]


def test_a_failing_handler_is_logged_and_never_syncs(caplog: pytest.LogCaptureFixture) -> None:
    lw = FakeListerWatcher([pod("pod1")])
    informer = new_informer(lw)

    def explode(obj: Any) -> None:
        raise RuntimeError("fake panic")

    broken = informer.add_event_handler(ResourceEventHandlerFuncs(add_func=explode))
    healthy = informer.add_event_handler(RecordingHandler())
    with caplog.at_level(logging.ERROR, logger="informers"), running(informer):
        assert synced(healthy.has_synced)
        assert eventually(lambda: "Observed a panic" in caplog.text)
        assert "fake panic" in caplog.text
        assert not broken.has_synced()


def test_a_relist_turns_a_missed_delete_into_a_tombstone() -> None:
    lw = FakeListerWatcher([pod("pod1"), pod("pod2")], expired_as_event=True)
    clock = FakeClock()
    informer = new_informer(lw, clock=clock)
    handler = RecordingHandler()
    informer.add_event_handler(handler)
    with running(informer):
        assert handler.wait_for(2)
        lw.delete_drop_watch(pod("pod1"))
        lw.compact()
        lw.expire_watches()
        assert clock.wait_for_waiters(1)  # the reflector backs off before relisting
        clock.step(1.6)
        assert handler.wait_for(1, kind="delete")
        assert eventually(lambda: informer.get_store().list_keys() == ["default/pod2"])
    deletes = [o for kind, o, _ in handler.snapshot() if kind == "delete"]
    assert len(deletes) == 1
    tombstone = deletes[0]
    assert isinstance(tombstone, DeletedFinalStateUnknown)
    assert tombstone.key == "default/pod1"
    assert tombstone.obj["metadata"]["name"] == "pod1"
    # pod2 came back unchanged: an equal-RV update is a sync, not delivered without a resync.
    assert handler.count("update") == 0


# -- resync -----------------------------------------------------------------------------------


def test_each_listener_is_resynced_on_its_own_period() -> None:
    clock = FakeClock()
    lw = FakeListerWatcher([pod("pod1"), pod("pod2")])
    informer = new_informer(lw, resync=1.0, clock=clock)
    listeners = [RecordingHandler() for _ in range(3)]
    for handler, period in zip(listeners, (0.0, 2.0, 3.0), strict=True):
        informer.add_event_handler(handler, period)
    with running(informer):
        for handler in listeners:
            assert handler.wait_for(2)
        updates = [0, 0, 0]
        for now, due in ((1, None), (2, 1), (3, 2)):
            assert clock.wait_for_waiters(1)
            clock.step(1.0)
            assert clock.wait_for_waiters(1)  # the resync tick has been handled
            if due is not None:
                updates[due] += 2
                assert listeners[due].wait_for(2, kind="update"), f"t={now}"
            assert [h.count("update") for h in listeners] == updates, f"t={now}"
    for _, old, new in listeners[1].snapshot()[2:]:
        assert old is new or old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]


def test_handlers_added_before_start_lower_the_resync_check_period() -> None:
    informer = new_informer(FakeListerWatcher(), resync=12 * 3600.0)
    periods = []
    checks = []
    for requested in (0.0, 60.0, 55.0, 5.0):
        periods.append(informer.add_event_handler(RecordingHandler(), requested))
        checks.append(informer.resync_check_period)
    assert checks == [12 * 3600.0, 60.0, 55.0, 5.0]
    assert [r.resync_period for r in periods] == [0.0, 60.0, 55.0, 5.0]


def test_a_handler_added_after_start_cannot_go_below_the_check_period() -> None:
    informer = new_informer(FakeListerWatcher(), resync=10.0)
    with running(informer):
        assert synced(informer.has_synced)
        registration = informer.add_event_handler(RecordingHandler(), 2.0)
    assert registration.resync_period == 10.0
    assert informer.resync_check_period == 10.0


def test_resync_periods_under_one_second_are_raised_to_one_second() -> None:
    informer = new_informer(FakeListerWatcher(), resync=30.0)
    assert informer.add_event_handler(RecordingHandler(), 0.1).resync_period == 1.0


def test_an_informer_without_resync_gives_no_handler_resyncs() -> None:
    informer = new_informer(FakeListerWatcher(), resync=0.0)
    assert informer.add_event_handler(RecordingHandler(), 5.0).resync_period == 0.0


def test_a_watch_disruption_is_repaired_and_syncs_go_only_to_resyncing_listeners() -> None:
    clock = FakeClock()
    lw = FakeListerWatcher([pod("pod1"), pod("pod2")])
    informer = new_informer(lw, resync=1.0, clock=clock)
    no_resync, with_resync = RecordingHandler(), RecordingHandler()
    informer.add_event_handler(no_resync, 0.0)
    informer.add_event_handler(with_resync, 1.0)
    with running(informer):
        assert no_resync.wait_for(2) and with_resync.wait_for(2)
        lw.add_drop_watch(pod("pod3"))
        lw.modify_drop_watch(pod("pod2", {"v": "4"}))
        assert clock.wait_for_waiters(1)
        clock.step(1.0)  # the resync listener is due: it gets pod1 and pod2 replayed
        assert with_resync.wait_for(4)
        lw.reset_watch()  # the watch reopens from the last RV and catches up
        assert no_resync.wait_for(4) and with_resync.wait_for(6)
    assert set(no_resync.names()[2:]) == {"pod2", "pod3"}
    assert set(with_resync.names()[2:]) == {"pod1", "pod2", "pod3"}


# -- transform, error handler, lifecycle ------------------------------------------------------


def test_the_transform_runs_before_objects_are_cached_and_delivered() -> None:
    def upper(obj: Any) -> Any:
        return {**obj, "metadata": {**obj["metadata"], "name": obj["metadata"]["name"].upper()}}

    lw = FakeListerWatcher([pod("pod1"), pod("pod2")])
    informer = new_informer(lw, transform=upper)
    handler = RecordingHandler()
    informer.add_event_handler(handler)
    with running(informer):
        assert handler.wait_for(2)
    assert sorted(handler.names()) == ["POD1", "POD2"]
    assert sorted(informer.get_store().list_keys()) == ["default/POD1", "default/POD2"]


def test_stripping_managed_fields_keeps_them_out_of_the_cache() -> None:
    source = pod("pod1")
    source["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    lw = FakeListerWatcher([source])
    informer = new_informer(lw)
    informer.set_transform(strip_managed_fields)
    with running(informer):
        assert synced(informer.has_synced)
        cached, _ = informer.get_store().get_by_key("default/pod1")
    assert "managedFields" not in cached["metadata"]
    assert source["metadata"]["managedFields"] == [{"manager": "kubectl"}]


def test_a_watch_list_informer_delivers_the_initial_state_as_initial_adds_transformed() -> None:
    def upper(obj: Any) -> Any:
        return {**obj, "metadata": {**obj["metadata"], "name": obj["metadata"]["name"].upper()}}

    lw = FakeListerWatcher([pod("pod1"), pod("pod2")], watch_list=True)
    informer = new_informer(lw, transform=upper)
    handler = RecordingHandler()
    informer.add_event_handler(handler)
    with running(informer):
        assert handler.wait_for(2)
        assert synced(informer.has_synced)
        lw.add(pod("pod3"))
        assert handler.wait_for(3)
    assert [(kind, obj["metadata"]["name"], initial) for kind, obj, initial in handler.events] == [
        ("add", "POD1", True),
        ("add", "POD2", True),
        ("add", "POD3", False),
    ]
    assert lw.list_calls == []


def test_transform_and_error_handler_are_fixed_once_started() -> None:
    informer = new_informer(FakeListerWatcher())
    with running(informer):
        assert eventually(informer.has_started)
        with pytest.raises(InformerStartedError, match="informer has already started"):
            informer.set_transform(strip_managed_fields)
        with pytest.raises(InformerStartedError):
            informer.set_watch_error_handler(lambda r, err: None)


def test_list_errors_reach_the_watch_error_handler() -> None:
    lw = FakeListerWatcher()
    lw.fail_next_list(RuntimeError("Access Denied"))
    informer = new_informer(lw)
    errors: list[str] = []
    informer.set_watch_error_handler(lambda reflector, err: errors.append(str(err)))
    with running(informer):
        assert eventually(lambda: errors == ["Access Denied"], timeout=1.0)


def test_lifecycle_states() -> None:
    informer = new_informer(FakeListerWatcher())
    assert (informer.has_started(), informer.is_stopped(), informer.has_synced()) == (False, False, False)
    with running(informer):
        assert eventually(informer.has_started)
        assert not informer.is_stopped()
    assert informer.is_stopped()


def test_running_twice_is_refused_quietly() -> None:
    informer = new_informer(FakeListerWatcher())
    with running(informer):
        assert eventually(informer.has_started)
        informer.run(threading.Event())  # returns at once


def test_a_stopped_informer_takes_no_handlers_but_removes_them() -> None:
    informer = new_informer(FakeListerWatcher())
    registration = informer.add_event_handler(RecordingHandler())
    with running(informer):
        assert synced(informer.has_synced)
    with pytest.raises(InformerStoppedError, match="was not added to shared informer because it has stopped already"):
        informer.add_event_handler(RecordingHandler())
    with pytest.raises(InformerStoppedError):
        informer.add_indexers({"x": label_values})
    informer.remove_event_handler(registration)
    assert not informer.is_registered(registration)


# -- removing handlers ------------------------------------------------------------------------


def test_removing_handlers_one_by_one() -> None:
    informer = new_informer(FakeListerWatcher())
    first = informer.add_event_handler(RecordingHandler())
    second = informer.add_event_handler(RecordingHandler())
    assert informer._processor.listener_count() == 2
    informer.remove_event_handler(first)
    assert informer._processor.listener_count() == 1
    informer.remove_event_handler(second)
    assert informer._processor.listener_count() == 0


def test_removing_a_foreign_handle_is_a_no_op() -> None:
    mine, theirs = new_informer(FakeListerWatcher()), new_informer(FakeListerWatcher())
    registration = mine.add_event_handler(RecordingHandler())
    theirs.remove_event_handler(registration)
    theirs.remove_event_handler(object())
    assert mine.is_registered(registration)


def test_the_same_handler_twice_gives_two_independent_registrations() -> None:
    informer = new_informer(FakeListerWatcher())
    handler = RecordingHandler()
    first = informer.add_event_handler(handler)
    second = informer.add_event_handler(handler)
    assert first is not second
    informer.remove_event_handler(first)
    assert informer.is_registered(second)
    informer.remove_event_handler(first)  # twice is fine
    informer.remove_event_handler(second)
    assert informer._processor.listener_count() == 0


def test_a_removed_handler_hears_nothing_more() -> None:
    lw = FakeListerWatcher([pod("pod1")])
    informer = new_informer(lw)
    removed, kept = RecordingHandler(), RecordingHandler()
    registration = informer.add_event_handler(removed)
    informer.add_event_handler(kept)
    with running(informer):
        assert removed.wait_for(1)
        informer.remove_event_handler(registration)
        lw.add(pod("pod2"))
        assert kept.wait_for(2)
    assert removed.names() == ["pod1"]


# -- concurrency ------------------------------------------------------------------------------


class HistoryChecker:
    """A handler that checks each object's notifications make sense in sequence."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.present: dict[str, str] = {}
        self.violations: list[str] = []

    @staticmethod
    def _key(obj: Any) -> str:
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        with self.lock:
            key = self._key(obj)
            if key in self.present:
                self.violations.append(f"add of present {key}")
            self.present[key] = obj["metadata"]["resourceVersion"]

    def on_update(self, old: Any, new: Any) -> None:
        with self.lock:
            key = self._key(new)
            if self.present.get(key) != old["metadata"]["resourceVersion"]:
                self.violations.append(f"update of {key} from an unseen version")
            if int(new["metadata"]["resourceVersion"]) < int(old["metadata"]["resourceVersion"]):
                self.violations.append(f"update of {key} went back in time")
            self.present[key] = new["metadata"]["resourceVersion"]

    def on_delete(self, obj: Any) -> None:
        with self.lock:
            key = self._key(obj)
            if key not in self.present:
                self.violations.append(f"delete of absent {key}")
            self.present.pop(key, None)


def test_hammering_the_source_keeps_cache_and_histories_consistent() -> None:
    lw = FakeListerWatcher()
    informer = new_informer(lw)
    checker = HistoryChecker()
    informer.add_event_handler(checker)
    names = [f"pod{i}" for i in range(20)]
    source_lock = threading.Lock()

    def hammer(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(100):
            name = rng.choice(names)
            with source_lock:
                current = lw.get(f"default/{name}")
                if current is None:
                    lw.add(pod(name))
                elif rng.random() < 0.3:
                    lw.delete(current)
                else:
                    lw.modify({**current, "spec": {"n": rng.random()}})

    with running(informer):
        assert synced(informer.has_synced)
        threads = [threading.Thread(target=hammer, args=(seed,)) for seed in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        def caught_up() -> bool:
            expected = {f"default/{o['metadata']['name']}": o["metadata"]["resourceVersion"] for o in lw.objects()}
            cached = {meta_namespace_key_func(o): o["metadata"]["resourceVersion"] for o in informer.get_store().list()}
            with checker.lock:
                return cached == expected and checker.present == expected

        assert eventually(caught_up, timeout=10.0)
    assert checker.violations == []


def test_stopping_joins_every_thread() -> None:
    before = set(threading.enumerate())
    lw = FakeListerWatcher([pod("pod1")])
    informer = new_informer(lw, resync=1.0)
    informer.add_event_handler(RecordingHandler(), 1.0)
    with running(informer):
        assert synced(informer.has_synced)
        informer.add_event_handler(RecordingHandler())
    time.sleep(0.01)
    leftover = [t for t in set(threading.enumerate()) - before if t.is_alive()]
    assert leftover == []
