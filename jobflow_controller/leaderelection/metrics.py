"""Leader-election metrics, named as component-base exposes them.

client-go installs a process-global provider once; here the manager builds one
`PrometheusLeaderMetrics` on the registry it owns and hands it to each elector, so tests use a
fresh registry and nothing is global. Without one the elector records nothing (`NoopLeaderMetrics`),
as client-go does when no provider was set.
"""

from __future__ import annotations

from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = [
    "LEADER_ELECTION_MASTER_STATUS",
    "LEADER_ELECTION_SLOWPATH_TOTAL",
    "LeaderMetrics",
    "NoopLeaderMetrics",
    "PrometheusLeaderMetrics",
]

LEADER_ELECTION_MASTER_STATUS = "leader_election_master_status"
LEADER_ELECTION_SLOWPATH_TOTAL = "leader_election_slowpath_total"

_MASTER_STATUS_HELP = (
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, "
    "1 indicates master. 'name' is the string used to identify the lease. Please make sure to "
    "group by name."
)
_SLOWPATH_HELP = (
    "Total number of slow path exercised in renewing leader leases. 'name' is the string used to "
    "identify the lease. Please make sure to group by name."
)


class LeaderMetrics(Protocol):
    """client-go's `leaderMetricsAdapter`; `name` is `LeaderElectionConfig.name`."""

    def leader_on(self, name: str) -> None: ...

    def leader_off(self, name: str) -> None: ...

    def slowpath_exercised(self, name: str) -> None: ...


class NoopLeaderMetrics:
    """Records nothing."""

    def leader_on(self, name: str) -> None:
        pass

    def leader_off(self, name: str) -> None:
        pass

    def slowpath_exercised(self, name: str) -> None:
        pass


class PrometheusLeaderMetrics:
    """`leader_election_master_status{name}` (1 leading, 0 not) and
    `leader_election_slowpath_total{name}` (renewals that had to GET the lock first).

    Register once per registry: a second instance on the same registry is a duplicate-metric error,
    just as registering component-base's collectors twice would be.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self._status = Gauge(LEADER_ELECTION_MASTER_STATUS, _MASTER_STATUS_HELP, ["name"], registry=registry)
        # prometheus_client strips "_total" from a counter's name and adds it back on exposition.
        self._slowpath = Counter(LEADER_ELECTION_SLOWPATH_TOTAL, _SLOWPATH_HELP, ["name"], registry=registry)

    def leader_on(self, name: str) -> None:
        self._status.labels(name).set(1.0)

    def leader_off(self, name: str) -> None:
        self._status.labels(name).set(0.0)

    def slowpath_exercised(self, name: str) -> None:
        self._slowpath.labels(name).inc()
