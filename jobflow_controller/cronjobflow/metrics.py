"""The CronJobFlow controller's metrics (ours, docs/cron.md; Kubernetes' CronJob controller has only
`cronjob_controller_job_creation_skew_duration_seconds`, the lag histogram's counterpart).

- `jobflow_controller_cronjobflow_scheduled_total{namespace}`: runs created for a schedule time;
- `jobflow_controller_cronjobflow_missed_total{namespace}`: schedule times that passed without a run
  (older missed times superseded by the most recent one, a missed deadline, `Forbid` while a run is
  active), each counted once;
- `jobflow_controller_cronjobflow_schedule_lag_seconds`: from a schedule time to its JobFlow's
  `creationTimestamp` (what the API server stamped, so the clock of the controller does not enter).
"""

from __future__ import annotations

from typing import Final

from prometheus_client import CollectorRegistry, Counter, Histogram

SCHEDULED_NAME: Final = "jobflow_controller_cronjobflow_scheduled"
MISSED_NAME: Final = "jobflow_controller_cronjobflow_missed"
LAG_NAME: Final = "jobflow_controller_cronjobflow_schedule_lag_seconds"
#: From well inside the 5 s the issue asks for to a late start after a restart or a long outage.
LAG_BUCKETS: Final = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0, 3600.0)


class CronJobFlowMetrics:
    """One set per process, shared by every CronJobFlow controller (one per held shard)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.scheduled = Counter(
            SCHEDULED_NAME, "CronJobFlow runs created for a schedule time", ["namespace"], registry=registry
        )
        self.missed = Counter(
            MISSED_NAME, "CronJobFlow schedule times that passed without a run", ["namespace"], registry=registry
        )
        self.lag = Histogram(
            LAG_NAME,
            "Seconds from a CronJobFlow's schedule time to the creation of its JobFlow",
            buckets=LAG_BUCKETS,
            registry=registry,
        )

    def observe_namespace(self, namespace: str) -> None:
        """Both counters of a namespace with a CronJobFlow exist from its first sync, at 0, so the
        dashboard's `rate()`/`increase()` see its first run and first miss (Prometheus' advice for
        labelled counters)."""
        self.scheduled.labels(namespace=namespace)
        self.missed.labels(namespace=namespace)

    def observe_scheduled(self, namespace: str, lag_seconds: float) -> None:
        self.scheduled.labels(namespace=namespace).inc()
        self.lag.observe(max(0.0, lag_seconds))

    def observe_missed(self, namespace: str, count: int) -> None:
        if count > 0:
            self.missed.labels(namespace=namespace).inc(count)
