"""The Prometheus metrics provider (component-base ``metrics/prometheus/workqueue``).

Names, help texts, types, buckets and the single ``name`` label are component-base's, so dashboards
and alerts written for Kubernetes controllers work unchanged. Three things differ from a plain use of
prometheus_client, on purpose:

* the metrics are registered on the registry handed in, never the global one, and only when the
  first named queue asks for them (component-base registers lazily too), so a provider that no
  queue uses exposes nothing;
* prometheus_client would add a ``<name>_created`` series to every counter and histogram, which Go
  does not expose; this collector leaves them out;
* counters are declared as ``workqueue_adds_total``/``workqueue_retries_total``: prometheus_client
  keeps the ``_total`` suffix for the exposed samples, which therefore carry exactly the Go names.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.metrics_core import Metric

from workqueue.metrics import CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric

__all__ = ["DURATION_BUCKETS", "PrometheusMetricsProvider"]

_LABEL = "name"


def _exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    # Repeated multiplication, as prometheus.ExponentialBuckets does, so the bounds are the same floats
    # (1e-05 comes out as 9.999999999999999e-06 in Go too).
    buckets: list[float] = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return tuple(buckets)


#: ``ExponentialBuckets(10e-9, 10, 10)``: 10 ns up to 10 s, then +Inf.
DURATION_BUCKETS = _exponential_buckets(10e-9, 10, 10)

DEPTH_HELP = "Current depth of workqueue"
ADDS_HELP = "Total number of adds handled by workqueue"
QUEUE_DURATION_HELP = "How long in seconds an item stays in workqueue before being requested."
WORK_DURATION_HELP = "How long in seconds processing an item from workqueue takes."
UNFINISHED_WORK_HELP = (
    "How many seconds of work has done that is in progress and hasn't been observed by work_duration. "
    "Large values indicate stuck threads. One can deduce the number of stuck threads by observing "
    "the rate at which this increases."
)
LONGEST_RUNNING_PROCESSOR_HELP = "How many seconds has the longest running processor for workqueue been running."
RETRIES_HELP = "Total number of retries handled by workqueue"


class _WorkqueueCollector:
    """The seven metric vectors, collected as one unit without the ``_created`` series."""

    def __init__(self) -> None:
        labels = [_LABEL]
        self.depth = Gauge("workqueue_depth", DEPTH_HELP, labels, registry=None)
        self.adds = Counter("workqueue_adds_total", ADDS_HELP, labels, registry=None)
        self.latency = Histogram(
            "workqueue_queue_duration_seconds",
            QUEUE_DURATION_HELP,
            labels,
            buckets=DURATION_BUCKETS,
            registry=None,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            WORK_DURATION_HELP,
            labels,
            buckets=DURATION_BUCKETS,
            registry=None,
        )
        self.unfinished_work = Gauge("workqueue_unfinished_work_seconds", UNFINISHED_WORK_HELP, labels, registry=None)
        self.longest_running_processor = Gauge(
            "workqueue_longest_running_processor_seconds",
            LONGEST_RUNNING_PROCESSOR_HELP,
            labels,
            registry=None,
        )
        self.retries = Counter("workqueue_retries_total", RETRIES_HELP, labels, registry=None)
        self._all: tuple[MetricWrapperBase, ...] = (
            self.depth,
            self.adds,
            self.latency,
            self.work_duration,
            self.unfinished_work,
            self.longest_running_processor,
            self.retries,
        )

    def describe(self) -> Iterable[Metric]:
        for wrapper in self._all:
            yield from wrapper.describe()

    def collect(self) -> Iterable[Metric]:
        for wrapper in self._all:
            for family in wrapper.collect():
                created = family.name + "_created"
                kept = Metric(family.name, family.documentation, family.type, family.unit)
                kept.samples = [s for s in family.samples if s.name != created]
                yield kept


class PrometheusMetricsProvider:
    """A ``MetricsProvider`` exposing the component-base ``workqueue_*`` metrics on ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry
        self._lock = threading.Lock()
        self._collector: _WorkqueueCollector | None = None

    def _metrics(self) -> _WorkqueueCollector:
        with self._lock:
            if self._collector is None:
                collector = _WorkqueueCollector()
                self._registry.register(collector)
                self._collector = collector
            return self._collector

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return self._metrics().depth.labels(name)

    def new_adds_metric(self, name: str) -> CounterMetric:
        return self._metrics().adds.labels(name)

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return self._metrics().latency.labels(name)

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return self._metrics().work_duration.labels(name)

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._metrics().unfinished_work.labels(name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._metrics().longest_running_processor.labels(name)

    def new_retries_metric(self, name: str) -> CounterMetric:
        return self._metrics().retries.labels(name)
