"""The Prometheus provider: exactly the component-base exposition, on the registry it is given."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from workqueue_test_support import wait_for

from workqueue import DelayingQueue, FakeClock, PrometheusMetricsProvider, Queue

EXPECTED_HEADERS = {
    "workqueue_depth": ("gauge", "Current depth of workqueue"),
    "workqueue_adds_total": ("counter", "Total number of adds handled by workqueue"),
    "workqueue_queue_duration_seconds": (
        "histogram",
        "How long in seconds an item stays in workqueue before being requested.",
    ),
    "workqueue_work_duration_seconds": (
        "histogram",
        "How long in seconds processing an item from workqueue takes.",
    ),
    "workqueue_unfinished_work_seconds": (
        "gauge",
        "How many seconds of work has done that is in progress and hasn't been observed by "
        "work_duration. Large values indicate stuck threads. One can deduce the number of stuck "
        "threads by observing the rate at which this increases.",
    ),
    "workqueue_longest_running_processor_seconds": (
        "gauge",
        "How many seconds has the longest running processor for workqueue been running.",
    ),
    "workqueue_retries_total": ("counter", "Total number of retries handled by workqueue"),
}


def _exposition(registry: CollectorRegistry) -> str:
    return generate_latest(registry).decode()


def _sample(registry: CollectorRegistry, sample_name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(_exposition(registry)):
        for sample in family.samples:
            if sample.name == sample_name and sample.labels == labels:
                return float(sample.value)
    raise AssertionError(f"no sample {sample_name}{labels}")


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


def _exercised_queue(registry: CollectorRegistry, name: str = "jobflow") -> DelayingQueue[str]:
    q: DelayingQueue[str] = DelayingQueue(
        name=name, clock=FakeClock(), metrics_provider=PrometheusMetricsProvider(registry)
    )
    q.add("foo")
    item, _ = q.get()
    q.done(item)
    q.add_after("bar", 0)
    return q


def test_help_and_type_lines_are_the_component_base_ones(registry: CollectorRegistry) -> None:
    q = _exercised_queue(registry)
    lines = _exposition(registry).splitlines()

    for name, (kind, help_text) in EXPECTED_HEADERS.items():
        assert f"# HELP {name} {help_text}" in lines
        assert f"# TYPE {name} {kind}" in lines
    q.shut_down()


def test_exactly_the_go_series_names_are_exposed(registry: CollectorRegistry) -> None:
    q = _exercised_queue(registry)
    exposed = {
        line.split("{")[0].split(" ")[0]
        for line in _exposition(registry).splitlines()
        if line and not line.startswith("#")
    }

    histograms = ["workqueue_queue_duration_seconds", "workqueue_work_duration_seconds"]
    assert exposed == {
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries_total",
        *(f"{h}_{suffix}" for h in histograms for suffix in ("bucket", "sum", "count")),
    }
    q.shut_down()


def test_every_series_carries_only_the_name_label(registry: CollectorRegistry) -> None:
    q = _exercised_queue(registry)

    for family in text_string_to_metric_families(_exposition(registry)):
        for sample in family.samples:
            assert set(sample.labels) - {"le"} == {"name"}
            assert sample.labels["name"] == "jobflow"
    q.shut_down()


def test_histograms_use_the_component_base_buckets(registry: CollectorRegistry) -> None:
    q = _exercised_queue(registry)
    bounds = [
        float(sample.labels["le"])
        for family in text_string_to_metric_families(_exposition(registry))
        if family.name == "workqueue_queue_duration_seconds"
        for sample in family.samples
        if sample.name.endswith("_bucket")
    ]

    expected = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]
    assert bounds[:-1] == pytest.approx(expected, rel=1e-12)
    assert bounds[-1] == float("inf")
    q.shut_down()


def test_values_follow_the_queue_accounting(registry: CollectorRegistry) -> None:
    q = _exercised_queue(registry)

    assert _sample(registry, "workqueue_adds_total", name="jobflow") == 2
    assert _sample(registry, "workqueue_depth", name="jobflow") == 1
    assert _sample(registry, "workqueue_retries_total", name="jobflow") == 1
    assert _sample(registry, "workqueue_queue_duration_seconds_count", name="jobflow") == 1
    assert _sample(registry, "workqueue_work_duration_seconds_count", name="jobflow") == 1
    q.shut_down()


def test_unfinished_work_gauges_are_exposed(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(name="slow", clock=clock, metrics_provider=PrometheusMetricsProvider(registry))
    wait_for(clock.has_waiters)
    q.add("foo")
    q.get()

    clock.step(0.5)

    wait_for(lambda: _sample(registry, "workqueue_unfinished_work_seconds", name="slow") == 0.5)
    assert _sample(registry, "workqueue_longest_running_processor_seconds", name="slow") == 0.5
    q.shut_down()


def test_queues_with_distinct_names_have_distinct_series(registry: CollectorRegistry) -> None:
    provider = PrometheusMetricsProvider(registry)
    first: Queue[str] = Queue(name="first", clock=FakeClock(), metrics_provider=provider)
    second: Queue[str] = Queue(name="second", clock=FakeClock(), metrics_provider=provider)
    first.add("a")
    second.add("a")
    second.add("b")

    assert _sample(registry, "workqueue_adds_total", name="first") == 1
    assert _sample(registry, "workqueue_adds_total", name="second") == 2
    first.shut_down()
    second.shut_down()


def test_nothing_is_registered_until_a_named_queue_asks(registry: CollectorRegistry) -> None:
    provider = PrometheusMetricsProvider(registry)
    q: Queue[str] = Queue(clock=FakeClock(), metrics_provider=provider)
    q.add("foo")

    assert _exposition(registry) == ""
    q.shut_down()


def test_metrics_go_to_the_given_registry_not_the_global_one(registry: CollectorRegistry) -> None:
    q = _exercised_queue(registry, name="private-registry-queue")

    assert "private-registry-queue" in _exposition(registry)
    assert "private-registry-queue" not in generate_latest(REGISTRY).decode()
    q.shut_down()
