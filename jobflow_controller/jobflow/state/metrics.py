"""`volcano_jobflow_succeed_phase_count` and `volcano_jobflow_failed_phase_count` (state/metrics.go).

Plus ours, `volcano_jobflow_job_retry_count` (docs/retry.md): the Jobs re-created by a flow's retry
policy, by the JobFlow's namespace, named and exposed as the two upstream counters are.

Go's client_golang exposes a counter under the exact name it was given; Python's prometheus_client
appends `_total` (and adds `_created`). Dashboards built on Volcano query the Go names, so these are
exposed by a small collector that writes counter samples under the bare names.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client.core import Metric
from prometheus_client.registry import Collector, CollectorRegistry

from jobflow_controller.apis import Phase

SUCCEED_NAME = "volcano_jobflow_succeed_phase_count"
FAILED_NAME = "volcano_jobflow_failed_phase_count"
SUCCEED_HELP = "Number of jobflow succeed phase"
FAILED_HELP = "Number of jobflow failed phase"
RETRY_NAME = "volcano_jobflow_job_retry_count"
RETRY_HELP = "Number of jobflow job retries"
LABEL = "jobflow_namespace"


class JobFlowMetrics(Collector):
    """Per-namespace counts of JobFlows that reached Succeed or Failed."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self._lock = threading.Lock()
        self._succeed: dict[str, float] = {}
        self._failed: dict[str, float] = {}
        self._retry: dict[str, float] = {}
        if registry is not None:
            registry.register(self)

    def update_job_flow_succeed(self, namespace: str) -> None:
        with self._lock:
            self._succeed[namespace] = self._succeed.get(namespace, 0.0) + 1

    def update_job_flow_failed(self, namespace: str) -> None:
        with self._lock:
            self._failed[namespace] = self._failed.get(namespace, 0.0) + 1

    def count_transition(self, namespace: str, old: str, new: str) -> None:
        """A status written that moved the JobFlow from phase `old` to `new`: Succeed and Failed count."""
        if new == old:
            return
        if new == Phase.SUCCEED:
            self.update_job_flow_succeed(namespace)
        elif new == Phase.FAILED:
            self.update_job_flow_failed(namespace)

    def update_job_flow_job_retry(self, namespace: str) -> None:
        with self._lock:
            self._retry[namespace] = self._retry.get(namespace, 0.0) + 1

    def retry_count(self, namespace: str) -> float:
        with self._lock:
            return self._retry.get(namespace, 0.0)

    def succeed_count(self, namespace: str) -> float:
        with self._lock:
            return self._succeed.get(namespace, 0.0)

    def failed_count(self, namespace: str) -> float:
        with self._lock:
            return self._failed.get(namespace, 0.0)

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            tables = (
                (SUCCEED_NAME, SUCCEED_HELP, dict(self._succeed)),
                (FAILED_NAME, FAILED_HELP, dict(self._failed)),
                (RETRY_NAME, RETRY_HELP, dict(self._retry)),
            )
        for name, help_text, values in tables:
            metric = Metric(name, help_text, "counter")
            for namespace, value in sorted(values.items()):
                metric.add_sample(name, {LABEL: namespace}, value)
            yield metric

    def describe(self) -> Iterator[Metric]:
        yield Metric(SUCCEED_NAME, SUCCEED_HELP, "counter")
        yield Metric(FAILED_NAME, FAILED_HELP, "counter")
        yield Metric(RETRY_NAME, RETRY_HELP, "counter")
