"""Admission of the lifecycle fields (docs/lifecycle.md): deadlines, TTL, suspend, shutdown, the re-run request.

``lifecycle_problems(job_flow, old_job_flow=None)`` returns every problem, in a fixed order:

1. ``spec.activeDeadlineSeconds``, ``spec.ttlSecondsAfterFinished``: an integer, not negative
   (``spec.ttlSecondsAfterFinished: must not be negative, got -1``); then each flow's
   ``activeDeadlineSeconds`` (``jobflow Flow "train": activeDeadlineSeconds: must not be negative, got -5``);
2. ``spec.suspend``: true or false;
3. ``spec.shutdown``: "", Stop or Terminate; on UPDATE only "" -> Stop, "" -> Terminate and
   Stop -> Terminate (``spec.shutdown: cannot change from "Stop" to "" ...``): it is one way, as Argo's;
4. the annotation ``flow.volcano.sh/retry-request`` (``apis.lifecycle_fields``).

On UPDATE each rule applies only when the UPDATE changes what it checks (a ratchet, as the rest of
the webhook has): a JobFlow stored without the webhook can still be labelled. Admission only: the
controller reads a malformed value as absent (our CRD's schema refuses the same bad values, with
the API server's message, before the webhook is called).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jobflow_controller.apis.lifecycle_fields import (
    ACTIVE_DEADLINE_SECONDS,
    SHUTDOWN,
    SHUTDOWN_VALUES,
    SUSPEND,
    TTL_SECONDS_AFTER_FINISHED,
    retry_request_problems,
    retry_request_text,
    shutdown_change_allowed,
)
from jobflow_controller.apis.tenant_text import excerpt

__all__ = ["lifecycle_problems"]

_UNCHANGED = object()
_ALLOWED = '"" to Stop or Terminate, or from Stop to Terminate'


def lifecycle_problems(job_flow: Mapping[str, Any], old_job_flow: Mapping[str, Any] | None = None) -> list[str]:
    """Every lifecycle problem of a CREATE (``old_job_flow`` None) or of an UPDATE from ``old_job_flow``."""
    spec, old_spec = _spec(job_flow), None if old_job_flow is None else _spec(old_job_flow)

    def changed(key: str) -> bool:
        return old_spec is None or spec.get(key, _UNCHANGED) != old_spec.get(key, _UNCHANGED)

    problems: list[str] = []
    for key in (ACTIVE_DEADLINE_SECONDS, TTL_SECONDS_AFTER_FINISHED):
        if changed(key):
            problems.extend(_seconds_problems(f"spec.{key}", spec.get(key)))
    old_deadlines = None if old_spec is None else _flow_deadlines(old_spec)
    for name, deadline in _flow_deadlines(spec):
        if old_deadlines is None or (name, deadline) not in old_deadlines:
            problems.extend(_seconds_problems(f'jobflow Flow "{name}": {ACTIVE_DEADLINE_SECONDS}', deadline))
    suspend = spec.get(SUSPEND)
    if changed(SUSPEND) and suspend is not None and not isinstance(suspend, bool):
        problems.append(f"spec.{SUSPEND}: must be true or false, got {excerpt(suspend)}")
    if changed(SHUTDOWN):
        problems.extend(_shutdown_problems(spec.get(SHUTDOWN), None if old_spec is None else old_spec.get(SHUTDOWN)))
    text = retry_request_text(job_flow)
    if text is not None and (old_job_flow is None or text != retry_request_text(old_job_flow)):
        problems.extend(retry_request_problems(text, {name for name, _ in _flows(spec)}))
    return problems


def _seconds_problems(where: str, value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        return [f"{where}: must be a whole number of seconds, got {excerpt(value)}"]
    if value < 0:
        return [f"{where}: must not be negative, got {value}"]
    return []


def _shutdown_problems(new: Any, old: Any) -> list[str]:
    new_value = "" if new is None else new
    if not isinstance(new_value, str) or new_value not in SHUTDOWN_VALUES:
        return [f'spec.{SHUTDOWN}: must be "", Stop or Terminate, got {excerpt(new)}']
    old_value = "" if old is None else old
    if old_value in SHUTDOWN_VALUES and not shutdown_change_allowed(old_value, new_value):
        return [
            f"spec.{SHUTDOWN}: cannot change from {excerpt(old_value)} to {excerpt(new_value)}:"
            f" it may only go from {_ALLOWED}"
        ]
    return []


def _flow_deadlines(spec: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(flow name, its ``activeDeadlineSeconds``) for each flow that sets one (not null), in spec order."""
    deadlines = [(name, flow.get(ACTIVE_DEADLINE_SECONDS)) for name, flow in _flows(spec)]
    return [(name, deadline) for name, deadline in deadlines if deadline is not None]


def _flows(spec: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    flows = spec.get("flows")
    if not isinstance(flows, Sequence) or isinstance(flows, str | bytes):
        return []
    return [(str(f.get("name") or ""), f) for f in flows if isinstance(f, Mapping)]


def _spec(job_flow: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = job_flow.get("spec") if isinstance(job_flow, Mapping) else None
    return spec if isinstance(spec, Mapping) else {}
