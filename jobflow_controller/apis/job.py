"""Read-only accessors over batch.volcano.sh/v1alpha1 Job dicts (the fields the controllers read)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis.meta import Obj


def _status(job: Obj) -> Mapping[str, Any]:
    value = job.get("status")
    return value if isinstance(value, (dict, Mapping)) else {}


def phase(job: Obj) -> str:
    """`status.state.phase`; "" until Volcano's job controller (or the simulator) sets it."""
    state = _status(job).get("state")
    return str(state.get("phase") or "") if isinstance(state, (dict, Mapping)) else ""


def running_duration(job: Obj) -> str | None:
    value = _status(job).get("runningDuration")
    return str(value) if value else None


def retry_count(job: Obj) -> int:
    return int(_status(job).get("retryCount") or 0)


def task_status_count(job: Obj) -> Mapping[str, Any] | None:
    value = _status(job).get("taskStatusCount")
    return value if isinstance(value, (dict, Mapping)) and value else None
