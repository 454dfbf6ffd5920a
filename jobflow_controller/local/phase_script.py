"""The simulator's phase scripts, and the status Volcano's job controller writes for each phase.

A Job's script is on its first task's pod-template annotation `sim.jobflow.volcano.sh/phases`, for
example `Pending:0.5s,Running:2s,Completed`. A Job that a JobFlow retry re-created (annotation
`flow.volcano.sh/retry-attempt: N`) follows the annotation `sim.jobflow.volcano.sh/phases-retry-N`
instead when the task template has one, so a test can script "fails, then succeeds on retry"
(docs/retry.md). For each phase the status is what Volcano writes: `state.phase` and its transition
time, the task pod counts, `retryCount` (bumped on `Restarting`, by the caller) and
`runningDuration` once the Job finishes. Pure functions: no I/O, the time passed in.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobflow_controller.apis import meta
from jobflow_controller.apis.meta import format_duration, format_time, parse_duration, parse_time
from jobflow_controller.apis.retry import job_attempt

PHASES_ANNOTATION = "sim.jobflow.volcano.sh/phases"
#: The prefix of the per-attempt scripts: `<prefix>1` for the first retry's Job, and so on.
RETRY_PHASES_ANNOTATION_PREFIX = "sim.jobflow.volcano.sh/phases-retry-"
DEFAULT_SCRIPT = "Pending:0.1s,Running:0.5s,Completed"

TERMINAL = frozenset({"Completed", "Failed", "Terminated", "Aborted"})
TRANSIENT = frozenset({"Pending", "Running", "Restarting", "Completing", "Aborting", "Terminating"})
#: Phases at which Volcano's killJob has run and recorded how long the Job ran.
FINISHING = frozenset({"Completing", "Aborting", "Terminating"}) | TERMINAL


class ScriptError(ValueError):
    """A phase script that cannot be followed; the message says where it is wrong."""


@dataclass(frozen=True)
class Step:
    phase: str
    seconds: float


def parse_script(text: str) -> list[Step]:
    """Parse `Phase:duration,...,TerminalPhase` into steps (the last one has no duration)."""
    parts = [p.strip() for p in text.split(",")]
    if not parts or parts == [""]:
        raise ScriptError("empty phase script")
    steps = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        phase, sep, duration = part.partition(":")
        phase = phase.strip()
        if last:
            if phase not in TERMINAL:
                raise ScriptError(f"the script must end in one of {sorted(TERMINAL)}, not {phase!r}")
            if sep:
                raise ScriptError(f"the last phase {phase!r} takes no duration")
            steps.append(Step(phase, 0.0))
            continue
        if phase not in TRANSIENT:
            raise ScriptError(f"{phase!r} at position {index + 1} is not one of {sorted(TRANSIENT)}")
        if not sep:
            raise ScriptError(f"{phase!r} at position {index + 1} needs a duration, e.g. {phase}:1s")
        try:
            seconds = parse_duration(duration)
        except ValueError as err:
            raise ScriptError(f"bad duration {duration!r} for {phase}: {err}") from None
        if seconds < 0:
            raise ScriptError(f"negative duration {duration!r} for {phase}")
        steps.append(Step(phase, seconds))
    return steps


def script_of(job: Mapping[str, Any]) -> str:
    """The first task's script for this Job's retry attempt, else its script, else the default."""
    tasks = (job.get("spec") or {}).get("tasks") or []
    if tasks:
        annotations = ((tasks[0].get("template") or {}).get("metadata") or {}).get("annotations") or {}
        attempt = job_attempt(job)
        if attempt > 0 and f"{RETRY_PHASES_ANNOTATION_PREFIX}{attempt}" in annotations:
            return str(annotations[f"{RETRY_PHASES_ANNOTATION_PREFIX}{attempt}"])
        if PHASES_ANNOTATION in annotations:
            return str(annotations[PHASES_ANNOTATION])
    return DEFAULT_SCRIPT


def job_status(job: Mapping[str, Any], phase: str, now: datetime.datetime, retry_count: int) -> dict[str, Any]:
    """The status Volcano's job controller would write for a Job entering `phase`."""
    tasks = (job.get("spec") or {}).get("tasks") or []
    counts = {"pending": 0, "running": 0, "succeeded": 0, "failed": 0, "terminating": 0, "unknown": 0}
    pod_phase = {
        "Pending": "Pending",
        "Restarting": "Pending",
        "Running": "Running",
        "Completing": "Succeeded",
        "Completed": "Succeeded",
        "Failed": "Failed",
        "Aborting": "Running",
        "Terminating": "Running",
    }.get(phase)
    counter = {"Pending": "pending", "Running": "running", "Succeeded": "succeeded", "Failed": "failed"}
    task_status_count: dict[str, Any] = {}
    for task in tasks:
        replicas = int(task.get("replicas") or 0)
        if pod_phase and replicas:
            task_status_count[str(task.get("name") or "")] = {"phase": {pod_phase: replicas}}
            counts[counter[pod_phase]] += replicas
    if phase in ("Aborting", "Terminating"):
        counts["terminating"], counts["running"] = counts["running"], 0
    status: dict[str, Any] = {
        "state": {"phase": phase, "lastTransitionTime": format_time(now)},
        "minAvailable": int((job.get("spec") or {}).get("minAvailable") or 0),
        "retryCount": retry_count,
        **counts,
    }
    if task_status_count:
        status["taskStatusCount"] = task_status_count
    created = meta.creation_timestamp(job)
    if phase in FINISHING and created:
        status["runningDuration"] = format_duration(max(0.0, (now - parse_time(created)).total_seconds()))
    return status
