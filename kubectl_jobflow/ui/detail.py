"""The JobFlow page as JSON: every flow with its phase and place in the drawing, each Job's record
(running histories, restarts, condition, events), the JobFlow's events and lifecycle fields.

Flow phases come from `kubectl_jobflow.view` (the Job when it exists, else the status), so the page
and `kubectl jobflow tree` never disagree; this module adds what only the page shows: `Skipped`
(issue 22's `status.skippedJobs`), the `finally` flows, the rules on the edges, and the records.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION
from kubectl_jobflow.ui import results_view
from kubectl_jobflow.ui.layout import Layout
from kubectl_jobflow.ui.rows import finished_at, list_row
from kubectl_jobflow.view import NOT_CREATED, WAITING, FlowRow, build_view

#: A flow whose rule can no longer be met: no Job, its Job name in `status.skippedJobs`.
SKIPPED = "Skipped"
#: The rule of a `dependsOn` without one: every target Completed (upstream's only rule).
DEFAULT_RULE = "AllCompleted"
#: Events kept per object, newest last; a Job retried many times has many.
MAX_EVENTS = 50
#: Bounds on the page's size (issue 33): the Job events of all nodes together (a 500-flow JobFlow
#: shows the newest 4 of each Job), the characters of an event's message and reason, and the
#: running histories of a Job. With the drawing's own caps (layout.py) a page stays a few MiB.
MAX_PAGE_JOB_EVENTS = 2_000
MAX_MESSAGE = 1_024
MAX_REASON = 128
MAX_HISTORIES = 50

#: (kind, namespace, name) -> the events about that object.
EventLookup = Callable[[str, str, str], Sequence[Mapping[str, Any]]]


@dataclass(frozen=True)
class Shape:
    """What the drawing depends on, and nothing else: a phase change keeps the layout."""

    flows: tuple[str, ...]
    targets: tuple[tuple[str, tuple[str, ...]], ...]
    finally_flows: tuple[str, ...]
    #: It declares results (results_view.py): its boxes have room for them.
    results: bool = False


def _raw_flows(job_flow: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    value = jf.spec(job_flow).get(field)
    return [f for f in value if isinstance(f, Mapping) and f.get("name")] if isinstance(value, list) else []


def _depends_on(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    value = raw.get("dependsOn")
    return value if isinstance(value, Mapping) else {}


def shape(job_flow: Mapping[str, Any]) -> Shape:
    flows = list(dict.fromkeys(f.name for f in jf.flows(job_flow) if f.name))
    targets = {f.name: tuple(f.targets or ()) for f in reversed(jf.flows(job_flow))}  # first entry wins
    finally_flows = [str(f["name"]) for f in _raw_flows(job_flow, "finally") if str(f["name"]) not in targets]
    declares = results_view.declares_results(job_flow)
    return Shape(tuple(flows), tuple((n, targets[n]) for n in flows), tuple(dict.fromkeys(finally_flows)), declares)


def layout_json(layout: Layout, job_flow: Mapping[str, Any]) -> dict[str, Any]:
    """Node boxes by flow name, and edges labelled with the dependent's rule when not the default."""
    rules = {str(f["name"]): str(_depends_on(f).get("rule") or "") for f in _raw_flows(job_flow, "flows")}
    return {
        "width": round(layout.width),
        "height": round(layout.height),
        "crossings": layout.crossings,
        "mode": layout.mode,
        "nodeHeight": round(results_view.geometry(results_view.declares_results(job_flow)).node_height),
        "omittedEdges": layout.omitted_edges,
        "boxes": {n.name: [round(n.x), round(n.y)] for n in layout.nodes},
        "edges": [
            {
                "from": e.source,
                "to": e.target,
                "points": [[round(x), round(y)] for x, y in e.points],
                "label": rules.get(e.target, "") if rules.get(e.target, DEFAULT_RULE) != DEFAULT_RULE else "",
            }
            for e in layout.edges
        ],
    }


def _skipped(job_flow: Mapping[str, Any]) -> set[str]:
    value = jf.status(job_flow).get("skippedJobs")
    return {str(v) for v in value} if isinstance(value, list) else set()


def flow_rows(
    job_flow: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]], now: datetime.datetime
) -> list[tuple[FlowRow, bool]]:
    """(row, is a finally flow) for every flow, `spec.flows` then `spec.finally`. A finally entry
    names its Job and sits in the status lists exactly as a flow does (issue 22), so the same view
    reads it."""
    finally_entries = [{"name": n} for n in shape(job_flow).finally_flows]
    finally_view = {**job_flow, "spec": {"flows": finally_entries}}
    skipped = _skipped(job_flow)
    out: list[tuple[FlowRow, bool]] = []
    for view, final in ((build_view(job_flow, jobs, now), False), (build_view(finally_view, jobs, now), True)):
        for row in view.flows:
            if row.phase in (WAITING, NOT_CREATED) and row.job in skipped:
                row = FlowRow(row.name, row.job, row.targets, SKIPPED, None, None, jobs=row.jobs, counts=row.counts)
            out.append((row, final))
    return out


def clip(value: Any, limit: int) -> str:
    """`value` as text of at most `limit` characters (an ellipsis says it was cut)."""
    text = str(value or "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def event_rows(events: Iterable[Mapping[str, Any]], keep: int = MAX_EVENTS) -> list[dict[str, Any]]:
    """Events oldest first (by last occurrence), the newest `keep` (at most `MAX_EVENTS`), as the
    page lists them, their texts clipped."""
    rows: list[dict[str, Any]] = []
    for event in events:
        last = event.get("lastTimestamp") or event.get("eventTime") or meta.creation_timestamp(event)
        rows.append(
            {
                "type": clip(event.get("type"), MAX_REASON),
                "reason": clip(event.get("reason"), MAX_REASON),
                "message": clip(event.get("message"), MAX_MESSAGE),
                "count": _count(event.get("count")),
                "last": clip(last, MAX_REASON),
            }
        )
    rows.sort(key=lambda r: str(r["last"]))
    keep = max(0, min(keep, MAX_EVENTS))
    return rows[len(rows) - keep :]


def job_record(
    job_flow: Mapping[str, Any], row: FlowRow, events: EventLookup, keep: int = MAX_EVENTS
) -> dict[str, Any]:
    """What clicking a node shows: the status' record of its Job and its newest `keep` events."""
    entry = next((e for e in jf.job_status_list(job_flow) if e.get("name") == row.job), {})
    conditions = jf.status(job_flow).get("conditions")
    condition = conditions.get(row.job) if isinstance(conditions, Mapping) else None
    return {
        "restartCount": int(entry.get("restartCount") or 0),
        "runningHistories": list(entry.get("runningHistories") or [])[-MAX_HISTORIES:],
        "startTimestamp": entry.get("startTimestamp"),
        "endTimestamp": entry.get("endTimestamp"),
        "condition": dict(condition) if isinstance(condition, Mapping) else None,
        "events": event_rows(events("Job", meta.namespace(job_flow), row.job), keep),
        "results": results_view.job_results(job_flow, [j.job for j in row.jobs] or [row.job]),
    }


def _flow_specs(job_flow: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    specs: dict[str, Mapping[str, Any]] = {}
    for raw in _raw_flows(job_flow, "flows") + _raw_flows(job_flow, "finally"):
        specs.setdefault(str(raw["name"]), raw)
    return specs


def node(row: FlowRow, final: bool, raw: Mapping[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    depends_on = _depends_on(raw)
    return {
        "name": row.name,
        "job": row.job,
        "phase": row.phase,
        "finally": final,
        "targets": list(row.targets),
        "rule": str(depends_on.get("rule") or (DEFAULT_RULE if row.targets else "")),
        "continueOnFailure": bool(raw.get("continueOnFailure")),
        "activeDeadlineSeconds": raw.get("activeDeadlineSeconds"),
        "duration": row.duration,
        "restarts": row.restarts,
        "record": record,
        "results": results_view.node_line(row),
        # A matrix flow (docs/params.md): its Jobs' counts by phase, and each Job when the node is opened.
        "counts": [list(c) for c in row.counts],
        "jobs": [{"job": j.job, "phase": j.phase, "duration": j.duration, "restarts": j.restarts} for j in row.jobs],
    }


def page(
    job_flow: Mapping[str, Any],
    jobs: Sequence[Mapping[str, Any]],
    events: EventLookup,
    drawing: Mapping[str, Any],
    actions: Mapping[str, Any],
    now: datetime.datetime,
) -> dict[str, Any]:
    """Everything the JobFlow page draws, in one document (pushed whole on every change)."""
    specs = _flow_specs(job_flow)
    rows = flow_rows(job_flow, jobs, now)
    keep = max(1, MAX_PAGE_JOB_EVENTS // max(len(rows), 1))
    nodes = [node(row, final, specs.get(row.name, {}), job_record(job_flow, row, events, keep)) for row, final in rows]
    spec = jf.spec(job_flow)
    status = jf.status(job_flow)
    annotations = meta.metadata(job_flow).get("annotations") or {}
    return {
        **list_row(job_flow),
        "uid": meta.uid(job_flow),
        "finished": finished_at(job_flow),
        "failurePolicy": str(spec.get("failurePolicy") or "FailFast"),
        "suspend": bool(spec.get("suspend")),
        "suspendedSince": status.get("suspendedSince"),
        "activeDeadlineSeconds": spec.get("activeDeadlineSeconds"),
        "ttlSecondsAfterFinished": spec.get("ttlSecondsAfterFinished"),
        "retryRequest": status.get("retryRequest"),
        "retryRequested": annotations.get(RETRY_REQUEST_ANNOTATION),
        "nodes": nodes,
        "results": results_view.own_results(job_flow),
        "drawing": drawing,
        "events": event_rows(events("JobFlow", meta.namespace(job_flow), meta.name(job_flow))),
        "actions": actions,
    }
