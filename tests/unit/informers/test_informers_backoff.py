"""The reflector's backoff: 0.8 s doubling to 30 s, jitter in [d, 2d), reset after 2 minutes."""

from __future__ import annotations

import threading

import pytest
from informers_fakes import FakeClock

from informers import Backoff, BackoffManager
from informers.backoff import jitter


def delays(manager: BackoffManager, n: int) -> list[float]:
    return [round(manager.next_delay(), 6) for _ in range(n)]


def test_delays_double_from_point_eight_seconds_and_cap_at_thirty() -> None:
    manager = BackoffManager(clock=FakeClock(), rand=lambda: 0.0)
    assert delays(manager, 9) == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0]


def test_jitter_adds_up_to_one_more_delay() -> None:
    manager = BackoffManager(clock=FakeClock(), rand=lambda: 0.999)
    got = delays(manager, 8)
    bases = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    for delay, base in zip(got, bases, strict=True):
        assert base <= delay < 2 * base


def test_the_sequence_restarts_when_two_minutes_passed_since_it_started() -> None:
    clock = FakeClock()
    manager = BackoffManager(clock=clock, rand=lambda: 0.0)
    assert delays(manager, 3) == [0.8, 1.6, 3.2]
    clock.step(120.0)
    assert delays(manager, 1) == [6.4]  # exactly 2 minutes is not "more than"
    clock.step(0.5)
    assert delays(manager, 2) == [0.8, 1.6]


def test_the_reset_window_is_measured_from_the_last_reset_not_the_last_failure() -> None:
    clock = FakeClock()
    manager = BackoffManager(clock=clock, rand=lambda: 0.0)
    for _ in range(5):
        clock.step(30.0)
        manager.next_delay()
    # 150 s since the start: the fifth call reset the sequence, so it restarted from 0.8.
    assert delays(manager, 1) == [1.6]


def test_a_zero_reset_interval_always_starts_over() -> None:
    manager = BackoffManager(reset_interval=0, clock=FakeClock(), rand=lambda: 0.0)
    assert delays(manager, 3) == [0.8, 0.8, 0.8]


def test_backoff_without_steps_returns_the_jittered_duration() -> None:
    b = Backoff(duration=2.0, jitter=1.0)
    assert b.step(lambda: 0.5) == 3.0
    assert Backoff(duration=2.0).step() == 2.0


@pytest.mark.parametrize("factor", [0.0, -1.0])
def test_a_non_positive_jitter_factor_means_one(factor: float) -> None:
    assert jitter(1.0, factor, lambda: 0.5) == 1.5


def test_backoff_sleeps_on_the_clock_and_honours_stop() -> None:
    clock = FakeClock()
    manager = BackoffManager(clock=clock, rand=lambda: 0.0)
    stop = threading.Event()
    result: list[bool] = []
    sleeper = threading.Thread(target=lambda: result.append(manager.backoff(stop)))
    sleeper.start()
    assert clock.wait_for_waiters(1)
    stop.set()
    sleeper.join(1)
    assert result == [True]
