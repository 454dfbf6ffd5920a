"""How a controller stops: a drain on SIGTERM, a hard stop on lease loss or a passed deadline.

The rule under test: once the stop is hard, no worker starts another sync, because another
replica may already be the leader and writing. A drain still syncs what is queued, within its
deadline. Worker joins share one deadline, so N stuck workers cost one grace period, not N.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable

import pytest

from jobflow_controller import framework
from jobflow_controller.framework import QueueController


class RecordingController:
    """Records every sync; a sync of an item in `block` waits on `release` first."""

    def __init__(self, *, max_requeue_num: int = 15) -> None:
        self.workers = QueueController(
            "recording", "recording", self.sync_handler, self.on_dropped, max_requeue_num=max_requeue_num
        )
        self.queue, self.run_workers, self.must_stop_now = (
            self.workers.queue,
            self.workers.run_workers,
            self.workers.must_stop_now,
        )
        self.synced: list[Hashable] = []
        self.dropped: list[Hashable] = []
        self.block: set[Hashable] = set()
        self.release = threading.Event()
        self.entered = threading.Event()
        self.fail: set[Hashable] = set()
        self._mu = threading.Lock()

    def sync_handler(self, req: Hashable) -> None:
        with self._mu:
            self.synced.append(req)
        if req in self.block:
            self.entered.set()
            self.release.wait(10)
        if req in self.fail:
            raise RuntimeError(f"sync of {req} failed")

    def on_dropped(self, req: Hashable, err: BaseException) -> None:
        self.dropped.append(req)


def _run(ctrl: RecordingController, stop: threading.Event, workers: int, **kwargs: object) -> threading.Thread:
    thread = threading.Thread(
        target=ctrl.run_workers,
        args=(stop, workers, lambda _stop: None),
        kwargs=kwargs,
        daemon=True,
    )
    thread.start()
    return thread


def _wait(condition: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.01)
    raise AssertionError("condition not met in time")


def test_a_drain_syncs_what_is_queued_before_the_workers_exit() -> None:
    ctrl = RecordingController()
    ctrl.block = {"first"}
    stop = threading.Event()
    runner = _run(ctrl, stop, 1, drain_timeout=5.0)
    ctrl.queue.add("first")
    assert ctrl.entered.wait(5)
    for i in range(3):
        ctrl.queue.add(f"queued-{i}")
    stop.set()
    ctrl.release.set()
    runner.join(5)
    assert not runner.is_alive()
    assert ctrl.synced == ["first", "queued-0", "queued-1", "queued-2"]


def test_after_a_hard_stop_no_queued_item_is_synced() -> None:
    ctrl = RecordingController()
    ctrl.block = {"first"}
    stop, hard_stop = threading.Event(), threading.Event()
    runner = _run(ctrl, stop, 1, drain_timeout=30.0, hard_stop=hard_stop)
    ctrl.queue.add("first")
    assert ctrl.entered.wait(5)
    ctrl.queue.add("queued")
    # The lease is lost while "first" is being synced: "queued" must never be synced.
    hard_stop.set()
    stop.set()
    ctrl.release.set()
    runner.join(5)
    assert not runner.is_alive()
    assert ctrl.synced == ["first"]


def test_a_hard_stop_alone_stops_the_workers_before_stop_is_set() -> None:
    ctrl = RecordingController()
    stop, hard_stop = threading.Event(), threading.Event()
    runner = _run(ctrl, stop, 2, drain_timeout=30.0, hard_stop=hard_stop)
    ctrl.queue.add("a")
    _wait(lambda: ctrl.synced == ["a"])
    hard_stop.set()
    runner.join(5)
    assert not runner.is_alive()
    ctrl.queue.add("b")
    time.sleep(0.1)
    assert ctrl.synced == ["a"]


def test_the_drain_deadline_turns_the_stop_hard() -> None:
    ctrl = RecordingController()
    ctrl.block = {"slow"}
    stop = threading.Event()
    runner = _run(ctrl, stop, 1, drain_timeout=0.2)
    ctrl.queue.add("slow")
    assert ctrl.entered.wait(5)
    ctrl.queue.add("after")
    started = time.monotonic()
    stop.set()
    # The drain's 0.2 s pass while "slow" still runs; it ends later, and "after" is not synced.
    time.sleep(0.5)
    ctrl.release.set()
    runner.join(5)
    assert not runner.is_alive()
    assert ctrl.synced == ["slow"]
    assert time.monotonic() - started < 2.0
    assert ctrl.must_stop_now()


def test_without_a_drain_nothing_queued_is_synced() -> None:
    ctrl = RecordingController()
    ctrl.block = {"first"}
    stop = threading.Event()
    runner = _run(ctrl, stop, 1)
    ctrl.queue.add("first")
    assert ctrl.entered.wait(5)
    ctrl.queue.add("queued")
    stop.set()
    ctrl.release.set()
    runner.join(5)
    assert ctrl.synced == ["first"]


def test_stuck_workers_share_one_grace_period(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(framework, "IN_FLIGHT_SYNC_GRACE", 0.3)
    ctrl = RecordingController()
    ctrl.block = {"a", "b", "c", "d"}
    stop = threading.Event()
    runner = _run(ctrl, stop, 4, drain_timeout=0.2)
    for item in ("a", "b", "c", "d"):
        ctrl.queue.add(item)
    _wait(lambda: len(ctrl.synced) == 4)
    started = time.monotonic()
    stop.set()
    runner.join(5)
    elapsed = time.monotonic() - started
    ctrl.release.set()
    # One drain (0.2 s) plus one shared grace (0.3 s); four workers joined one by one with their
    # own timeouts would have taken 4 x 0.3 s.
    assert not runner.is_alive()
    assert elapsed < 0.9, elapsed


def test_a_sync_that_fails_after_the_hard_stop_is_neither_retried_nor_dropped() -> None:
    ctrl = RecordingController(max_requeue_num=0)
    ctrl.block = {"x"}
    ctrl.fail = {"x"}
    stop, hard_stop = threading.Event(), threading.Event()
    runner = _run(ctrl, stop, 1, drain_timeout=30.0, hard_stop=hard_stop)
    ctrl.queue.add("x")
    assert ctrl.entered.wait(5)
    hard_stop.set()
    ctrl.release.set()
    stop.set()
    runner.join(5)
    # With max_requeue_num 0 a failure would drop the request with a Warning at once; a sync cut
    # short by the stop is not the object's failure, so no Warning is recorded.
    assert ctrl.dropped == []
    assert ctrl.synced == ["x"]
