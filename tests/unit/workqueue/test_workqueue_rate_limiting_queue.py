"""The rate-limiting queue: client-go's rate_limiting_queue_test.go, plus forget versus done."""

from __future__ import annotations

from workqueue_test_support import stays, wait_for

from workqueue import (
    FakeClock,
    ItemExponentialFailureRateLimiter,
    RateLimiter,
    RateLimitingQueue,
)


class RecordingRateLimitingQueue(RateLimitingQueue[str]):
    """Records the delay of every add_after, as client-go's test reads them off waitingForAddCh."""

    def __init__(self, limiter: RateLimiter[str], clock: FakeClock) -> None:
        super().__init__(limiter, clock=clock)
        self.delays: list[float] = []

    def add_after(self, item: str, seconds: float) -> None:
        self.delays.append(seconds)
        super().add_after(item, seconds)


def test_rate_limiting_queue() -> None:
    limiter = ItemExponentialFailureRateLimiter[str](0.001, 1.0)
    q = RecordingRateLimitingQueue(limiter, FakeClock())

    q.add_rate_limited("one")
    assert q.delays[-1] == 0.001
    q.add_rate_limited("one")
    assert q.delays[-1] == 0.002
    assert q.num_requeues("one") == 2

    q.add_rate_limited("two")
    assert q.delays[-1] == 0.001
    q.add_rate_limited("two")
    assert q.delays[-1] == 0.002

    q.forget("one")
    assert q.num_requeues("one") == 0
    q.add_rate_limited("one")
    assert q.delays[-1] == 0.001
    q.shut_down()


def _queue(clock: FakeClock) -> RateLimitingQueue[str]:
    return RateLimitingQueue(ItemExponentialFailureRateLimiter(0.001, 1.0), clock=clock)


def test_add_rate_limited_makes_the_item_ready_after_the_limiters_delay() -> None:
    clock = FakeClock()
    q = _queue(clock)
    q.add_rate_limited("one")  # 1 ms
    q.add_rate_limited("one")  # 2 ms, merged into the 1 ms entry: earliest wins

    clock.step(0.0009)
    assert stays(lambda: len(q) == 0)
    clock.step(0.0001)
    wait_for(lambda: len(q) == 1)
    q.shut_down()


def test_num_requeues_counts_limiter_calls_not_actual_requeues() -> None:
    clock = FakeClock()
    q = _queue(clock)
    for _ in range(3):
        q.add_rate_limited("one")

    clock.step(1)
    wait_for(lambda: len(q) == 1)

    assert q.num_requeues("one") == 3
    q.shut_down()


def test_forget_only_clears_the_history_and_leaves_the_item_queued() -> None:
    q = _queue(FakeClock())
    q.add("one")
    q.add_rate_limited("one")

    q.forget("one")

    assert q.num_requeues("one") == 0
    assert len(q) == 1
    q.shut_down()


def test_forget_does_not_replace_done() -> None:
    q = _queue(FakeClock())
    q.add("one")
    item, _ = q.get()
    q.forget(item)

    q.add("one")
    assert len(q) == 0, "forget released an item that is still processing"
    q.done(item)
    assert len(q) == 1
    q.shut_down()


def test_add_rate_limited_records_a_failure_even_while_shutting_down() -> None:
    q = _queue(FakeClock())
    q.shut_down()

    q.add_rate_limited("one")

    assert q.num_requeues("one") == 1
    assert len(q) == 0


def test_a_rate_limiting_queue_is_a_delaying_queue() -> None:
    clock = FakeClock()
    q = _queue(clock)

    q.add_after("one", 0.5)
    clock.step(0.5)

    wait_for(lambda: len(q) == 1)
    q.shut_down()
