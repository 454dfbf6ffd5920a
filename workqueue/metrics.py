"""Work-queue metrics: the provider seam and the per-item accounting behind it.

As in client-go (``util/workqueue/metrics.go``), queues do not know Prometheus. A queue asks a
``MetricsProvider`` for seven metrics by queue name and the accounting here feeds them, always under
the queue's lock. Two rules decide whether a queue has metrics at all: it must be named, and the
provider must not be the no-op one; otherwise no per-item state is kept and no update thread runs.

The accounting is client-go's, including its less obvious choices:

* ``add`` runs only for an add that makes the item dirty (a duplicate add of a dirty item counts
  nothing), so ``adds`` counts deduplicated adds; and it increments ``depth`` even when the item is
  in flight, so ``depth`` tracks "dirty adds not yet handed out", not ``len(queue)``.
* queue latency is measured from the *first* add that made the item dirty;
* unfinished work is the sum of the ages of all in-flight items, refreshed by the queue every
  ``DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD`` seconds, with the oldest age beside it;
* every ``add_after`` call counts as a retry, including one with a non-positive delay.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from workqueue.clock import Clock

__all__ = [
    "DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD",
    "CounterMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "QueueMetrics",
    "RetryMetrics",
    "SettableGaugeMetric",
    "global_metrics_provider",
    "new_queue_metrics",
    "new_retry_metrics",
    "set_provider",
]

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)

#: How often a queue with metrics refreshes its unfinished-work gauges (client-go: 500 ms).
DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD = 0.5


class GaugeMetric(Protocol):
    def inc(self) -> None: ...

    def dec(self) -> None: ...


class SettableGaugeMetric(Protocol):
    def set(self, value: float, /) -> None: ...


class CounterMetric(Protocol):
    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    def observe(self, value: float, /) -> None: ...


class MetricsProvider(Protocol):
    """Makes the metrics of the queue called ``name``; each is asked for once per queue."""

    def new_depth_metric(self, name: str) -> GaugeMetric: ...

    def new_adds_metric(self, name: str) -> CounterMetric: ...

    def new_latency_metric(self, name: str) -> HistogramMetric: ...

    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric: ...

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric: ...

    def new_retries_metric(self, name: str) -> CounterMetric: ...


class _NoopMetric:
    def inc(self) -> None:
        pass

    def dec(self) -> None:
        pass

    def set(self, value: float, /) -> None:
        pass

    def observe(self, value: float, /) -> None:
        pass


_NOOP_METRIC = _NoopMetric()


class NoopMetricsProvider:
    """The default provider: queues built with it keep no metrics state and start no thread."""

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return _NOOP_METRIC

    def new_adds_metric(self, name: str) -> CounterMetric:
        return _NOOP_METRIC

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return _NOOP_METRIC

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return _NOOP_METRIC

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP_METRIC

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP_METRIC

    def new_retries_metric(self, name: str) -> CounterMetric:
        return _NOOP_METRIC


class _GlobalMetricsFactory:
    """client-go's ``globalMetricsFactory``: the provider used by queues not given one.

    Only the first ``set_provider`` has effect (a ``sync.Once`` upstream), so a library cannot swap the
    provider under queues that already exist, and queues created earlier keep the one they got.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._provider: MetricsProvider = NoopMetricsProvider()
        self._set = False

    def set_provider(self, provider: MetricsProvider) -> None:
        with self._lock:
            if not self._set:
                self._provider = provider
                self._set = True

    def provider(self) -> MetricsProvider:
        with self._lock:
            return self._provider


_global_factory = _GlobalMetricsFactory()


def set_provider(provider: MetricsProvider) -> None:
    """Set the provider for queues created afterwards without one; only the first call counts."""
    _global_factory.set_provider(provider)


def global_metrics_provider() -> MetricsProvider:
    """The provider a queue created now without ``metrics_provider`` would use."""
    return _global_factory.provider()


class QueueMetrics(Protocol[T_contra]):
    """What the base queue reports; every call is made with the queue's lock held."""

    def add(self, item: T_contra) -> None: ...

    def get(self, item: T_contra) -> None: ...

    def done(self, item: T_contra) -> None: ...

    def update_unfinished_work(self) -> None: ...


class NoQueueMetrics(Generic[T]):
    """Used by unnamed queues and the no-op provider: nothing is recorded, nothing is kept."""

    def add(self, item: T) -> None:
        pass

    def get(self, item: T) -> None:
        pass

    def done(self, item: T) -> None:
        pass

    def update_unfinished_work(self) -> None:
        pass


class _DefaultQueueMetrics(Generic[T]):
    def __init__(self, provider: MetricsProvider, name: str, clock: Clock) -> None:
        self._clock = clock
        self._depth = provider.new_depth_metric(name)
        self._adds = provider.new_adds_metric(name)
        self._latency = provider.new_latency_metric(name)
        self._work_duration = provider.new_work_duration_metric(name)
        self._unfinished_work_seconds = provider.new_unfinished_work_seconds_metric(name)
        self._longest_running_processor = provider.new_longest_running_processor_seconds_metric(name)
        self._add_times: dict[T, float] = {}
        self._processing_start_times: dict[T, float] = {}

    def add(self, item: T) -> None:
        self._adds.inc()
        self._depth.inc()
        if item not in self._add_times:
            self._add_times[item] = self._clock.now()

    def get(self, item: T) -> None:
        self._depth.dec()
        now = self._clock.now()
        self._processing_start_times[item] = now
        added = self._add_times.pop(item, None)
        if added is not None:
            self._latency.observe(now - added)

    def done(self, item: T) -> None:
        started = self._processing_start_times.pop(item, None)
        if started is not None:
            self._work_duration.observe(self._clock.since(started))

    def update_unfinished_work(self) -> None:
        total = 0.0
        oldest = 0.0
        now = self._clock.now()
        for started in self._processing_start_times.values():
            age = now - started
            total += age
            if age > oldest:
                oldest = age
        self._unfinished_work_seconds.set(total)
        self._longest_running_processor.set(oldest)


def new_queue_metrics(provider: MetricsProvider | None, name: str, clock: Clock) -> QueueMetrics[T] | None:
    """The accounting for a queue, or None when it has no metrics (unnamed, or no-op provider)."""
    if provider is None:
        provider = global_metrics_provider()
    if not name or isinstance(provider, NoopMetricsProvider):
        return None
    return _DefaultQueueMetrics(provider, name, clock)


class RetryMetrics(Protocol):
    def retry(self) -> None: ...


class _NoRetryMetrics:
    def retry(self) -> None:
        pass


class _DefaultRetryMetrics:
    def __init__(self, retries: CounterMetric) -> None:
        self._retries = retries

    def retry(self) -> None:
        self._retries.inc()


def new_retry_metrics(provider: MetricsProvider | None, name: str) -> RetryMetrics:
    """The delaying queue's retry counter; unnamed queues count nothing."""
    if not name:
        return _NoRetryMetrics()
    if provider is None:
        provider = global_metrics_provider()
    return _DefaultRetryMetrics(provider.new_retries_metric(name))
