"""Read-only accessors over batch.volcano.sh/v1alpha1 Job dicts (the fields the controllers read)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis.meta import Obj, parse_duration_ns


def _status(job: Obj) -> Mapping[str, Any]:
    value = job.get("status") if isinstance(job, (dict, Mapping)) else None
    return value if isinstance(value, (dict, Mapping)) else {}


def phase(job: Obj) -> str:
    """`status.state.phase`; "" until Volcano's job controller (or the simulator) sets it."""
    state = _status(job).get("state")
    return str(state.get("phase") or "") if isinstance(state, (dict, Mapping)) else ""


def running_duration(job: Obj) -> str | None:
    """`status.runningDuration`, a Go duration; None when absent or not one (nothing to add up)."""
    value = _status(job).get("runningDuration")
    if not value or not isinstance(value, str):
        return None
    try:
        return value if parse_duration_ns(value) >= 0 else None
    except ValueError:
        return None


def retry_count(job: Obj) -> int:
    """`status.retryCount` (an int32 in Volcano's CRD); 0 when absent or not a whole number."""
    value = _status(job).get("retryCount")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def task_status_count(job: Obj) -> Mapping[str, Any] | None:
    value = _status(job).get("taskStatusCount")
    return value if isinstance(value, (dict, Mapping)) and value else None
