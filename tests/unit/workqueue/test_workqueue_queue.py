"""The base queue: client-go's queue_test.go, plus the contract points it leaves implicit."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Callable, Hashable

import pytest
from workqueue_test_support import QUIET_PERIOD, start_thread

from workqueue import Queue, QueueStorage, default_queue

ShutDown = Callable[[Queue[Hashable]], None]

SHUTDOWNS = [
    pytest.param(Queue.shut_down, id="shut_down"),
    pytest.param(Queue.shut_down_with_drain, id="shut_down_with_drain"),
]


class TraceStorage:
    """client-go's traceQueue: the default FIFO, recording which items were touched."""

    def __init__(self) -> None:
        self._inner: QueueStorage[Hashable] = default_queue()
        self.touched: set[Hashable] = set()

    def touch(self, item: Hashable) -> None:
        self.touched.add(item)
        self._inner.touch(item)

    def push(self, item: Hashable) -> None:
        self._inner.push(item)

    def pop(self) -> Hashable:
        return self._inner.pop()

    def __len__(self) -> int:
        return len(self._inner)


@pytest.mark.parametrize("shut_down", SHUTDOWNS)
def test_basic(shut_down: ShutDown) -> None:
    q: Queue[Hashable] = Queue()
    got_late_item = threading.Event()

    def produce(i: int) -> None:
        for _ in range(50):
            q.add(i)
            time.sleep(0.001)

    def consume() -> None:
        while True:
            item, quit_ = q.get()
            if item == "added after shutdown!":
                got_late_item.set()
            if quit_:
                return
            time.sleep(0.003)
            q.done(item)

    producers = [threading.Thread(target=produce, args=(i,)) for i in range(50)]
    consumers = [threading.Thread(target=consume) for _ in range(10)]
    for t in producers + consumers:
        t.start()
    for t in producers:
        t.join()
    shut_down(q)
    q.add("added after shutdown!")
    for t in consumers:
        t.join(timeout=10)
        assert not t.is_alive()

    assert not got_late_item.is_set()
    assert len(q) == 0


@pytest.mark.parametrize("shut_down", SHUTDOWNS)
def test_add_while_processing(shut_down: ShutDown) -> None:
    q: Queue[Hashable] = Queue()

    def consume() -> None:
        # Every worker re-adds each item it gets until it has seen it twice: dirty while processing.
        counters: dict[Hashable, int] = {}
        while True:
            item, quit_ = q.get()
            if quit_:
                return
            counters[item] = counters.get(item, 0) + 1
            if counters[item] < 2:
                q.add(item)
            q.done(item)

    producers = [threading.Thread(target=q.add, args=(i,)) for i in range(50)]
    consumers = [threading.Thread(target=consume) for _ in range(10)]
    for t in producers + consumers:
        t.start()
    for t in producers:
        t.join()
    shut_down(q)
    for t in consumers:
        t.join(timeout=10)
        assert not t.is_alive()

    assert len(q) == 0


def test_len() -> None:
    q: Queue[str] = Queue()
    q.add("foo")
    assert len(q) == 1
    q.add("bar")
    assert len(q) == 2
    q.add("foo")  # already queued
    assert len(q) == 2


def test_reinsert() -> None:
    q: Queue[str] = Queue()
    q.add("foo")
    item, _ = q.get()
    assert item == "foo"
    q.add(item)
    q.done(item)

    again, _ = q.get()
    assert again == "foo"
    q.done(again)
    assert len(q) == 0


def test_collapse() -> None:
    storage = TraceStorage()
    q: Queue[Hashable] = Queue(queue=storage)
    q.add("bar")
    q.add("bar")

    item, _ = q.get()
    assert item == "bar"
    q.done(item)

    assert len(q) == 0
    assert "bar" in storage.touched


def test_collapse_while_processing() -> None:
    storage = TraceStorage()
    q: Queue[Hashable] = Queue(queue=storage)
    q.add("foo")
    first, _ = q.get()
    q.add("foo")
    q.add("foo")
    second_got: list[Hashable] = []
    got = threading.Event()

    def other_worker() -> None:
        item, _ = q.get()
        second_got.append(item)
        got.set()
        q.done(item)

    worker = start_thread(other_worker)
    # The other worker must stay blocked: foo is still being processed by the first one.
    assert not got.wait(QUIET_PERIOD)
    q.done(first)
    worker.join(timeout=5)

    assert second_got == ["foo"]
    assert len(q) == 0
    assert "foo" not in storage.touched


def test_queue_drainage_using_shut_down_with_drain() -> None:
    q: Queue[str] = Queue()
    q.add("foo")
    q.add("bar")
    first, _ = q.get()
    second, _ = q.get()

    drainer = start_thread(q.shut_down_with_drain)
    shutting_down = False
    while not shutting_down:
        _, shutting_down = q.get()
    assert drainer.is_alive(), "drain returned while items were still processing"

    q.done(first)
    q.done(second)
    drainer.join(timeout=5)
    assert not drainer.is_alive()


def test_no_queue_drainage_using_shut_down() -> None:
    q: Queue[str] = Queue()
    q.add("foo")
    q.add("bar")
    q.get()
    q.get()

    stopper = start_thread(q.shut_down)
    stopper.join(timeout=5)

    assert not stopper.is_alive(), "shut_down waited for in-flight items"


def test_force_queue_shutdown_using_shut_down() -> None:
    q: Queue[str] = Queue()
    q.add("foo")
    q.add("bar")
    q.get()
    q.get()

    drainer = start_thread(q.shut_down_with_drain)
    shutting_down = False
    while not shutting_down:
        _, shutting_down = q.get()
    # A second signal: ShutDown forces the blocked drain to return.
    q.shut_down()
    drainer.join(timeout=5)

    assert not drainer.is_alive()


def test_queue_drainage_using_shut_down_with_drain_with_dirty_item() -> None:
    q: Queue[str] = Queue()
    q.add("foo")
    gotten, _ = q.get()
    q.add("foo")

    drainer = start_thread(q.shut_down_with_drain)
    shutting_down = False
    while not shutting_down:
        _, shutting_down = q.get()

    q.done(gotten)
    # done() re-queued the dirty item, so it is handed out again despite the shutdown.
    again, shutting_down = q.get()
    assert again == "foo"
    assert not shutting_down
    q.done(again)
    drainer.join(timeout=5)
    assert not drainer.is_alive()

    _, shutting_down = q.get()
    assert shutting_down


def test_garbage_collection() -> None:
    class BigObject:
        def __init__(self) -> None:
            self.data = b"hello"

    q: Queue[BigObject] = Queue()
    obj = BigObject()
    ref = weakref.ref(obj)
    q.add(obj)
    item, _ = q.get()
    q.done(item)
    del obj, item
    gc.collect()

    assert ref() is None, "the queue kept a reference to a finished item"
    q.shut_down()


def test_items_are_handed_out_in_order_of_first_add() -> None:
    q: Queue[str] = Queue()
    for item in ["a", "b", "c", "a", "b"]:
        q.add(item)

    assert [q.get()[0] for _ in range(3)] == ["a", "b", "c"]


def test_an_item_is_never_handed_to_two_workers_at_once() -> None:
    q: Queue[int] = Queue()
    in_flight: set[int] = set()
    lock = threading.Lock()
    overlaps: list[int] = []

    def consume() -> None:
        while True:
            item, quit_ = q.get()
            if quit_:
                return
            with lock:
                if item in in_flight:
                    overlaps.append(item)
                in_flight.add(item)
            time.sleep(0.0005)
            with lock:
                in_flight.discard(item)
            q.done(item)

    consumers = [start_thread(consume) for _ in range(8)]
    for _ in range(100):
        for i in range(5):
            q.add(i)
    q.shut_down_with_drain()
    for t in consumers:
        t.join(timeout=10)

    assert overlaps == []


def test_add_while_processing_is_not_counted_in_len() -> None:
    q: Queue[str] = Queue()
    q.add("foo")
    item, _ = q.get()
    q.add("foo")

    assert len(q) == 0
    q.done(item)
    assert len(q) == 1


def test_get_blocks_until_an_item_is_added() -> None:
    q: Queue[str] = Queue()
    got: list[str] = []
    worker = start_thread(lambda: got.append(q.get()[0]))
    worker.join(QUIET_PERIOD)
    assert worker.is_alive()

    q.add("foo")
    worker.join(timeout=5)

    assert got == ["foo"]


def test_get_with_timeout_raises_timeout_error_when_nothing_is_ready() -> None:
    q: Queue[str] = Queue()

    with pytest.raises(TimeoutError):
        q.get(timeout=0.01)


def test_get_with_timeout_returns_a_ready_item() -> None:
    q: Queue[str] = Queue()
    q.add("foo")

    assert q.get(timeout=0.01) == ("foo", False)


def test_add_after_shut_down_is_silently_dropped() -> None:
    q: Queue[str] = Queue()
    q.shut_down()
    q.add("foo")

    assert len(q) == 0
    assert q.get() == (None, True)


def test_shut_down_still_hands_out_queued_items() -> None:
    q: Queue[str] = Queue()
    q.add("foo")
    q.add("bar")
    q.shut_down()

    assert q.get() == ("foo", False)
    assert q.get() == ("bar", False)
    assert q.get() == (None, True)


def test_shut_down_wakes_blocked_getters() -> None:
    q: Queue[str] = Queue()
    results: list[tuple[str, bool]] = []
    lock = threading.Lock()

    def get() -> None:
        result = q.get()
        with lock:
            results.append(result)

    getters = [start_thread(get) for _ in range(3)]
    q.shut_down()
    for t in getters:
        t.join(timeout=5)

    assert results == [(None, True)] * 3


def test_shut_down_with_drain_returns_at_once_when_nothing_is_processing() -> None:
    q: Queue[str] = Queue()
    q.add("foo")  # queued, not processing: not waited for

    drainer = start_thread(q.shut_down_with_drain)
    drainer.join(timeout=5)

    assert not drainer.is_alive()
    assert q.get() == ("foo", False)


def test_done_requeues_an_item_added_while_processing_even_after_shut_down() -> None:
    q: Queue[str] = Queue()
    q.add("foo")
    item, _ = q.get()
    q.add("foo")
    q.shut_down()

    q.done(item)

    assert q.get() == ("foo", False)


def test_shutting_down_reports_shutdown() -> None:
    q: Queue[str] = Queue()
    assert not q.shutting_down()

    q.shut_down()

    assert q.shutting_down()


def test_done_of_an_item_never_handed_out_is_harmless() -> None:
    q: Queue[str] = Queue()
    q.done("stranger")
    q.add("foo")

    assert q.get() == ("foo", False)


def test_an_empty_queue_is_truthy() -> None:
    q: Queue[str] = Queue()

    assert bool(q)


def test_items_may_be_any_hashable_value() -> None:
    q: Queue[Hashable] = Queue()
    key = ("default", "flow", "", "SyncJobFlow", "OutOfSync")
    q.add(key)
    q.add(("default", "flow", "", "SyncJobFlow", "OutOfSync"))
    q.add(None)

    assert len(q) == 2
    assert q.get() == (key, False)
    assert q.get() == (None, False)


def test_added_while_processing_is_true_only_for_an_item_added_again_while_handed_out() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    assert not q.added_while_processing("a")  # queued, not handed out
    item, _ = q.get()
    assert not q.added_while_processing(item)
    q.add("a")
    assert q.added_while_processing(item)
    q.done(item)
    assert not q.added_while_processing("a")  # queued again, not handed out
