"""Per-handler listeners and the shared processor (client-go ``processorListener``, ``sharedProcessor``)."""

from __future__ import annotations

import threading
from typing import Any

from informers_fakes import FakeClock, RecordingHandler, eventually

from informers.handlers import ResourceEventHandlerFuncs
from informers.processor_listener import (
    AddNotification,
    DeleteNotification,
    ProcessListener,
    SharedProcessor,
    UpdateNotification,
    determine_resync_period,
)


def listener(handler: Any, resync: float = 0.0, clock: FakeClock | None = None, synced: bool = True) -> ProcessListener:
    return ProcessListener(handler, resync, resync, 0.0, lambda: synced, clock or FakeClock())


def test_determine_resync_period() -> None:
    assert determine_resync_period(0.0, 10.0) == 0.0
    assert determine_resync_period(5.0, 0.0) == 0.0
    assert determine_resync_period(5.0, 10.0) == 10.0
    assert determine_resync_period(20.0, 10.0) == 20.0


def test_a_listener_buffers_without_bound_and_delivers_in_order() -> None:
    gate = threading.Event()
    seen: list[int] = []

    def on_add(obj: Any) -> None:
        gate.wait(5)
        seen.append(obj)

    lst = listener(ResourceEventHandlerFuncs(add_func=on_add))
    lst.start()
    for i in range(5000):
        lst.add(AddNotification(i))  # never blocks, however slow the handler
    gate.set()
    assert eventually(lambda: len(seen) == 5000)
    assert seen == list(range(5000))
    lst.stop()
    lst.join(1)


def test_each_notification_kind_reaches_its_method() -> None:
    handler = RecordingHandler()
    lst = listener(handler)
    lst.start()
    lst.add(AddNotification("a", True))
    lst.add(UpdateNotification("a", "b"))
    lst.add(DeleteNotification("b"))
    assert handler.wait_for(3)
    assert handler.snapshot() == [("add", "a", True), ("update", "a", "b"), ("delete", "b", None)]
    lst.stop()
    lst.join(1)


def test_registration_sync_waits_for_upstream_and_initial_adds() -> None:
    upstream = threading.Event()
    handler = RecordingHandler()
    lst = ProcessListener(handler, 0.0, 0.0, 0.0, upstream.is_set, FakeClock())
    lst.add(AddNotification("a", True))
    upstream.set()
    assert not lst.has_synced()  # the initial add is still queued
    lst.start()
    assert eventually(lst.has_synced)
    lst.stop()
    lst.join(1)


def test_a_stopped_listener_drops_queued_notifications() -> None:
    handler = RecordingHandler()
    lst = listener(handler)
    lst.add(AddNotification("a"))
    lst.stop()
    lst.start()
    lst.add(AddNotification("b"))
    assert lst.pending() == 0
    assert handler.snapshot() == []


def test_should_resync_marks_due_listeners_and_schedules_their_next_resync() -> None:
    clock = FakeClock()
    processor = SharedProcessor(clock)
    never, every2 = RecordingHandler(), RecordingHandler()
    processor.add_listener(ProcessListener(never, 0.0, 0.0, 0.0, lambda: True, clock))
    processor.add_listener(ProcessListener(every2, 2.0, 2.0, 0.0, lambda: True, clock))
    processor.start()
    assert not processor.should_resync()
    clock.step(2.0)
    assert processor.should_resync()
    processor.distribute(UpdateNotification("x", "x"), sync=True)
    processor.distribute(AddNotification("y"), sync=False)
    assert every2.wait_for(2)
    assert never.wait_for(1)
    assert [e[0] for e in never.snapshot()] == ["add"]
    assert not processor.should_resync()  # next one is due at t=4
    processor.stop()


def test_a_notification_the_funcs_handler_has_no_function_for_is_not_queued() -> None:
    lst = listener(ResourceEventHandlerFuncs(add_func=lambda obj: None))  # not started: nothing drains
    lst.add(UpdateNotification("a", "b"))
    lst.add(DeleteNotification("b"))
    assert lst.pending() == 0
    lst.add(AddNotification("a"))
    assert lst.pending() == 1


def test_an_ignored_initial_add_does_not_hold_back_has_synced() -> None:
    lst = listener(ResourceEventHandlerFuncs(update_func=lambda old, new: None))
    lst.add(AddNotification("a", True))
    assert lst.pending() == 0
    assert lst.has_synced()


def test_a_function_set_after_registration_gets_its_notifications_from_then_on() -> None:
    seen: list[Any] = []
    handler = ResourceEventHandlerFuncs(add_func=seen.append)
    lst = listener(handler)
    lst.start()
    lst.add(UpdateNotification("a", "b"))
    handler.update_func = lambda old, new: seen.append((old, new))
    lst.add(UpdateNotification("b", "c"))
    assert eventually(lambda: seen == [("b", "c")])
    lst.stop()
    lst.join(1)
