"""Leader election, ported from client-go `tools/leaderelection`.

`LeaderElector` competes for a `ResourceLock`; the Lease-backed lock is
`jobflow_controller.kube.lease_lock.LeaseLock` (the `kube` package is the one that talks to the
API server, so it is not imported here). Typical wiring in the manager::

    lock = LeaseLock(api_client, "volcano-system", "jobflow-controller", default_identity(),
                     event_recorder=recorder)
    config = LeaderElectionConfig(lock=lock, callbacks=LeaderCallbacks(
        on_started_leading=run_controllers, on_stopped_leading=exit_process),
        release_on_cancel=True, name="jobflow-controller", watch_dog=adaptor)
    run_or_die(config, stop, metrics=PrometheusLeaderMetrics(registry))
"""

from .config import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    JITTER_FACTOR,
    Clock,
    LeaderCallbacks,
    LeaderElectionConfig,
    RealClock,
    default_identity,
    jitter,
)
from .healthz import HealthzAdaptor, LeaderElectionUnhealthyError, new_leader_healthz_adaptor
from .leaderelection import LeaderElector, run_or_die
from .metrics import (
    LEADER_ELECTION_MASTER_STATUS,
    LEADER_ELECTION_SLOWPATH_TOTAL,
    LeaderMetrics,
    NoopLeaderMetrics,
    PrometheusLeaderMetrics,
)
from .resourcelock import (
    LEASES_RESOURCE_LOCK,
    EventRecorder,
    LeaderElectionRecord,
    LockConflictError,
    LockNotFoundError,
    LockNotInitializedError,
    ResourceLock,
    ResourceLockConfig,
    ResourceLockError,
    is_conflict,
    is_not_found,
)

__all__ = [
    "DEFAULT_LEASE_DURATION",
    "DEFAULT_RENEW_DEADLINE",
    "DEFAULT_RETRY_PERIOD",
    "JITTER_FACTOR",
    "LEADER_ELECTION_MASTER_STATUS",
    "LEADER_ELECTION_SLOWPATH_TOTAL",
    "LEASES_RESOURCE_LOCK",
    "Clock",
    "EventRecorder",
    "HealthzAdaptor",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElectionUnhealthyError",
    "LeaderElector",
    "LeaderMetrics",
    "LockConflictError",
    "LockNotFoundError",
    "LockNotInitializedError",
    "NoopLeaderMetrics",
    "PrometheusLeaderMetrics",
    "RealClock",
    "ResourceLock",
    "ResourceLockConfig",
    "ResourceLockError",
    "default_identity",
    "is_conflict",
    "is_not_found",
    "jitter",
    "new_leader_healthz_adaptor",
    "run_or_die",
]
