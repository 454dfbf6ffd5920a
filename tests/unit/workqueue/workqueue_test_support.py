"""Helpers shared by the workqueue tests: polling waits, a metrics provider that records, and a
priority storage that records the lane each item was handed out from."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from workqueue import FairShare, PriorityStorage, Queue

T = TypeVar("T", bound=Hashable)

POLL_INTERVAL = 0.001
WAIT_TIMEOUT = 5.0
#: How long "nothing happens" is watched for. Short, because it is pure waiting.
QUIET_PERIOD = 0.03


def wait_for(predicate: Callable[[], bool], timeout: float = WAIT_TIMEOUT) -> None:
    """Poll ``predicate`` every millisecond (as client-go's delaying-queue tests do) until it holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(POLL_INTERVAL)


def stays(predicate: Callable[[], bool], period: float = QUIET_PERIOD) -> bool:
    """True if ``predicate`` holds at every poll during ``period``."""
    deadline = time.monotonic() + period
    while time.monotonic() < deadline:
        if not predicate():
            return False
        time.sleep(POLL_INTERVAL)
    return predicate()


def start_thread(target: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


class FakeGauge:
    def __init__(self) -> None:
        self.value = 0.0
        self.sets = 0
        self.notify = threading.Event()

    def inc(self) -> None:
        self.value += 1

    def dec(self) -> None:
        self.value -= 1

    def set(self, value: float, /) -> None:
        self.value = value
        self.sets += 1
        self.notify.set()


class FakeCounter:
    def __init__(self) -> None:
        self.value = 0.0

    def inc(self) -> None:
        self.value += 1


class FakeHistogram:
    def __init__(self) -> None:
        self.last: float | None = None
        self.count = 0

    def observe(self, value: float, /) -> None:
        self.last = value
        self.count += 1


class RecordingMetricsProvider:
    """Like client-go's testMetricsProvider: one metric of each kind, shared by every queue name."""

    def __init__(self) -> None:
        self.depth = FakeGauge()
        self.adds = FakeCounter()
        self.latency = FakeHistogram()
        self.duration = FakeHistogram()
        self.unfinished = FakeGauge()
        self.longest = FakeGauge()
        self.retries = FakeCounter()
        self.requested: list[tuple[str, str]] = []

    def new_depth_metric(self, name: str) -> FakeGauge:
        self.requested.append(("depth", name))
        return self.depth

    def new_adds_metric(self, name: str) -> FakeCounter:
        self.requested.append(("adds", name))
        return self.adds

    def new_latency_metric(self, name: str) -> FakeHistogram:
        self.requested.append(("latency", name))
        return self.latency

    def new_work_duration_metric(self, name: str) -> FakeHistogram:
        self.requested.append(("work_duration", name))
        return self.duration

    def new_unfinished_work_seconds_metric(self, name: str) -> FakeGauge:
        self.requested.append(("unfinished_work_seconds", name))
        return self.unfinished

    def new_longest_running_processor_seconds_metric(self, name: str) -> FakeGauge:
        self.requested.append(("longest_running_processor_seconds", name))
        return self.longest

    def new_retries_metric(self, name: str) -> FakeCounter:
        self.requested.append(("retries", name))
        return self.retries


class RecordingPriorityStorage(PriorityStorage[T]):
    """A ``PriorityStorage`` that remembers the lane each item it hands out came from, until it is done.

    What controller-runtime's ``GetWithPriority`` tells a worker, kept for tests (the runtime has no
    use for it): they ask ``priority_handed_out`` to see an item leave the lane they expect. A
    storage sees ``pop`` but not the queue's ``done``, so ``attach`` wraps the queue's ``done``.
    """

    def __init__(
        self,
        shares: dict[int, int] | None = None,
        tenant_of: Callable[[T], Hashable] | None = None,
        fair_share: FairShare | None = None,
    ) -> None:
        super().__init__(shares, tenant_of, fair_share)
        self._lane_of: dict[T, int] = {}
        self._guard = threading.Lock()

    def pop(self) -> T:
        # The lane whose live count went down is the one the item came from (a share may pick a
        # lower lane than the highest holding items).
        before = dict(self._counts)
        item = super().pop()  # IndexError when empty
        (lane,) = [p for p, n in self._counts.items() if n == before.get(p, 0) - 1]
        with self._guard:
            self._lane_of[item] = lane
        return item

    def handed_out_from(self, item: T) -> int | None:
        """The lane `item` was handed out from, while it is (None: it is not in flight)."""
        with self._guard:
            return self._lane_of.get(item)

    def attach(self, queue: Queue[T]) -> None:
        """Make `queue`, built on this storage, forget an item's lane when the item is done.

        Wraps this one queue's ``done``. The lane is forgotten before the queue's own ``done``,
        while the item is still processing, so it cannot have been handed out again meanwhile.
        """
        _attached[queue] = self
        done = queue.done

        def done_and_forget(item: T) -> None:
            with self._guard:
                self._lane_of.pop(item, None)
            done(item)

        queue.done = done_and_forget  # type: ignore[method-assign]


#: The recording storage attached to each queue (weakly: a queue dropped by its test is forgotten).
_attached: weakref.WeakKeyDictionary[Queue[Any], RecordingPriorityStorage[Any]] = weakref.WeakKeyDictionary()


def recording_queue() -> tuple[Queue[Hashable], RecordingPriorityStorage[Hashable]]:
    """A ``Queue`` on a ``RecordingPriorityStorage`` attached to it."""
    storage: RecordingPriorityStorage[Hashable] = RecordingPriorityStorage()
    queue: Queue[Hashable] = Queue(queue=storage)
    storage.attach(queue)
    return queue, storage


def priority_handed_out(queue: Queue[T], item: T) -> int | None:
    """The lane `item` was handed out from while a worker holds it; None otherwise, or when `queue`
    has no ``RecordingPriorityStorage`` attached (a FIFO queue has no lanes)."""
    storage = _attached.get(queue)
    return None if storage is None else storage.handed_out_from(item)
