"""Queue metrics accounting: client-go's metrics_test.go, plus when metrics exist at all."""

from __future__ import annotations

import pytest
from workqueue_test_support import QUIET_PERIOD, RecordingMetricsProvider, wait_for

import workqueue.metrics as metrics_module
from workqueue import DelayingQueue, FakeClock, NoopMetricsProvider, Queue, RateLimitingQueue
from workqueue.metrics import global_metrics_provider
from workqueue.rate_limiters import ItemExponentialFailureRateLimiter


def _named_queue(provider: RecordingMetricsProvider, clock: FakeClock, *, period: float = 0.001) -> Queue[str]:
    q: Queue[str] = Queue(name="test", clock=clock, metrics_provider=provider, unfinished_work_update_period=period)
    # Wait for the unfinished-work thread to arm its ticker, as client-go's test does.
    wait_for(clock.has_waiters)
    return q


def test_metrics() -> None:
    mp = RecordingMetricsProvider()
    clock = FakeClock(0.0)
    q = _named_queue(mp, clock)

    q.add("foo")
    assert mp.adds.value == 1
    assert mp.depth.value == 1

    clock.step(50e-6)
    item, _ = q.get()
    assert item == "foo"
    assert mp.latency.last == pytest.approx(5e-05)
    assert mp.latency.count == 1

    # Added back while processing; the duplicates are de-duplicated.
    for _ in range(5):
        q.add(item)
    assert mp.adds.value == 2
    assert mp.depth.value == 1

    clock.step(25e-6)
    q.done(item)
    assert mp.duration.last == pytest.approx(2.5e-05)
    assert mp.duration.count == 1
    assert mp.depth.value == 1

    item, _ = q.get()
    assert item == "foo"
    assert mp.latency.last == pytest.approx(2.5e-05)
    assert mp.latency.count == 2

    mp.unfinished.notify.clear()
    mp.longest.notify.clear()
    clock.step(0.001)
    assert mp.unfinished.notify.wait(5)
    assert mp.unfinished.value == pytest.approx(0.001)
    assert mp.longest.notify.wait(5)
    assert mp.longest.value == pytest.approx(0.001)

    q.done(item)
    assert mp.duration.last == pytest.approx(0.001)
    assert mp.duration.count == 2
    q.shut_down()


def test_metric_shutdown() -> None:
    mp = RecordingMetricsProvider()
    clock = FakeClock(1000.0)
    q = _named_queue(mp, clock)
    clock.step(0.001)
    assert mp.unfinished.notify.wait(5)

    q.shut_down()
    mp.unfinished.notify.clear()
    clock.step(3600)

    assert not clock.has_waiters(), "the unfinished-work thread is still running"
    assert not mp.unfinished.notify.wait(QUIET_PERIOD), "unfinished work updated after shutdown"


def test_depth_counts_an_add_landing_on_an_in_flight_item() -> None:
    mp = RecordingMetricsProvider()
    q = _named_queue(mp, FakeClock())
    q.add("foo")
    q.get()
    q.add("foo")

    assert len(q) == 0
    assert mp.depth.value == 1
    q.shut_down()


def test_adds_count_only_adds_that_make_an_item_dirty() -> None:
    mp = RecordingMetricsProvider()
    q = _named_queue(mp, FakeClock())
    for _ in range(3):
        q.add("foo")

    assert mp.adds.value == 1
    q.shut_down()


def test_latency_is_measured_from_the_first_add() -> None:
    mp = RecordingMetricsProvider()
    clock = FakeClock()
    q = _named_queue(mp, clock, period=3600)
    q.add("foo")
    clock.step(0.3)
    q.add("foo")
    clock.step(0.2)
    q.get()

    assert mp.latency.last == pytest.approx(0.5)
    q.shut_down()


def test_unfinished_work_sums_in_flight_ages_and_tracks_the_oldest() -> None:
    mp = RecordingMetricsProvider()
    clock = FakeClock()
    q = _named_queue(mp, clock, period=1.0)
    q.add("old")
    q.get()
    clock.step(0.25)
    q.add("young")
    q.get()
    clock.step(0.75)

    assert mp.unfinished.notify.wait(5)
    assert mp.unfinished.value == pytest.approx(1.0 + 0.75)
    wait_for(lambda: mp.longest.sets == 1)
    assert mp.longest.value == pytest.approx(1.0)
    q.shut_down()


def test_unfinished_work_is_updated_every_half_second_by_default() -> None:
    mp = RecordingMetricsProvider()
    clock = FakeClock()
    q: Queue[str] = Queue(name="test", clock=clock, metrics_provider=mp)
    wait_for(clock.has_waiters)
    q.add("foo")
    q.get()

    clock.step(0.49)
    assert not mp.unfinished.notify.wait(QUIET_PERIOD)
    clock.step(0.01)
    assert mp.unfinished.notify.wait(5)
    assert mp.unfinished.value == pytest.approx(0.5)
    q.shut_down()


def test_an_unnamed_queue_has_no_metrics() -> None:
    mp = RecordingMetricsProvider()
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock, metrics_provider=mp)
    q.add("foo")
    q.add_after("bar", 0)
    q.get()

    assert mp.requested == []
    assert mp.adds.value == 0
    assert mp.retries.value == 0
    q.shut_down()


def test_an_unnamed_queue_starts_no_metrics_thread() -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(clock=clock, metrics_provider=RecordingMetricsProvider())

    assert not stays_waiting(clock)
    q.shut_down()


def test_the_noop_provider_starts_no_metrics_thread() -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(name="test", clock=clock, metrics_provider=NoopMetricsProvider())

    assert not stays_waiting(clock)
    q.shut_down()


def stays_waiting(clock: FakeClock) -> bool:
    try:
        wait_for(clock.has_waiters, timeout=QUIET_PERIOD)
    except AssertionError:
        return False
    return True


def test_a_named_queue_asks_the_provider_for_every_metric_by_its_name() -> None:
    mp = RecordingMetricsProvider()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(0.001, 1.0), name="jobflow", clock=FakeClock(), metrics_provider=mp
    )

    assert sorted(mp.requested) == sorted(
        [
            ("depth", "jobflow"),
            ("adds", "jobflow"),
            ("latency", "jobflow"),
            ("work_duration", "jobflow"),
            ("unfinished_work_seconds", "jobflow"),
            ("longest_running_processor_seconds", "jobflow"),
            ("retries", "jobflow"),
        ]
    )
    q.shut_down()


def test_every_add_after_counts_a_retry_even_with_a_non_positive_delay() -> None:
    mp = RecordingMetricsProvider()
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(name="test", clock=clock, metrics_provider=mp)
    q.add_after("foo", 0)
    q.add_after("bar", -1)
    q.add_after("baz", 5)

    assert mp.retries.value == 3
    q.shut_down()


def test_add_after_while_shutting_down_counts_no_retry() -> None:
    mp = RecordingMetricsProvider()
    q: DelayingQueue[str] = DelayingQueue(name="test", clock=FakeClock(), metrics_provider=mp)
    q.shut_down()
    q.add_after("foo", 1)

    assert mp.retries.value == 0


def test_add_rate_limited_counts_a_retry() -> None:
    mp = RecordingMetricsProvider()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(0.001, 1.0), name="test", clock=FakeClock(), metrics_provider=mp
    )
    q.add_rate_limited("foo")

    assert mp.retries.value == 1
    q.shut_down()


def test_queues_without_a_provider_use_the_global_one(monkeypatch: pytest.MonkeyPatch) -> None:
    factory = metrics_module._GlobalMetricsFactory()
    monkeypatch.setattr(metrics_module, "_global_factory", factory)
    mp = RecordingMetricsProvider()
    metrics_module.set_provider(mp)

    q: Queue[str] = Queue(name="test", clock=FakeClock())
    q.add("foo")

    assert mp.adds.value == 1
    q.shut_down()


def test_only_the_first_set_provider_has_effect(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics_module, "_global_factory", metrics_module._GlobalMetricsFactory())
    first = RecordingMetricsProvider()
    metrics_module.set_provider(first)
    metrics_module.set_provider(RecordingMetricsProvider())

    assert global_metrics_provider() is first


def test_the_default_global_provider_is_the_noop_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics_module, "_global_factory", metrics_module._GlobalMetricsFactory())

    assert isinstance(global_metrics_provider(), NoopMetricsProvider)
