"""The delaying queue: client-go's delaying_queue_test.go on a FakeClock, plus dedup, heartbeat, shutdown."""

from __future__ import annotations

import gc
import threading
import weakref

from workqueue_test_support import stays, wait_for

from workqueue import MAX_WAIT, DelayingQueue, FakeClock


def _queue(clock: FakeClock, name: str = "") -> DelayingQueue[str]:
    return DelayingQueue(name=name, clock=clock)


def test_simple_queue() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add_after("foo", 0.05)
    assert len(q) == 0

    clock.step(0.06)
    wait_for(lambda: len(q) == 1)
    item, _ = q.get()
    assert item == "foo"
    q.done(item)

    clock.step(10)  # past the heartbeat
    assert stays(lambda: len(q) == 0)
    q.shut_down()


def test_a_later_add_after_never_postpones_a_waiting_item() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add_after("foo", 0.05)
    q.add_after("foo", 0.07)
    assert len(q) == 0

    clock.step(0.06)
    wait_for(lambda: len(q) == 1)
    item, _ = q.get()
    q.done(item)

    clock.step(0.02)  # the 70 ms request was merged, not kept: no second fire
    assert stays(lambda: len(q) == 0)
    q.shut_down()


def test_an_earlier_add_after_moves_a_waiting_item_earlier() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add_after("foo", 0.05)
    q.add_after("foo", 0.03)
    assert len(q) == 0

    clock.step(0.04)
    wait_for(lambda: len(q) == 1)
    item, _ = q.get()
    q.done(item)

    clock.step(0.02)  # past the original 50 ms: the item no longer waits for it
    assert stays(lambda: len(q) == 0)
    q.shut_down()


def test_add_two_fire_early() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add_after("foo", 1.0)
    q.add_after("bar", 0.05)
    assert len(q) == 0

    clock.step(0.06)
    wait_for(lambda: len(q) == 1)
    assert q.get()[0] == "bar"

    q.add_after("baz", 2.0)
    clock.step(1.0)
    wait_for(lambda: len(q) == 1)
    assert q.get()[0] == "foo"

    clock.step(2.0)
    wait_for(lambda: len(q) == 1)
    assert q.get()[0] == "baz"
    q.shut_down()


def test_copy_shifting() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add_after("foo", 1.0)
    q.add_after("bar", 0.5)
    q.add_after("baz", 0.25)
    assert len(q) == 0

    clock.step(2.0)
    wait_for(lambda: len(q) == 3)

    assert [q.get()[0] for _ in range(3)] == ["baz", "bar", "foo"]
    q.shut_down()


def test_a_non_positive_delay_adds_at_once() -> None:
    q = _queue(FakeClock())
    q.add_after("foo", 0)
    q.add_after("bar", -1)

    assert len(q) == 2
    q.shut_down()


def test_an_item_is_ready_when_its_time_equals_now() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add_after("foo", 0.5)

    clock.step(0.5)

    wait_for(lambda: len(q) == 1)
    q.shut_down()


def test_an_item_is_not_ready_before_its_time() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add_after("foo", 0.5)

    clock.step(0.499)

    assert stays(lambda: len(q) == 0)
    q.shut_down()


def test_a_waiting_item_that_is_also_queued_is_deduplicated_when_ready() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add("foo")
    q.add_after("foo", 0.05)

    clock.step(0.05)

    assert stays(lambda: len(q) == 1)
    q.shut_down()


def test_add_after_while_shutting_down_is_ignored() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.shut_down()

    q.add_after("foo", 0)
    q.add_after("bar", 0.05)
    clock.step(1)

    assert len(q) == 0
    assert q.get() == (None, True)


def test_shut_down_drops_items_still_waiting() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add_after("foo", 0.05)
    q.add("bar")

    q.shut_down()
    clock.step(1)

    assert q.get() == ("bar", False)
    assert q.get() == (None, True)


def _waiting_threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"workqueue-delaying-{name}"]


def test_shut_down_stops_and_joins_the_waiting_thread() -> None:
    clock = FakeClock()
    q = _queue(clock, name="join-on-shut-down")
    q.add_after("foo", 5)
    wait_for(clock.has_waiters)
    (thread,) = _waiting_threads("join-on-shut-down")
    assert thread.daemon

    q.shut_down()

    assert not thread.is_alive()
    assert not clock.has_waiters()


def test_shut_down_with_drain_stops_and_joins_the_waiting_thread() -> None:
    clock = FakeClock()
    q = _queue(clock, name="join-on-drain")
    q.add_after("foo", 5)
    wait_for(clock.has_waiters)
    (thread,) = _waiting_threads("join-on-drain")

    q.shut_down_with_drain()

    assert not thread.is_alive()
    assert not clock.has_waiters()


class DeadlineRecordingClock(FakeClock):
    """A FakeClock that records the deadlines the waiting thread sleeps until."""

    def __init__(self) -> None:
        super().__init__()
        self.deadlines: list[float] = []

    def wait_until(self, cond: threading.Condition, deadline: float) -> bool:
        self.deadlines.append(deadline)
        return super().wait_until(cond, deadline)


def test_the_heartbeat_bounds_every_wait_to_ten_seconds() -> None:
    clock = DeadlineRecordingClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("far", 60)
    wait_for(lambda: clock.has_waiters() and clock.deadlines[-1] == MAX_WAIT)

    clock.step(MAX_WAIT)

    wait_for(lambda: clock.has_waiters() and clock.deadlines[-1] == 2 * MAX_WAIT)
    assert len(q) == 0
    q.shut_down()


def test_the_waiting_thread_sleeps_until_the_earliest_item() -> None:
    clock = DeadlineRecordingClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("late", 3)
    q.add_after("early", 2)

    wait_for(lambda: clock.has_waiters() and clock.deadlines[-1] == 2.0)
    q.shut_down()


def test_many_items_become_ready_in_order_of_their_time() -> None:
    clock = FakeClock()
    q = _queue(clock)
    delays = {f"item-{i}": (i * 7919 % 100) / 10 + 0.1 for i in range(100)}
    for item, delay in delays.items():
        q.add_after(item, delay)

    clock.step(11)
    wait_for(lambda: len(q) == 100)

    assert [q.get()[0] for _ in range(100)] == sorted(delays, key=delays.__getitem__)
    q.shut_down()


def test_shut_down_releases_the_items_still_waiting() -> None:
    class Item:
        pass

    clock = FakeClock()
    q: DelayingQueue[Item] = DelayingQueue(clock=clock)
    item = Item()
    ref = weakref.ref(item)
    q.add_after(item, 5)

    q.shut_down()
    del item
    gc.collect()

    assert ref() is None, "the delaying queue kept a reference to a dropped item"
