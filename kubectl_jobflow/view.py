"""What `kubectl jobflow` shows of a JobFlow: its flows as a DAG, each with a phase, a duration and restarts.

Built from the JobFlow (spec and status) and the Jobs it controls, read once; the renderers in
`render` only format it. Where the two sources disagree the Job wins, because it is fresher: the
status is what the controller wrote at its last sync, the Job what Volcano's job controller says
now. The status is what remains once the Jobs are gone (`jobRetainPolicy: delete`, or a Job
deleted by hand), so a finished pipeline still shows every flow's outcome.

The failure-aware fields (docs/rules.md) show too: a flow the controller Skipped (its rule can no
longer be met: listed in `status.skippedJobs`, it has no Job) is `Skipped`; each flow carries its
`dependsOn.rule` when it is not the default; `spec.finally`'s JobTemplates are rows of their own,
their Jobs `<jobflow>-<name>` read like the flows'. A matrix flow (docs/params.md) is one row for its
Jobs `<jobflow>-<flow>-<i>`, with their counts by phase and their own rows (matrix_view.py).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import JobPhase, Phase
from jobflow_controller.apis.jobflowtemplate import effective_job_flow, template_ref_name
from jobflow_controller.apis.lifecycle_fields import SHUTDOWN, SUSPEND, SUSPENDED_SINCE
from jobflow_controller.apis.meta import add_duration, parse_time
from jobflow_controller.apis.params import matrix, matrix_job_name
from jobflow_controller.apis.results import recorded_results
from jobflow_controller.apis.rules import Rule, finally_flows
from kubectl_jobflow.matrix_view import counts_note, summarize

#: A flow whose Job does not exist yet and never did, while the JobFlow can still create it.
WAITING = "Waiting"
#: A flow whose Job was never created and never will be: the JobFlow is Succeed or Failed.
NOT_CREATED = "NotCreated"
#: A flow whose rule can no longer be met (`status.skippedJobs`): no Job, by design.
SKIPPED = "Skipped"
#: A matrix flow with more combinations than allowed (docs/params.md): the JobFlow is invalid, and
#: its Jobs are not listed (there may be 256^16 of them).
INVALID = "Invalid"

#: Job phases after which a Job's duration stops growing.
FINISHED_JOB_PHASES = frozenset({JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.TERMINATED, JobPhase.ABORTED})
FINISHED_FLOW_PHASES = frozenset({Phase.SUCCEED, Phase.FAILED})


@dataclass(frozen=True)
class FlowRow:
    """One flow of `spec.flows` and the state of its Job `<jobflow>-<flow>`."""

    name: str
    job: str
    #: The flows it depends on, in spec order, without duplicates (empty for a root).
    targets: tuple[str, ...]
    phase: str
    #: Seconds from the Job's creation to its end (or to now while it runs); None if never created.
    duration: float | None
    #: `jobStatusList[].restartCount`, else the Job's `status.retryCount`; None if never created.
    restarts: int | None
    #: `dependsOn.rule` when set and not the default `AllCompleted`: the rule of every edge into it.
    rule: str | None = None
    #: A matrix flow (docs/params.md): its Jobs' rows, in index order, and how many are in each phase.
    jobs: tuple[FlowRow, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()
    #: Ours (docs/results.md): what its Job reported, `name=value` (a matrix flow: `name=[v0,v1]`); "" if none.
    results: str = ""

    @property
    def counts_note(self) -> str:
        """`6 Jobs: 4 Completed, 2 Running` for a matrix flow; "" for any other."""
        return counts_note(len(self.jobs), self.counts) if self.jobs else ""


@dataclass(frozen=True)
class FlowView:
    namespace: str
    name: str
    phase: str
    #: Seconds since the JobFlow was created.
    age: float | None
    flows: tuple[FlowRow, ...]
    #: `spec.finally`, in spec order: JobTemplates run once no flow can run any more.
    finally_flows: tuple[FlowRow, ...] = ()
    #: `spec.suspend` is true; for how long, from `status.suspendedSince`, once the controller saw it.
    suspended: bool = False
    suspended_for: float | None = None
    #: `spec.shutdown` (Stop, Terminate) when set.
    shutdown: str = ""
    #: The JobFlowTemplate a run was made from (docs/templates.md), "" for any other JobFlow.
    template: str = ""

    def row(self, name: str) -> FlowRow | None:
        return next((f for f in self.flows if f.name == name), None)

    def finally_row(self, name: str) -> FlowRow | None:
        return next((f for f in self.finally_flows if f.name == name), None)


def build_view(job_flow: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]], now: datetime.datetime) -> FlowView:
    """The view of `job_flow` at `now`; `jobs` may hold any Jobs, only those it controls count. A run
    from a template is shown with the spec it was fixed to (docs/templates.md)."""
    template = template_ref_name(job_flow) or ""
    job_flow = effective_job_flow(job_flow)
    flow_name = meta.name(job_flow)
    owned = {meta.name(j): j for j in jobs if meta.is_controlled_by(j, job_flow)}
    entries = {str(e.get("name") or ""): e for e in jf.job_status_list(job_flow)}
    conditions = jf.status(job_flow).get("conditions")
    conditions = conditions if isinstance(conditions, Mapping) else {}
    skipped = jf.status(job_flow).get("skippedJobs")
    source = _Source(
        flow_name,
        owned,
        entries,
        conditions,
        frozenset(str(s) for s in skipped) if isinstance(skipped, list) else frozenset(),
        jf.phase(job_flow),
        now,
    )
    rows: list[FlowRow] = []
    seen: set[str] = set()
    for flow in jf.flows(job_flow):
        if flow.name in seen:  # a duplicate name (admission refuses it): the first one is the flow shown
            continue
        seen.add(flow.name)
        rule = flow.rule if flow.rule and flow.rule != Rule.ALL_COMPLETED else None
        targets = tuple(dict.fromkeys(flow.targets or ()))
        found = matrix(flow.matrix)
        if found is None:
            rows.append(source.row(flow.name, targets, rule))
        elif found.oversized:
            rows.append(FlowRow(flow.name, jf.job_name(flow_name, flow.name), targets, INVALID, None, None, rule))
        else:
            rows.append(source.matrix_row(flow.name, found.size, targets, rule))
    finally_names = dict.fromkeys(f.name for f in finally_flows(job_flow) if f.name)
    finally_rows = [source.row(name, (), None) for name in finally_names]
    created = meta.creation_timestamp(job_flow)
    age = _seconds(parse_time(created), now) if created else None
    raw_spec = job_flow.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    since = jf.status(job_flow).get(SUSPENDED_SINCE)
    return FlowView(
        meta.namespace(job_flow),
        flow_name,
        source.flow_phase,
        age,
        tuple(rows),
        tuple(finally_rows),
        suspended=spec.get(SUSPEND) is True,
        suspended_for=_seconds(parse_time(str(since)), now) if since else None,
        shutdown=str(spec.get(SHUTDOWN) or ""),
        template=template,
    )


@dataclass(frozen=True)
class _Source:
    """What one JobFlow's rows are read from: its Jobs, its status, and the time."""

    flow_name: str
    jobs: Mapping[str, Mapping[str, Any]]
    entries: Mapping[str, Mapping[str, Any]]
    conditions: Mapping[str, Any]
    skipped: frozenset[str]
    flow_phase: str
    now: datetime.datetime

    def matrix_row(self, name: str, size: int, targets: tuple[str, ...], rule: str | None) -> FlowRow:
        """One node for a matrix flow's Jobs (matrix_view.py); Skipped as a whole when listed so."""
        job_name = jf.job_name(self.flow_name, name)
        jobs = tuple(self.row(name, (), None, matrix_job_name(self.flow_name, name, i)) for i in range(size))
        idle = frozenset({WAITING, NOT_CREATED})
        if job_name in self.skipped and all(j.phase in idle for j in jobs):
            return FlowRow(name, job_name, targets, SKIPPED, None, None, rule, jobs, ((SKIPPED, size),))
        summary = summarize(jobs, idle)
        names = [matrix_job_name(self.flow_name, name, i) for i in range(size)]
        return FlowRow(
            name,
            job_name,
            targets,
            summary.phase,
            summary.duration,
            summary.restarts,
            rule,
            jobs,
            summary.counts,
            results=results_note([self.entries.get(n) for n in names], matrix=True),
        )

    def row(self, name: str, targets: tuple[str, ...], rule: str | None, job_name: str = "") -> FlowRow:
        job_name = job_name or jf.job_name(self.flow_name, name)
        condition = self.conditions.get(job_name)
        condition = condition if isinstance(condition, Mapping) else None
        job, entry = self.jobs.get(job_name), self.entries.get(job_name)
        if job is None and entry is None and condition is None and job_name in self.skipped:
            return FlowRow(name, job_name, targets, SKIPPED, None, None, rule)
        return _row(name, job_name, targets, job, entry, condition, self.flow_phase, self.now, rule)


def _row(
    name: str,
    job_name: str,
    targets: tuple[str, ...],
    job: Mapping[str, Any] | None,
    entry: Mapping[str, Any] | None,
    condition: Mapping[str, Any] | None,
    flow_phase: str,
    now: datetime.datetime,
    rule: str | None = None,
) -> FlowRow:
    phase = (vcjob.phase(job) if job is not None else "") or str((entry or {}).get("state") or "")
    phase = phase or str((condition or {}).get("phase") or "")
    start_text = (meta.creation_timestamp(job) if job is not None else None) or (entry or {}).get("startTimestamp")
    start_text = start_text or (condition or {}).get("createTime")
    if job is None and entry is None and condition is None:
        never = flow_phase in FINISHED_FLOW_PHASES
        return FlowRow(name, job_name, targets, NOT_CREATED if never else WAITING, None, None, rule)
    duration: float | None = None
    if start_text:
        start = parse_time(str(start_text))
        if phase in FINISHED_JOB_PHASES:
            end = _end(start, job, entry, condition)
            duration = _seconds(start, end) if end is not None else None
        else:
            duration = _seconds(start, now)
    if entry is not None:
        restarts = int(entry.get("restartCount") or 0)
    else:
        restarts = vcjob.retry_count(job) if job is not None else 0
    return FlowRow(name, job_name, targets, phase or "Unknown", duration, restarts, rule, results=results_note([entry]))


def results_note(entries: list[Mapping[str, Any] | None], *, matrix: bool = False) -> str:
    """`accuracy=0.93 model=s3://m/42` from the entries' recorded results; a matrix flow's values of a
    name joined in index order (`loss=[0.1,0.2]`, a Job not read yet shown as `?`); "" when none."""
    read = [recorded_results(e.get("results")) if isinstance(e, Mapping) else None for e in entries]
    if all(r is None for r in read):
        return ""
    names = list(dict.fromkeys(n for r in read if r for n in r))
    if not matrix:
        return " ".join(f"{n}={(read[0] or {})[n]}" for n in names)
    return " ".join(f"{n}=[{','.join((r or {}).get(n, '?') for r in read)}]" for n in names)


def _end(
    start: datetime.datetime,
    job: Mapping[str, Any] | None,
    entry: Mapping[str, Any] | None,
    condition: Mapping[str, Any] | None,
) -> datetime.datetime | None:
    """When a finished Job ended: creation plus the Job's `runningDuration` (what the controller
    writes as `endTimestamp`, but fresher), else the status' `endTimestamp` or condition."""
    running = (vcjob.running_duration(job) if job is not None else None) or (condition or {}).get("runningDuration")
    if running:
        try:
            return add_duration(start, str(running))
        except ValueError:
            pass
    end_text = (entry or {}).get("endTimestamp")
    return parse_time(str(end_text)) if end_text else None


def _seconds(start: datetime.datetime, end: datetime.datetime) -> float:
    return max(0.0, (end - start).total_seconds())
