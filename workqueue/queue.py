"""The base work queue (client-go ``util/workqueue/queue.go``).

The contract controllers rely on, and why the queue is three collections rather than one:

* **fair**: items are handed out in the order they were first added;
* **stingy**: an item is never handed to two workers at once, and adding an item several times
  before a worker gets it yields one hand-out;
* **add while processing**: an item added while a worker holds it is handed out again after that
  worker calls ``done``, never concurrently with it.

So the queue keeps ``queue`` (ordered, ready to hand out), ``dirty`` (needs processing) and
``processing`` (handed out, not yet done). Every queued item is dirty and not processing; an item
can be dirty while processing, which ``len()`` does not count.

Shutdown never discards queued items: ``get`` keeps handing them out and reports shutdown only once
the queue is empty, so workers drain what was queued. Adds after shutdown are silently dropped.
``shut_down_with_drain`` additionally blocks until nothing is processing (not until the queue is
empty); a later ``shut_down`` releases it.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar, cast

from workqueue.clock import Clock, RealClock
from workqueue.metrics import (
    DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
    MetricsProvider,
    NoQueueMetrics,
    QueueMetrics,
    new_queue_metrics,
)
from workqueue.priority import PriorityStorage

__all__ = ["Interface", "Queue", "QueueStorage", "default_queue"]

T = TypeVar("T", bound=Hashable)


class QueueStorage(Protocol[T]):
    """The ordered part of the queue (client-go's pluggable ``Queue[T]``), always used under its lock.

    ``touch`` is called for a duplicate add of an item that is queued and not processing: a FIFO
    ignores it, a priority queue could use it to reorder.
    """

    def touch(self, item: T) -> None: ...

    def push(self, item: T) -> None: ...

    def pop(self) -> T: ...

    def __len__(self) -> int: ...


class _FifoStorage(Generic[T]):
    def __init__(self) -> None:
        self._items: deque[T] = deque()

    def touch(self, item: T) -> None:
        pass

    def push(self, item: T) -> None:
        self._items.append(item)

    def pop(self) -> T:
        # popleft drops the deque's reference, so a finished item can be garbage-collected.
        return self._items.popleft()

    def __len__(self) -> int:
        return len(self._items)


def default_queue() -> QueueStorage[T]:
    """The FIFO storage every queue uses unless given another (client-go ``DefaultQueue``)."""
    return _FifoStorage()


class Interface(Protocol[T]):
    """What a worker needs from a queue (client-go ``TypedInterface``); fakes can implement it."""

    def add(self, item: T) -> None: ...

    def __len__(self) -> int: ...

    def get(self, timeout: float | None = None) -> tuple[T, bool]: ...

    def done(self, item: T) -> None: ...

    def shut_down(self) -> None: ...

    def shut_down_with_drain(self) -> None: ...

    def shutting_down(self) -> bool: ...


class Queue(Generic[T]):
    """A fair, stingy, multi-producer multi-consumer work queue with shutdown notification.

    ``name`` is what the metrics are labelled with; an unnamed queue has no metrics. ``clock`` times
    the metrics. ``metrics_provider`` defaults to the global one (see ``workqueue.set_provider``).
    ``queue`` replaces the FIFO storage (client-go's pluggable ``Queue``), and
    ``unfinished_work_update_period`` the 0.5 s refresh of the unfinished-work gauges (tests use it,
    as client-go's tests do).
    """

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
        queue: QueueStorage[T] | None = None,
        unfinished_work_update_period: float = DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
    ) -> None:
        self._name = name
        self._clock: Clock = clock if clock is not None else RealClock()
        self._queue: QueueStorage[T] = queue if queue is not None else _FifoStorage()
        self._priorities: PriorityStorage[T] | None = queue if isinstance(queue, PriorityStorage) else None
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._lock = threading.Lock()
        # Two conditions over one lock, so that a wake-up meant for a getter is never spent on the
        # drainer or the reverse, as can happen when both wait on Go's single sync.Cond.
        self._cond = threading.Condition(self._lock)  # something queued, or shutting down
        self._drained = threading.Condition(self._lock)  # processing emptied, or drain cancelled
        self._shutting_down = False
        self._drain = False
        # Getters blocked in get(): notifying a condition nobody waits on still costs a lock probe.
        self._waiting_getters = 0

        metrics: QueueMetrics[T] | None = new_queue_metrics(metrics_provider, name, self._clock)
        self._metrics: QueueMetrics[T] = metrics if metrics is not None else NoQueueMetrics()
        self._updater_cond = threading.Condition(threading.Lock())
        self._updater_stopped = False
        self._updater: threading.Thread | None = None
        if metrics is not None:
            self._updater = threading.Thread(
                target=self._update_unfinished_work_loop,
                args=(unfinished_work_update_period,),
                name=f"workqueue-metrics-{name}",
                daemon=True,
            )
            self._updater.start()

    @property
    def name(self) -> str:
        return self._name

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing; a no-op if it already does or if shutting down."""
        self._add(item, None)

    def add_with_priority(self, item: T, priority: int) -> None:
        """``add`` in the lane of `priority` (controller-runtime's ``AddWithOpts(Priority)``).

        Only a queue built with a ``PriorityStorage`` has lanes; any other ignores `priority`. An
        item already queued moves up to a higher priority, never down (priority.py).
        """
        self._add(item, priority)

    def _add(self, item: T, priority: int | None) -> None:
        with self._lock:
            if self._shutting_down:
                return
            if self._priorities is not None:
                self._priorities.request(item, priority)
            if item in self._dirty:
                if item not in self._processing:
                    self._queue.touch(item)
                return
            self._metrics.add(item)
            self._dirty.add(item)
            if item in self._processing:
                # Handed out again by done(), so two workers never hold it at once.
                return
            self._queue.push(item)
            if self._waiting_getters:
                self._cond.notify()

    def added_while_processing(self, item: T) -> bool:
        """Whether ``item``, handed out and not done yet, was added again meanwhile.

        Not in client-go. The worker holding the item asks it just before a write: such an item
        will be handed out again after ``done``, and that run will compute the same write from
        newer state, so this one can be left to it.
        """
        with self._lock:
            return item in self._processing and item in self._dirty

    def __len__(self) -> int:
        """Items ready to hand out: neither in-flight items nor items dirty while in flight."""
        with self._lock:
            return len(self._queue)

    def __bool__(self) -> bool:
        # Defining __len__ would make an empty queue falsy, so ``queue or default`` would silently
        # replace a real, momentarily empty queue. A queue is an object, not a collection.
        return True

    def get(self, timeout: float | None = None) -> tuple[T, bool]:
        """Block until an item is ready, hand it out and mark it processing.

        Returns ``(item, False)``, or ``(None, True)`` once shutting down *and* empty: like Go's zero
        value, the item must not be used when the second element is True. The caller must call
        ``done(item)`` when finished. ``timeout`` (real seconds, not the queue's clock) is a guard
        for tests and tools: when it elapses with nothing ready, ``TimeoutError`` is raised.
        """
        with self._lock:
            if not len(self._queue) and not self._shutting_down:
                self._wait_for_item(timeout)
            if not len(self._queue):
                return cast(T, None), True
            item = self._queue.pop()
            self._metrics.get(item)
            self._processing.add(item)
            self._dirty.discard(item)
            return item, False

    def _wait_for_item(self, timeout: float | None) -> None:
        self._waiting_getters += 1
        try:
            if timeout is None:
                while not len(self._queue) and not self._shutting_down:
                    self._cond.wait()
                return
            deadline = time.monotonic() + timeout
            while not len(self._queue) and not self._shutting_down:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no item became ready within {timeout} s")
                self._cond.wait(min(remaining, threading.TIMEOUT_MAX))
        finally:
            self._waiting_getters -= 1

    def done(self, item: T) -> None:
        """Mark ``item`` finished; if it was added meanwhile it is queued again, even when shutting down."""
        with self._lock:
            self._metrics.done(item)
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.push(item)
                if self._waiting_getters:
                    self._cond.notify()
            if self._drain and not self._processing:
                self._drained.notify_all()

    def shut_down(self) -> None:
        """Stop accepting adds and make ``get`` report shutdown once the queue is empty.

        Queued items are still handed out; in-flight items are not waited for. Releases a blocked
        ``shut_down_with_drain``.
        """
        self._stop_updater()
        with self._lock:
            self._drain = False
            self._shutting_down = True
            self._cond.notify_all()
            self._drained.notify_all()
        self._join_updater()

    def shut_down_with_drain(self) -> None:
        """Like ``shut_down``, then block until no item is processing (or ``shut_down`` is called).

        It waits for the in-flight items only: queued items are not waited for, and if nothing is in
        flight at this moment it returns at once.
        """
        self._stop_updater()
        with self._lock:
            self._drain = True
            self._shutting_down = True
            self._cond.notify_all()
            while self._processing and self._drain:
                self._drained.wait()
        self._join_updater()

    def shutting_down(self) -> bool:
        with self._lock:
            return self._shutting_down

    def _stop_updater(self) -> None:
        with self._updater_cond:
            self._updater_stopped = True
            self._updater_cond.notify_all()

    def _join_updater(self) -> None:
        updater = self._updater
        if updater is not None and updater is not threading.current_thread():
            updater.join()

    def _update_unfinished_work_loop(self, period: float) -> None:
        # A ticker on the queue's clock: ticks at fixed multiples of the period from the start, and a
        # step over several periods fires once, as k8s.io/utils' fake ticker does.
        clock = self._clock
        next_tick = clock.now() + period
        with self._updater_cond:
            while not self._updater_stopped:
                clock.wait_until(self._updater_cond, next_tick)
                if self._updater_stopped:
                    return
                now = clock.now()
                if now < next_tick:
                    continue
                next_tick += period * (math.floor((now - next_tick) / period) + 1)
                with self._lock:
                    if not self._shutting_down:
                        self._metrics.update_unfinished_work()
