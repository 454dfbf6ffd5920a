"""Rate limiters: client-go's default_rate_limiters_test.go, plus the bucket's reserve semantics."""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workqueue import (
    INF_DURATION,
    BucketRateLimiter,
    FakeClock,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)

MS = 0.001
MINUTE = 60.0
HOUR = 3600.0


class StepRateLimiter:
    """client-go's test limiter: ``base_delay`` for the first ``threshold`` calls, then ``max_delay``."""

    def __init__(self, base_delay: float, max_delay: float, threshold: int) -> None:
        self.count = 0
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.threshold = threshold

    def when(self, item: Hashable) -> float:
        self.count += 1
        return self.base_delay if self.count <= self.threshold else self.max_delay

    def num_requeues(self, item: Hashable) -> int:
        return 0

    def forget(self, item: Hashable) -> None:
        pass


class RecordingRateLimiter:
    def __init__(self, delay: float, requeues: int = 0) -> None:
        self.delay = delay
        self.requeues = requeues
        self.whens: list[Hashable] = []
        self.forgotten: list[Hashable] = []

    def when(self, item: Hashable) -> float:
        self.whens.append(item)
        return self.delay

    def num_requeues(self, item: Hashable) -> int:
        return self.requeues

    def forget(self, item: Hashable) -> None:
        self.forgotten.append(item)


def test_item_exponential_failure_rate_limiter() -> None:
    limiter = ItemExponentialFailureRateLimiter[str](1 * MS, 1.0)

    assert [limiter.when("one") for _ in range(5)] == [1 * MS, 2 * MS, 4 * MS, 8 * MS, 16 * MS]
    assert limiter.num_requeues("one") == 5

    assert [limiter.when("two") for _ in range(2)] == [1 * MS, 2 * MS]
    assert limiter.num_requeues("two") == 2

    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 1 * MS


def test_item_exponential_failure_rate_limiter_overflow() -> None:
    limiter = ItemExponentialFailureRateLimiter[str](1 * MS, 1000.0)
    for _ in range(5):
        limiter.when("one")
    assert limiter.when("one") == 32 * MS
    for _ in range(1000):
        limiter.when("overflow1")
    assert limiter.when("overflow1") == 1000.0

    limiter = ItemExponentialFailureRateLimiter[str](1 * MINUTE, 1000 * HOUR)
    for _ in range(2):
        limiter.when("two")
    assert limiter.when("two") == 4 * MINUTE
    for _ in range(1000):
        limiter.when("overflow2")
    assert limiter.when("overflow2") == 1000 * HOUR


def test_exponential_first_delay_is_exactly_the_base() -> None:
    limiter = ItemExponentialFailureRateLimiter[str](0.005, 1000.0)

    assert limiter.when("one") == 0.005


def test_exponential_delay_is_clamped_to_the_maximum() -> None:
    limiter = ItemExponentialFailureRateLimiter[str](1.0, 10.0)

    assert [limiter.when("one") for _ in range(6)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_exponential_clamps_to_max_when_the_backoff_exceeds_the_longest_go_duration() -> None:
    # 2**34 s is past math.MaxInt64 ns: Go returns maxDelay there even when maxDelay is larger.
    limiter = ItemExponentialFailureRateLimiter[str](1.0, 1e12)
    for _ in range(34):
        limiter.when("one")

    assert limiter.when("one") == 1e12


@given(failures=st.integers(min_value=0, max_value=2000))
def test_exponential_delay_stays_between_base_and_max_after_any_number_of_failures(failures: int) -> None:
    limiter = ItemExponentialFailureRateLimiter[str](0.005, 1000.0)
    for _ in range(failures):
        limiter.when("one")

    delay = limiter.when("one")

    assert 0.005 <= delay <= 1000.0
    assert math.isfinite(delay)


def test_item_fast_slow_rate_limiter() -> None:
    limiter = ItemFastSlowRateLimiter[str](5 * MS, 10.0, 3)

    assert [limiter.when("one") for _ in range(5)] == [5 * MS, 5 * MS, 5 * MS, 10.0, 10.0]
    assert limiter.num_requeues("one") == 5

    assert [limiter.when("two") for _ in range(2)] == [5 * MS, 5 * MS]
    assert limiter.num_requeues("two") == 2

    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


def test_max_of_rate_limiter() -> None:
    limiter = MaxOfRateLimiter[str](
        ItemFastSlowRateLimiter(5 * MS, 3.0, 3),
        ItemExponentialFailureRateLimiter(1 * MS, 1.0),
    )

    assert [limiter.when("one") for _ in range(5)] == [5 * MS, 5 * MS, 5 * MS, 3.0, 3.0]
    assert limiter.num_requeues("one") == 5

    assert [limiter.when("two") for _ in range(2)] == [5 * MS, 5 * MS]
    assert limiter.num_requeues("two") == 2

    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


def test_with_max_wait_rate_limiter() -> None:
    limiter = WithMaxWaitRateLimiter[int](StepRateLimiter(5 * MS, 1000.0, 100), 500.0)

    assert [limiter.when(i) for i in range(100)] == [5 * MS] * 100
    assert [limiter.when(i) for i in range(100, 200)] == [500.0] * 100


def test_with_max_wait_delegates_num_requeues_and_forget() -> None:
    inner = RecordingRateLimiter(1.0, requeues=7)
    limiter = WithMaxWaitRateLimiter[str](inner, 0.5)

    limiter.forget("one")

    assert limiter.num_requeues("one") == 7
    assert inner.forgotten == ["one"]


def test_max_of_calls_every_limiter() -> None:
    first, second = RecordingRateLimiter(1.0), RecordingRateLimiter(2.0)
    limiter = MaxOfRateLimiter[str](first, second)

    assert limiter.when("one") == 2.0
    assert first.whens == ["one"]
    assert second.whens == ["one"]


def test_max_of_takes_a_bucket_token_even_when_the_backoff_dominates() -> None:
    bucket = BucketRateLimiter[str](10, 1, clock=FakeClock())
    limiter = MaxOfRateLimiter[str](ItemExponentialFailureRateLimiter(1.0, 1000.0), bucket)

    assert [limiter.when(f"item-{i}") for i in range(3)] == [1.0, 1.0, 1.0]
    assert bucket.when("probe") == pytest.approx(0.3)


def test_max_of_reports_the_largest_num_requeues() -> None:
    limiter = MaxOfRateLimiter[str](RecordingRateLimiter(0, requeues=2), RecordingRateLimiter(0, requeues=5))

    assert limiter.num_requeues("one") == 5


def test_max_of_forgets_in_every_limiter() -> None:
    first, second = RecordingRateLimiter(0), RecordingRateLimiter(0)
    MaxOfRateLimiter[str](first, second).forget("one")

    assert first.forgotten == ["one"]
    assert second.forgotten == ["one"]


def test_max_of_nothing_waits_nothing() -> None:
    assert MaxOfRateLimiter[str]().when("one") == 0.0


def test_bucket_starts_full_then_delays_grow_linearly() -> None:
    bucket = BucketRateLimiter[str](10, 100, clock=FakeClock())

    assert [bucket.when("x") for _ in range(100)] == [0.0] * 100
    assert [bucket.when("x") for _ in range(3)] == pytest.approx([0.1, 0.2, 0.3])


def test_bucket_never_rejects_and_delays_accumulate() -> None:
    bucket = BucketRateLimiter[str](10, 100, clock=FakeClock())

    delays = [bucket.when(f"item-{i}") for i in range(1000)]

    assert delays[-1] == pytest.approx((1000 - 100) / 10)
    assert all(b >= a for a, b in itertools.pairwise(delays))


def test_bucket_refills_at_qps_as_time_passes() -> None:
    clock = FakeClock()
    bucket = BucketRateLimiter[str](10, 100, clock=clock)
    for _ in range(103):
        bucket.when("x")  # 3 tokens in debt

    clock.step(1.0)  # +10 tokens

    assert [bucket.when("x") for _ in range(7)] == [0.0] * 7
    assert bucket.when("x") == pytest.approx(0.1)


def test_bucket_never_holds_more_than_burst_tokens() -> None:
    clock = FakeClock()
    bucket = BucketRateLimiter[str](10, 5, clock=clock)
    clock.step(3600)

    assert [bucket.when("x") for _ in range(5)] == [0.0] * 5
    assert bucket.when("x") == pytest.approx(0.1)


def test_bucket_forget_gives_no_token_back() -> None:
    bucket = BucketRateLimiter[str](10, 1, clock=FakeClock())
    bucket.when("x")

    bucket.forget("x")

    assert bucket.when("x") == pytest.approx(0.1)


def test_bucket_num_requeues_is_always_zero() -> None:
    bucket = BucketRateLimiter[str](10, 1, clock=FakeClock())
    for _ in range(5):
        bucket.when("x")

    assert bucket.num_requeues("x") == 0


def test_bucket_with_infinite_qps_never_delays() -> None:
    bucket = BucketRateLimiter[str](math.inf, 0, clock=FakeClock())

    assert [bucket.when("x") for _ in range(1000)] == [0.0] * 1000


def test_bucket_with_zero_burst_delays_forever() -> None:
    bucket = BucketRateLimiter[str](10, 0, clock=FakeClock())

    assert bucket.when("x") == INF_DURATION


def test_bucket_uses_the_real_clock_by_default() -> None:
    bucket = BucketRateLimiter[str](10, 1)
    bucket.when("x")

    assert bucket.when("x") == pytest.approx(0.1, abs=0.05)


def test_default_controller_rate_limiter_backs_off_5ms_doubling_to_1000s() -> None:
    limiter = default_controller_rate_limiter(clock=FakeClock())

    delays = [limiter.when("one") for _ in range(20)]

    assert delays[:18] == pytest.approx([0.005 * 2**k for k in range(18)])
    assert delays[17] == pytest.approx(655.36)
    assert delays[18:] == [1000.0, 1000.0]


def test_default_controller_rate_limiter_has_a_10_qps_burst_100_bucket() -> None:
    limiter = default_controller_rate_limiter(clock=FakeClock())

    delays = [limiter.when(f"item-{i}") for i in range(102)]

    assert delays[:100] == [0.005] * 100
    assert delays[100:] == pytest.approx([0.1, 0.2])


def test_default_item_based_rate_limiter_backs_off_1ms_doubling_to_1000s() -> None:
    limiter = default_item_based_rate_limiter()

    delays = [limiter.when("one") for _ in range(22)]

    assert delays[:20] == pytest.approx([0.001 * 2**k for k in range(20)])
    assert delays[20:] == [1000.0, 1000.0]


def test_the_bucket_delay_peeks_without_reserving() -> None:
    clock = FakeClock()
    bucket: BucketRateLimiter[str] = BucketRateLimiter(qps=1.0, burst=1, clock=clock)
    assert bucket.delay() == 0.0
    assert bucket.when("a") == 0.0
    assert bucket.delay() == pytest.approx(1.0)
    assert bucket.when("b") == pytest.approx(1.0)
    assert bucket.delay() == pytest.approx(2.0)
    assert BucketRateLimiter(qps=math.inf, burst=1).delay() == 0.0
    assert BucketRateLimiter(qps=1.0, burst=0).delay() == INF_DURATION
