"""Priority lanes (priority.py): what changes against the FIFO queue, and what must not."""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable

import pytest
from workqueue_test_support import priority_handed_out, recording_queue

from workqueue import (
    DEFAULT_PRIORITY,
    DelayingQueue,
    FakeClock,
    PriorityStorage,
    Queue,
    RateLimitingQueue,
    default_controller_rate_limiter,
)

HIGH, LOW = 10, -10


def _queue() -> Queue[Hashable]:
    return Queue(queue=PriorityStorage())


def _drain(q: Queue[Hashable]) -> list[Hashable]:
    out = []
    while len(q):
        item, shutdown = q.get(timeout=1)
        assert not shutdown
        out.append(item)
        q.done(item)
    return out


def test_the_highest_lane_goes_first_and_each_lane_is_first_in_first_out() -> None:
    q = _queue()
    q.add_with_priority("low-1", LOW)
    q.add("default-1")
    q.add_with_priority("high-1", HIGH)
    q.add_with_priority("low-2", LOW)
    q.add_with_priority("high-2", HIGH)
    q.add("default-2")

    assert _drain(q) == ["high-1", "high-2", "default-1", "default-2", "low-1", "low-2"]


def test_a_queued_item_moves_up_to_the_back_of_a_higher_lane_and_never_down() -> None:
    q = _queue()
    q.add_with_priority("a", LOW)
    q.add_with_priority("b", LOW)
    q.add("c")
    q.add_with_priority("a", HIGH)  # up
    q.add_with_priority("c", LOW)  # not down
    q.add("b")  # a plain add is the default priority: up from LOW

    assert len(q) == 3  # moved, not copied
    assert _drain(q) == ["a", "c", "b"]


def test_an_item_added_again_while_in_flight_comes_back_in_the_highest_lane_asked_for() -> None:
    q, _ = recording_queue()
    q.add_with_priority("a", LOW)
    item, _ = q.get(timeout=1)
    assert priority_handed_out(q, item) == LOW
    q.add_with_priority("a", LOW)
    q.add_with_priority("a", HIGH)
    q.add("x")
    assert len(q) == 1  # stingy: "a" is not handed out twice at once
    q.done("a")

    assert priority_handed_out(q, "a") is None
    assert _drain(q) == ["a", "x"]


def test_a_recording_storage_knows_the_lane_each_item_in_flight_came_from() -> None:
    """Test support (workqueue_test_support.py): the runtime does not tell a worker its lane."""
    q, _ = recording_queue()
    q.add_with_priority("a", HIGH)
    q.add("b")
    a, _ = q.get(timeout=1)
    b, _ = q.get(timeout=1)
    assert (priority_handed_out(q, a), priority_handed_out(q, b)) == (HIGH, DEFAULT_PRIORITY)
    q.done(a)
    q.done(b)
    assert priority_handed_out(q, a) is None


def test_without_priority_storage_the_queue_stays_fifo_and_knows_no_lanes() -> None:
    q: Queue[Hashable] = Queue()
    q.add_with_priority("a", LOW)
    q.add_with_priority("b", HIGH)
    item, _ = q.get(timeout=1)
    assert item == "a"
    assert priority_handed_out(q, item) is None


def test_add_after_lands_in_the_lane_asked_for_keeping_the_earliest_time_and_highest_priority() -> None:
    clock = FakeClock()
    q: DelayingQueue[Hashable] = DelayingQueue(clock=clock, queue=PriorityStorage())
    try:
        q.add("plain")
        q.add_after("a", 2.0, priority=LOW)
        q.add_after("a", 5.0, priority=HIGH)  # later, but more urgent: the priority is kept
        q.add_after("b", 1.0, priority=LOW)
        clock.step(2.0)
        _wait_for(lambda: len(q) == 3)

        assert _drain(q) == ["a", "plain", "b"]
    finally:
        q.shut_down()


def test_a_plain_add_after_of_an_item_waiting_for_a_low_lane_brings_it_back_in_the_default_lane() -> None:
    clock = FakeClock()
    q: DelayingQueue[Hashable] = DelayingQueue(clock=clock, queue=PriorityStorage())
    try:
        q.add_after("a", 1.0, priority=LOW)
        q.add_after("a", 2.0)  # later: the time stays, the priority rises to the default
        q.add_with_priority("b", LOW)
        clock.step(1.0)
        _wait_for(lambda: len(q) == 2)
        assert _drain(q) == ["a", "b"]
    finally:
        q.shut_down()


def test_a_rate_limited_retry_comes_back_in_the_default_lane() -> None:
    clock = FakeClock()
    q: RateLimitingQueue[Hashable] = RateLimitingQueue(
        default_controller_rate_limiter(), clock=clock, queue=PriorityStorage()
    )
    try:
        q.add_with_priority("low", LOW)
        q.add_rate_limited("retry")
        clock.step(1.0)
        _wait_for(lambda: len(q) == 2)
        assert _drain(q) == ["retry", "low"]
    finally:
        q.shut_down()


@pytest.mark.parametrize("drain", [True, False], ids=["shut_down_with_drain", "shut_down"])
def test_shutting_down_still_hands_out_every_lane(drain: bool) -> None:
    q = _queue()
    q.add_with_priority("low", LOW)
    q.add_with_priority("high", HIGH)
    q.add("default")
    in_flight, _ = q.get(timeout=1)
    stopper = threading.Thread(target=q.shut_down_with_drain if drain else q.shut_down)
    stopper.start()
    got = []
    while True:
        item, shutdown = q.get(timeout=1)
        if shutdown:
            break
        got.append(item)
        q.done(item)
        if len(got) == 2:
            q.done(in_flight)
    stopper.join(2)
    assert not stopper.is_alive()
    assert [in_flight, *got] == ["high", "default", "low"]


def test_a_pop_from_an_empty_storage_is_an_error() -> None:
    with pytest.raises(IndexError):
        PriorityStorage[str]().pop()


def _wait_for(condition: object, timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


# -- lane shares (ours: controller-runtime's lanes are strict) -------------------------------------


@pytest.mark.parametrize(
    ("shares", "expected"),
    [
        # Strict lanes: the default lane waits for every item of the higher one.
        ({}, ["h1", "h2", "h3", "h4", "h5", "d1", "d2"]),
        # One pop in 3 for the default lane while it holds items: h, h, d, h, h, d, then what is left.
        ({DEFAULT_PRIORITY: 3}, ["h1", "h2", "d1", "h3", "h4", "d2", "h5"]),
        # One pop in 2.
        ({DEFAULT_PRIORITY: 2}, ["h1", "d1", "h2", "d2", "h3", "h4", "h5"]),
        # A share for the low lane only: the default lane is still strict below the high one.
        ({LOW: 2}, ["h1", "h2", "h3", "h4", "h5", "d1", "d2"]),
    ],
)
def test_a_lane_with_a_share_gets_one_pop_in_n_while_the_lanes_above_stay_busy(
    shares: dict[int, int], expected: list[str]
) -> None:
    q: Queue[Hashable] = Queue(queue=PriorityStorage(shares))
    q.add("d1")
    q.add("d2")
    for i in range(1, 6):
        q.add_with_priority(f"h{i}", HIGH)
    assert _drain(q) == expected


def test_a_share_counts_only_the_pops_that_passed_over_a_waiting_lane() -> None:
    q: Queue[Hashable] = Queue(queue=PriorityStorage({DEFAULT_PRIORITY: 3}))
    for i in range(1, 4):
        q.add_with_priority(f"h{i}", HIGH)
    assert _drain(q) == ["h1", "h2", "h3"]  # no default item waited: nothing owed to it
    q.add("d1")
    for i in range(4, 7):
        q.add_with_priority(f"h{i}", HIGH)
    assert _drain(q) == ["h4", "h5", "d1", "h6"]


def test_a_share_below_two_is_refused() -> None:
    with pytest.raises(ValueError, match="N >= 2"):
        PriorityStorage({DEFAULT_PRIORITY: 1})


# -- tenants take turns within a lane ------------------------------------------------------------


def _tenant_queue(shares: dict[int, int] | None = None) -> Queue[Hashable]:
    """Items are "tenant/name" strings; the tenant is what comes before the slash."""
    return Queue(queue=PriorityStorage(shares, tenant_of=lambda item: str(item).split("/", 1)[0]))


@pytest.mark.parametrize(
    ("adds", "handed_out"),
    [
        pytest.param(
            [("big/1", 0), ("big/2", 0), ("big/3", 0), ("small/1", 0)],
            ["big/1", "small/1", "big/2", "big/3"],
            id="a newly ready tenant waits one pop per other tenant, not behind the backlog",
        ),
        pytest.param(
            [("a/1", 0), ("a/2", 0), ("b/1", 0), ("b/2", 0), ("c/1", 0)],
            ["a/1", "b/1", "c/1", "a/2", "b/2"],
            id="three tenants in turn, each FIFO",
        ),
        pytest.param(
            [("big/1", 0), ("big/2", 0), ("small/1", HIGH), ("big/3", HIGH)],
            ["small/1", "big/3", "big/1", "big/2"],
            id="lanes first, turns within a lane",
        ),
        pytest.param(
            [("one/1", 0), ("one/2", 0), ("one/3", 0)],
            ["one/1", "one/2", "one/3"],
            id="one tenant alone is FIFO",
        ),
    ],
)
def test_tenants_take_turns_within_a_lane(adds: list[tuple[str, int]], handed_out: list[str]) -> None:
    q = _tenant_queue()
    for item, priority in adds:
        q.add_with_priority(item, priority)

    assert _drain(q) == handed_out


def test_an_item_moved_up_leaves_its_tenants_turn_in_the_old_lane_to_the_others() -> None:
    q = _tenant_queue()
    q.add("a/1")
    q.add("b/1")
    q.add("a/2")
    q.add_with_priority("a/1", HIGH)  # a's only live entry of the default lane is now a/2
    q.add_with_priority("a/2", HIGH)  # a has none left there: b's turn comes first

    assert _drain(q) == ["a/1", "a/2", "b/1"]


def test_a_tenant_served_and_ready_again_joins_the_back_of_the_turns() -> None:
    q = _tenant_queue()
    q.add("big/1")
    q.add("big/2")
    item, _ = q.get(timeout=1)
    q.add("small/1")
    q.done(item)
    q.add("big/1")  # the big tenant's next slice, queued again after its sync

    assert item == "big/1"
    assert _drain(q) == ["big/2", "small/1", "big/1"]


def test_the_default_lanes_share_counts_pops_whatever_the_tenants() -> None:
    q = _tenant_queue({DEFAULT_PRIORITY: 2})
    for item in ("x/1", "y/1", "x/2"):
        q.add_with_priority(item, HIGH)
    q.add("new/1")

    assert _drain(q) == ["x/1", "new/1", "y/1", "x/2"]
