"""The delaying queue (client-go ``util/workqueue/delaying_queue.go``): add an item after a delay.

Waiting items live in a min-heap ordered by the time they become ready, apart from the queue's own
``dirty`` set: an item can be waiting and queued at once, and when it becomes ready the ordinary
``add`` deduplicates it. One daemon thread owns the heap's deadlines: it adds every entry whose
ready time is at or before now (``ready_at <= now``), then waits until the earliest entry is due, a
new earlier entry arrives, or the 10 s heartbeat ticks. The heartbeat is client-go's insurance
against a missed wake-up: the loop never sleeps longer than ``MAX_WAIT`` without looking again.

Deduplication is earliest-wins: ``add_after`` of an item that is already waiting moves it only
earlier, never later, so a burst of retries cannot postpone work that is already scheduled.

Shutdown drops the items still waiting and stops and joins the waiting thread.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Hashable
from typing import Protocol, TypeVar

from workqueue.clock import Clock
from workqueue.metrics import DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD, MetricsProvider, new_retry_metrics
from workqueue.priority import DEFAULT_PRIORITY
from workqueue.queue import Interface, Queue, QueueStorage

__all__ = ["MAX_WAIT", "DelayingInterface", "DelayingQueue"]

T = TypeVar("T", bound=Hashable)

#: The heartbeat: the longest the waiting thread sleeps without re-checking (client-go ``maxWait``).
MAX_WAIT = 10.0


class DelayingInterface(Interface[T], Protocol[T]):
    """A queue that can also add an item later (client-go ``TypedDelayingInterface``)."""

    def add_after(self, item: T, seconds: float) -> None: ...


class DelayingQueue(Queue[T]):
    """A ``Queue`` plus ``add_after``; takes the same keywords as ``Queue``."""

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
        queue: QueueStorage[T] | None = None,
        unfinished_work_update_period: float = DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
    ) -> None:
        super().__init__(
            name=name,
            clock=clock,
            metrics_provider=metrics_provider,
            queue=queue,
            unfinished_work_update_period=unfinished_work_update_period,
        )
        self._retry_metrics = new_retry_metrics(metrics_provider, name)
        self._waiting_cond = threading.Condition(threading.Lock())
        # Heap of (ready_at, seq, item); seq breaks ties in arrival order and keeps items (which need
        # not be orderable) out of comparisons. An entry is live only while _waiting_entries maps its
        # item to its (ready_at, seq): moving an item earlier pushes a new entry, the old one goes stale.
        self._waiting: list[tuple[float, int, T]] = []
        self._waiting_entries: dict[T, tuple[float, int]] = {}
        # The priority a waiting item is added with when it is due; absent: the default.
        self._waiting_priority: dict[T, int] = {}
        self._seq = itertools.count()
        self._waiting_stopped = False
        first_heartbeat = self._clock.now() + MAX_WAIT
        self._waiting_thread = threading.Thread(
            target=self._waiting_loop,
            args=(first_heartbeat,),
            name=f"workqueue-delaying-{name}",
            daemon=True,
        )
        self._waiting_thread.start()

    def add_after(self, item: T, seconds: float, priority: int | None = None) -> None:
        """Add ``item`` once ``seconds`` have passed on the queue's clock.

        Ignored while shutting down. Every call counts as a retry in the metrics, including one with
        ``seconds <= 0``, which adds the item at once. `priority` is the lane it is added to then
        (``add_with_priority``; None: the default); an item waiting already keeps the earlier of
        the two times and the higher of the two priorities.
        """
        if self.shutting_down():
            return
        self._retry_metrics.retry()
        if seconds <= 0:
            self._add(item, priority)
            return
        ready_at = self._clock.now() + seconds
        with self._waiting_cond:
            if self._waiting_stopped:
                return
            if self._insert(item, ready_at, priority):
                # Only a new earliest deadline changes when the waiting thread must wake.
                self._waiting_cond.notify()

    def shut_down(self) -> None:
        super().shut_down()
        self._stop_waiting()

    def shut_down_with_drain(self) -> None:
        # client-go leaves the waiting goroutine to notice on its next wake-up (up to the 10 s
        # heartbeat); anything it would add then is dropped by the shut-down queue anyway, so
        # stopping it now changes nothing observable and leaves no thread behind.
        self._stop_waiting()
        super().shut_down_with_drain()

    def _insert(self, item: T, ready_at: float, priority: int | None) -> bool:
        """Schedule ``item`` unless it already waits for an earlier time; True if it is now first."""
        existing = self._waiting_entries.get(item)
        wanted = DEFAULT_PRIORITY if priority is None else priority
        if existing is None:
            if priority is not None:
                self._waiting_priority[item] = priority
        elif wanted > self._waiting_priority.get(item, DEFAULT_PRIORITY):
            self._waiting_priority[item] = wanted  # a plain add_after is the default priority
        if existing is not None and existing[0] <= ready_at:
            return False
        seq = next(self._seq)
        self._waiting_entries[item] = (ready_at, seq)
        heapq.heappush(self._waiting, (ready_at, seq, item))
        earliest = self._next_ready_at()
        return earliest is not None and ready_at <= earliest

    def _next_ready_at(self) -> float | None:
        heap = self._waiting
        entries = self._waiting_entries
        while heap:
            ready_at, seq, item = heap[0]
            live = entries.get(item)
            if live is not None and live[1] == seq:
                return ready_at
            heapq.heappop(heap)
        return None

    def _pop_ready(self, now: float) -> list[tuple[T, int | None]]:
        ready: list[tuple[T, int | None]] = []
        heap = self._waiting
        entries = self._waiting_entries
        while heap:
            ready_at, seq, item = heap[0]
            live = entries.get(item)
            if live is None or live[1] != seq:
                heapq.heappop(heap)
                continue
            if ready_at > now:
                break
            heapq.heappop(heap)
            del entries[item]
            ready.append((item, self._waiting_priority.pop(item, None)))
        return ready

    def _stop_waiting(self) -> None:
        with self._waiting_cond:
            self._waiting_stopped = True
            self._waiting.clear()
            self._waiting_entries.clear()
            self._waiting_priority.clear()
            self._waiting_cond.notify_all()
        if self._waiting_thread is not threading.current_thread():
            self._waiting_thread.join()

    def _waiting_loop(self, next_heartbeat: float) -> None:
        clock = self._clock
        cond = self._waiting_cond
        with cond:
            while not self._waiting_stopped and not self.shutting_down():
                now = clock.now()
                ready = self._pop_ready(now)
                if ready:
                    for item, priority in ready:
                        self._add(item, priority)
                    continue
                if now >= next_heartbeat:
                    next_heartbeat += MAX_WAIT * ((now - next_heartbeat) // MAX_WAIT + 1)
                deadline = next_heartbeat
                next_ready_at = self._next_ready_at()
                if next_ready_at is not None and next_ready_at < deadline:
                    deadline = next_ready_at
                clock.wait_until(cond, deadline)
