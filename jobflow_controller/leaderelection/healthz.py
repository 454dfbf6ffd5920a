"""The leader-election health check (client-go `healthzadaptor.go`).

A leader that can no longer renew should lose leadership and exit; if it is wedged instead (a
deadlock, a hung callback), another replica may already lead, and two controllers would write the
same objects. The adaptor lets `/livez` report that case so the kubelet restarts the process.
It is created before the elector exists (the HTTP server starts first) and tied to it later.
"""

from __future__ import annotations

import threading
from typing import Protocol

__all__ = ["HealthzAdaptor", "LeaderElectionUnhealthyError", "new_leader_healthz_adaptor"]


class LeaderElectionUnhealthyError(Exception):
    """We hold the lease but have not managed to renew it for longer than is tolerable."""


class _Checkable(Protocol):
    def check(self, max_tolerable_expired_lease: float) -> None: ...


class HealthzAdaptor:
    """Unhealthy only while this process is the leader and has gone without renewing for more
    than lease duration + `timeout` seconds. A standby, or an adaptor with no elector yet, is
    healthy."""

    def __init__(self, timeout: float) -> None:
        self._lock = threading.Lock()
        self._le: _Checkable | None = None
        self._timeout = timeout

    @property
    def timeout(self) -> float:
        return self._timeout

    def name(self) -> str:
        """The name of the health check, as client-go registers it."""
        return "leaderElection"

    def check(self) -> None:
        """Raise `LeaderElectionUnhealthyError` when the elector says renewal has stalled."""
        with self._lock:
            le = self._le
        if le is None:
            return
        le.check(self._timeout)

    def set_leader_election(self, le: _Checkable) -> None:
        """Tie the adaptor to its elector (`run_or_die` does this for you)."""
        with self._lock:
            self._le = le


def new_leader_healthz_adaptor(timeout: float) -> HealthzAdaptor:
    """client-go's `NewLeaderHealthzAdaptor`: checks within `timeout` after expiry stay healthy."""
    return HealthzAdaptor(timeout)
