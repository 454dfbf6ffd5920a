"""Clocks: the contract the queues and the other packages rely on."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from workqueue_test_support import QUIET_PERIOD, start_thread, wait_for

from workqueue import Clock, FakeClock, RealClock


def test_both_clocks_satisfy_the_clock_protocol() -> None:
    clocks: list[Clock] = [RealClock(), FakeClock()]

    assert all(isinstance(c.now(), float) for c in clocks)


def test_real_clock_now_is_monotonic_time() -> None:
    before = time.monotonic()
    now = RealClock().now()

    assert before <= now <= time.monotonic()


def test_real_clock_since_measures_elapsed_seconds() -> None:
    clock = RealClock()
    start = clock.now()
    time.sleep(0.002)

    assert clock.since(start) >= 0.002


def test_real_clock_wall_is_timezone_aware_utc() -> None:
    wall = RealClock().wall()

    assert wall.tzinfo is not None
    assert wall.utcoffset() == timedelta(0)
    assert abs(wall - datetime.now(UTC)) < timedelta(seconds=5)


def test_real_clock_sleep_returns_false_after_the_duration() -> None:
    start = time.monotonic()

    assert RealClock().sleep(0.002, threading.Event()) is False
    assert time.monotonic() - start >= 0.002


def test_real_clock_sleep_returns_true_when_stopped() -> None:
    stop = threading.Event()
    stop.set()

    assert RealClock().sleep(3600, stop) is True


def test_real_clock_sleep_accepts_durations_longer_than_threading_allows() -> None:
    stop = threading.Event()
    stop.set()

    assert RealClock().sleep(1e300, stop) is True


def test_real_clock_wait_until_returns_false_once_the_deadline_passed() -> None:
    clock = RealClock()
    cond = threading.Condition()
    with cond:
        assert clock.wait_until(cond, clock.now() + 0.002) is False
        assert clock.wait_until(cond, clock.now() - 1) is False


def test_real_clock_wait_until_returns_true_when_notified() -> None:
    clock = RealClock()
    cond = threading.Condition()

    def notify() -> None:
        with cond:
            cond.notify_all()

    with cond:
        start_thread(notify)
        assert clock.wait_until(cond, clock.now() + 3600) is True


def test_fake_clock_starts_at_the_given_time() -> None:
    assert FakeClock(42.0).now() == 42.0
    assert FakeClock().now() == 0.0


def test_fake_clock_only_moves_when_stepped() -> None:
    clock = FakeClock(10.0)
    time.sleep(0.002)
    assert clock.now() == 10.0

    clock.step(1.5)

    assert clock.now() == 11.5
    assert clock.since(10.0) == 1.5


def test_fake_clock_set_time_jumps_to_the_given_time() -> None:
    clock = FakeClock(10.0)

    clock.set_time(100.0)

    assert clock.now() == 100.0


def test_fake_clock_wall_is_its_epoch_plus_elapsed_fake_seconds() -> None:
    epoch = datetime(2025, 6, 1, tzinfo=UTC)
    clock = FakeClock(1000.0, epoch=epoch)
    assert clock.wall() == epoch

    clock.step(90)

    assert clock.wall() == epoch + timedelta(seconds=90)
    assert clock.wall().tzinfo is not None


def test_fake_clock_rejects_a_naive_epoch() -> None:
    with pytest.raises(ValueError):
        FakeClock(epoch=datetime(2025, 6, 1))


def test_fake_clock_sleep_returns_once_stepped_to_the_deadline() -> None:
    clock = FakeClock()
    results: list[bool] = []
    sleeper = start_thread(lambda: results.append(clock.sleep(1.0)))
    wait_for(clock.has_waiters)

    clock.step(0.5)
    sleeper.join(QUIET_PERIOD)
    assert sleeper.is_alive()

    clock.step(0.5)
    sleeper.join(5)
    assert results == [False]
    assert not clock.has_waiters()


def test_fake_clock_sleep_returns_true_when_stopped() -> None:
    clock = FakeClock()
    stop = threading.Event()
    results: list[bool] = []
    sleeper = start_thread(lambda: results.append(clock.sleep(1.0, stop)))
    wait_for(clock.has_waiters)

    stop.set()
    sleeper.join(5)

    assert results == [True]
    assert not clock.has_waiters()


def test_fake_clock_sleep_of_nothing_returns_at_once() -> None:
    clock = FakeClock()

    assert clock.sleep(0) is False
    assert not clock.has_waiters()


def test_fake_clock_has_no_waiters_when_nobody_waits() -> None:
    assert not FakeClock().has_waiters()


def test_fake_clock_wait_until_wakes_when_stepped_past_the_deadline() -> None:
    clock = FakeClock()
    cond = threading.Condition()
    results: list[bool] = []

    def wait() -> None:
        with cond:
            results.append(clock.wait_until(cond, 2.0))

    waiter = start_thread(wait)
    wait_for(clock.has_waiters)
    clock.step(1.0)
    waiter.join(QUIET_PERIOD)
    assert waiter.is_alive()

    clock.step(5.0)
    waiter.join(5)
    assert results == [False]
    assert not clock.has_waiters()


def test_fake_clock_wait_until_returns_true_when_notified() -> None:
    clock = FakeClock()
    cond = threading.Condition()
    results: list[bool] = []

    def wait() -> None:
        with cond:
            results.append(clock.wait_until(cond, 2.0))

    waiter = start_thread(wait)
    wait_for(clock.has_waiters)
    with cond:
        cond.notify_all()
    waiter.join(5)

    assert results == [True]
    assert not clock.has_waiters()


def test_fake_clock_wait_until_a_passed_deadline_returns_at_once() -> None:
    clock = FakeClock(5.0)
    cond = threading.Condition()

    with cond:
        assert clock.wait_until(cond, 5.0) is False
    assert not clock.has_waiters()


def test_fake_clock_set_time_wakes_due_waiters() -> None:
    clock = FakeClock()
    results: list[bool] = []
    sleeper = start_thread(lambda: results.append(clock.sleep(10.0)))
    wait_for(clock.has_waiters)

    clock.set_time(10.0)
    sleeper.join(5)

    assert results == [False]
