"""The test doubles other suites build on: FakeListerWatcher, FakeWatch, FakeClock, the filtering handler."""

from __future__ import annotations

import threading

import pytest
from informers_fakes import (
    FakeClock,
    FakeListerWatcher,
    FakeWatch,
    FilteringResourceEventHandler,
    RecordingHandler,
    new_object,
)

from informers import ApiStatusError, EventType, ExpiredError, ListOptions


def test_every_change_gets_the_next_resource_version() -> None:
    lw = FakeListerWatcher([new_object("a"), new_object("b")])
    assert lw.resource_version == "2"
    stored = lw.modify(new_object("a"))
    assert stored["metadata"]["resourceVersion"] == "3"


def test_list_pages_with_continue_tokens_over_a_snapshot() -> None:
    lw = FakeListerWatcher([new_object(f"p{i}") for i in range(5)])
    first = lw.list(ListOptions(limit=2))
    lw.add(new_object("late"))
    second = lw.list(ListOptions(limit=2, continue_token=first.continue_token))
    third = lw.list(ListOptions(limit=2, continue_token=second.continue_token))
    names = [o["metadata"]["name"] for page in (first, second, third) for o in page.items]
    assert names == ["p0", "p1", "p2", "p3", "p4"]
    assert (first.resource_version, third.continue_token) == ("5", None)


def test_an_expired_continue_token_is_a_410() -> None:
    lw = FakeListerWatcher([new_object(f"p{i}") for i in range(3)])
    page = lw.list(ListOptions(limit=1))
    lw.expire_continue_tokens()
    with pytest.raises(ExpiredError):
        lw.list(ListOptions(limit=1, continue_token=page.continue_token))


def test_a_watch_replays_changes_after_its_resource_version() -> None:
    lw = FakeListerWatcher([new_object("a")])
    lw.add_drop_watch(new_object("b"))
    w = lw.watch(ListOptions(resource_version="1"))
    w.close()
    assert [(e.type, e.object["metadata"]["name"]) for e in w] == [(EventType.ADDED, "b")]


def test_a_watch_from_rv_zero_starts_with_the_current_objects() -> None:
    lw = FakeListerWatcher([new_object("a"), new_object("b")])
    w = lw.watch(ListOptions(resource_version="0"))
    w.close()
    assert [e.object["metadata"]["name"] for e in w] == ["a", "b"]


def test_watching_from_a_compacted_rv_fails_with_410() -> None:
    lw = FakeListerWatcher([new_object("a")])
    lw.add(new_object("b"))
    lw.compact()
    with pytest.raises(ExpiredError):
        lw.watch(ListOptions(resource_version="1"))
    lw.expired_as_event = True
    w = lw.watch(ListOptions(resource_version="1"))
    assert next(iter(w)).type == EventType.ERROR


def test_watching_from_a_future_rv_is_too_large() -> None:
    lw = FakeListerWatcher()
    with pytest.raises(ApiStatusError, match="Too large resource version"):
        lw.watch(ListOptions(resource_version="5"))


def test_injected_failures_come_in_order() -> None:
    lw = FakeListerWatcher()
    lw.fail_next_list(RuntimeError("one"), RuntimeError("two"))
    for message in ("one", "two"):
        with pytest.raises(RuntimeError, match=message):
            lw.list(ListOptions())
    assert lw.list(ListOptions()).items == []


def test_stopping_a_fake_watch_ends_a_blocked_iteration() -> None:
    w = FakeWatch()
    events: list[object] = []
    reader = threading.Thread(target=lambda: events.extend(w))
    reader.start()
    w.stop()
    reader.join(1)
    assert not reader.is_alive() and events == []


def test_a_failing_fake_watch_raises_after_its_queued_events() -> None:
    w = FakeWatch()
    w.add(new_object("a"))
    w.fail(RuntimeError("stream broke"))
    it = iter(w)
    assert next(it).type == EventType.ADDED
    with pytest.raises(RuntimeError, match="stream broke"):
        next(it)


def test_fake_clock_sleep_wakes_when_stepped_past_the_deadline() -> None:
    clock = FakeClock()
    woke = threading.Event()

    def sleeper() -> None:
        clock.sleep(5.0)
        woke.set()

    thread = threading.Thread(target=sleeper)
    thread.start()
    assert clock.wait_for_waiters(1)
    clock.step(4.0)
    assert not woke.wait(0.01)
    clock.step(1.0)
    assert woke.wait(1)
    thread.join(1)
    assert not clock.has_waiters()


def test_filtering_handler_translates_updates_crossing_the_filter() -> None:
    inner = RecordingHandler()
    handler = FilteringResourceEventHandler(lambda o: o["keep"], inner)
    keep, drop = {"keep": True}, {"keep": False}
    handler.on_add(keep, True)
    handler.on_add(drop, True)
    handler.on_update(keep, keep)
    handler.on_update(drop, keep)
    handler.on_update(keep, drop)
    handler.on_update(drop, drop)
    handler.on_delete(keep)
    handler.on_delete(drop)
    assert inner.snapshot() == [
        ("add", keep, True),
        ("update", keep, keep),
        ("add", keep, False),
        ("delete", keep, None),
        ("delete", keep, None),
    ]
