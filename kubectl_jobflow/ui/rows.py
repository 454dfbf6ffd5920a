"""One line of the list page per JobFlow: what the table shows, as JSON-ready dicts.

Ages and durations are left to the browser (it ticks them every second without asking again); the
server sends the two instants they are measured between.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import Phase
from jobflow_controller.apis.params import matrix, matrix_job_names

#: The status lists of Jobs that have an outcome. Terminated counts: issue 22 makes a Terminated
#: Job a Failed outcome of its flow.
DONE_LISTS = ("completedJobs", "failedJobs", "terminatedJobs", "skippedJobs")
FINISHED = frozenset({Phase.SUCCEED, Phase.FAILED})


def key(job_flow: Mapping[str, Any]) -> str:
    """The JobFlow's cache key (`namespace/name`), how the page and the server name it."""
    return f"{meta.namespace(job_flow)}/{meta.name(job_flow)}"


def flow_job_names(job_flow: Mapping[str, Any]) -> list[list[str]]:
    """The Job names of each distinct flow of `spec.flows` (not `spec.finally`), in spec order: its one
    Job `<jobflow>-<flow>`, or a matrix flow's `<jobflow>-<flow>` (its name while Skipped) and its Jobs."""
    name = meta.name(job_flow)
    out: dict[str, list[str]] = {}
    for flow in jf.flows(job_flow):
        found = matrix(flow.matrix)
        sizes = [] if found is None else matrix_job_names(name, flow.name, found)
        out.setdefault(flow.name, [jf.job_name(name, flow.name), *sizes])
    return list(out.values())


def progress(job_flow: Mapping[str, Any]) -> tuple[int, int]:
    """(flows with an outcome, flows): Completed, Failed, Terminated or Skipped over `spec.flows`.

    A matrix flow has one once it is Skipped, or every one of its Jobs has an outcome."""
    status = jf.status(job_flow)
    done: set[str] = set()
    for list_name in DONE_LISTS:
        value = status.get(list_name)
        if isinstance(value, list):
            done.update(str(v) for v in value)
    flows = flow_job_names(job_flow)
    ended = sum(1 for names in flows if names[0] in done or (len(names) > 1 and all(n in done for n in names[1:])))
    return ended, len(flows)


def finished_at(job_flow: Mapping[str, Any]) -> str | None:
    """When a Succeed or Failed JobFlow finished: `status.finishedAt` (issue 23), else the last end
    of its Jobs, else None; None too while it has not finished."""
    if jf.phase(job_flow) not in FINISHED:
        return None
    status = jf.status(job_flow)
    if status.get("finishedAt"):
        return str(status["finishedAt"])
    ends = [str(e["endTimestamp"]) for e in jf.job_status_list(job_flow) if e.get("endTimestamp")]
    # RFC 3339 times in UTC with the same precision sort as strings.
    return max(ends, default=None)


def list_row(job_flow: Mapping[str, Any]) -> dict[str, Any]:
    done, total = progress(job_flow)
    spec = jf.spec(job_flow)
    status = jf.status(job_flow)
    return {
        "key": key(job_flow),
        "namespace": meta.namespace(job_flow),
        "name": meta.name(job_flow),
        "phase": jf.phase(job_flow) or "Pending",
        "done": done,
        "total": total,
        "created": meta.creation_timestamp(job_flow),
        "finished": finished_at(job_flow),
        "suspended": bool(spec.get("suspend")) or bool(status.get("suspendedSince")),
        "shutdown": str(spec.get("shutdown") or ""),
    }


def list_rows(job_flows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return sorted((list_row(f) for f in job_flows), key=lambda r: (r["namespace"], r["name"]))
