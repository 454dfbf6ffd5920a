"""`dependsOn.probe` in the JobFlow controller (ours, docs/probe.md), one module per concern.

`gate.py` decides whether a target's probes pass (the flow policy then counts a target that passed
as Completed in upstream's `judge`); `net.py` runs one HTTP or TCP check within its deadline and
refuses the addresses never checked; `cache.py` is the fair, bounded pool and its result cache;
`judge.py` gives the sync each probe flow's verdict and owns the lazily started Pod informer.
"""

from jobflow_controller.jobflow.probes.cache import (
    MAX_PENDING_CHECKS,
    MAX_PENDING_PER_NAMESPACE,
    PROBE_POLL_PERIOD,
    PROBE_WORKERS,
    RESULT_EXPIRY,
    ProbeCache,
    ProbeKey,
)
from jobflow_controller.jobflow.probes.gate import (
    PodSource,
    ProbeGate,
    ProbeOutlet,
    job_tasks,
    ready_pods,
    task_phase_count,
    unmatched_tasks,
)
from jobflow_controller.jobflow.probes.net import (
    MAX_BODY_BYTES,
    PROBE_TIMEOUT,
    USER_AGENT,
    NetworkProbeRunner,
    ProbeResult,
    ProbeRunner,
)

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_PENDING_CHECKS",
    "MAX_PENDING_PER_NAMESPACE",
    "PROBE_POLL_PERIOD",
    "PROBE_TIMEOUT",
    "PROBE_WORKERS",
    "RESULT_EXPIRY",
    "USER_AGENT",
    "NetworkProbeRunner",
    "PodSource",
    "ProbeCache",
    "ProbeGate",
    "ProbeKey",
    "ProbeOutlet",
    "ProbeResult",
    "ProbeRunner",
    "job_tasks",
    "ready_pods",
    "task_phase_count",
    "unmatched_tasks",
]
