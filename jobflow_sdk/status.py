"""What a JobFlow's status says about each flow, read from the status the controller writes.

A flow's Job is `<jobflow>-<flow>` (a matrix flow's are `<jobflow>-<flow>-<i>`); its state is the
Job's phase from `status.jobStatusList` or `status.conditions`, `Skipped` when the Job is in
`status.skippedJobs`, `Waiting` when there is none yet. A matrix flow is Failed if one of its Jobs
is, Completed once all are, else Running. Pure: a dict in, names and states out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis.jobflow import job_name

WAITING, SKIPPED = "Waiting", "Skipped"
#: Job phases a flow has ended in.
ENDED = frozenset({"Completed", "Failed", "Terminated", "Aborted", SKIPPED})


def flow_names(job_flow: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The flows' and the finally flows' names, in spec order."""
    spec = job_flow.get("spec") or {}
    flows = [str(f.get("name")) for f in spec.get("flows") or [] if isinstance(f, Mapping)]
    return flows, [str(f.get("name")) for f in spec.get("finally") or [] if isinstance(f, Mapping)]


def _job_phases(status: Mapping[str, Any]) -> dict[str, str]:
    phases: dict[str, str] = {}
    conditions = status.get("conditions")
    for job, condition in (conditions if isinstance(conditions, Mapping) else {}).items():
        phases[str(job)] = str((condition or {}).get("phase") or "")
    for entry in status.get("jobStatusList") or []:
        phases[str(entry.get("name"))] = str(entry.get("state") or phases.get(str(entry.get("name")), ""))
    for job in status.get("skippedJobs") or []:
        phases[str(job)] = SKIPPED
    return phases


def _combined(phases: list[str]) -> str:
    if not phases:
        return WAITING
    if len(phases) == 1:
        return phases[0] or WAITING
    if "Failed" in phases:
        return "Failed"
    if all(p == "Completed" for p in phases):
        return "Completed"
    return "Running"


def flow_states(job_flow: Mapping[str, Any]) -> dict[str, str]:
    """Each flow's (and finally flow's) state, in spec order."""
    name = str((job_flow.get("metadata") or {}).get("name") or "")
    phases = _job_phases(job_flow.get("status") or {})
    flows, finally_flows = flow_names(job_flow)
    states: dict[str, str] = {}
    for flow in flows + finally_flows:
        job = job_name(name, flow)
        mine = [p for j, p in phases.items() if j == job or (j.startswith(job + "-") and j[len(job) + 1 :].isdigit())]
        states[flow] = _combined(mine)
    return states


def progress_line(job_flow: Mapping[str, Any]) -> str:
    """`ml-pipeline: Running, 1/3 flows ended (running: model-training)`."""
    name = (job_flow.get("metadata") or {}).get("name")
    phase = ((job_flow.get("status") or {}).get("state") or {}).get("phase") or "Pending"
    states = flow_states(job_flow)
    ended = sum(1 for s in states.values() if s in ENDED)
    running = [f for f, s in states.items() if s == "Running"]
    line = f"{name}: {phase}, {ended}/{len(states)} flows ended"
    return line + (f" (running: {', '.join(running)})" if running else "")
