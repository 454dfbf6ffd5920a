"""JobFlowStatus and its parts, serialised with upstream's exact JSON names and omitempty rules;
`jobStatusList` read by name, the one way (the first entry of a name, as upstream's lookup); and which
Jobs the status records as Completed (`recorded_completed`), the record that a Job ran to completion
and is never created again (jobflow/observe.py `DeletedJobs` bridges the moment before it is written).

Go's `omitempty` drops empty slices and maps; `metav1.Time` zero values marshal as null, which the
API server prunes (the schema is not nullable), so they are simply left out here. `state` is a
struct and is always present, as `{}` when the phase is empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.constants import JobPhase
from jobflow_controller.apis.results import recorded_results
from jobflow_controller.apis.retry import job_attempt


@dataclass
class JobRunningHistory:
    state: str
    start_timestamp: str | None = None
    end_timestamp: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.start_timestamp:
            out["startTimestamp"] = self.start_timestamp
        if self.end_timestamp:
            out["endTimestamp"] = self.end_timestamp
        if self.state:
            out["state"] = self.state
        return out

    @classmethod
    def from_dict(cls, raw: Any) -> JobRunningHistory:
        return cls(
            state=str(raw.get("state") or ""),
            start_timestamp=raw.get("startTimestamp") or None,
            end_timestamp=raw.get("endTimestamp") or None,
        )


@dataclass
class JobStatus:
    name: str
    state: str = ""
    start_timestamp: str | None = None
    end_timestamp: str | None = None
    restart_count: int = 0
    running_histories: list[JobRunningHistory] = field(default_factory=list)
    #: Ours (docs/results.md): what the Job's pod reported for its flow's declared names, once it
    #: ended (None: not read, or the flow declares none); written as `results`, even when empty.
    results: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        if self.state:
            out["state"] = self.state
        if self.start_timestamp:
            out["startTimestamp"] = self.start_timestamp
        if self.end_timestamp:
            out["endTimestamp"] = self.end_timestamp
        if self.restart_count:
            out["restartCount"] = self.restart_count
        if self.running_histories:
            out["runningHistories"] = [h.to_dict() for h in self.running_histories]
        if self.results is not None:
            out["results"] = dict(self.results)
        return out

    @classmethod
    def from_dict(cls, raw: Any) -> JobStatus:
        return cls(
            name=str(raw.get("name") or ""),
            state=str(raw.get("state") or ""),
            start_timestamp=raw.get("startTimestamp") or None,
            end_timestamp=raw.get("endTimestamp") or None,
            restart_count=int(raw.get("restartCount") or 0),
            running_histories=[JobRunningHistory.from_dict(h) for h in raw.get("runningHistories") or []],
            results=recorded_results(raw["results"]) if raw.get("results") is not None else None,
        )


@dataclass
class Condition:
    phase: str = ""
    create_timestamp: str | None = None
    running_duration: str | None = None
    task_status_count: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.phase:
            out["phase"] = self.phase
        if self.create_timestamp:
            out["createTime"] = self.create_timestamp
        if self.running_duration:
            out["runningDuration"] = self.running_duration
        if self.task_status_count:
            out["taskStatusCount"] = self.task_status_count
        return out


@dataclass
class JobFlowStatus:
    pending_jobs: list[str] = field(default_factory=list)
    running_jobs: list[str] = field(default_factory=list)
    failed_jobs: list[str] = field(default_factory=list)
    completed_jobs: list[str] = field(default_factory=list)
    terminated_jobs: list[str] = field(default_factory=list)
    un_know_jobs: list[str] = field(default_factory=list)
    job_status_list: list[JobStatus] = field(default_factory=list)
    conditions: dict[str, Condition] = field(default_factory=dict)
    phase: str = ""
    #: Ours (docs/rules.md): the Jobs of the flows Skipped because their rule can no longer be met
    #: (never created); written as `skippedJobs`, absent when empty.
    skipped_jobs: list[str] = field(default_factory=list)
    #: Ours (docs/lifecycle.md): since when the JobFlow is suspended (absent when it is not), when
    #: its phase became final (with a TTL), and the id of the last re-run request handled.
    suspended_since: str | None = None
    finished_at: str | None = None
    retry_request: str | None = None
    #: Ours (docs/results.md): the JobFlow's own results (`{name, value}`), resolved when it Succeeds;
    #: written as `results`, absent when None.
    results: list[dict[str, str]] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in (
            ("pendingJobs", self.pending_jobs),
            ("runningJobs", self.running_jobs),
            ("failedJobs", self.failed_jobs),
            ("completedJobs", self.completed_jobs),
            ("terminatedJobs", self.terminated_jobs),
            ("unKnowJobs", self.un_know_jobs),
        ):
            if value:
                out[key] = list(value)
        if self.skipped_jobs:
            out["skippedJobs"] = list(self.skipped_jobs)
        if self.job_status_list:
            out["jobStatusList"] = [s.to_dict() for s in self.job_status_list]
        if self.conditions:
            out["conditions"] = {k: c.to_dict() for k, c in self.conditions.items()}
        out["state"] = {"phase": self.phase} if self.phase else {}
        for key, stamp in (
            ("suspendedSince", self.suspended_since),
            ("finishedAt", self.finished_at),
            ("retryRequest", self.retry_request),
        ):
            if stamp:
                out[key] = stamp
        if self.results is not None:
            out["results"] = [dict(r) for r in self.results]
        return out


# -- jobStatusList by name ----------------------------------------------------------------------------
#: `RecordedEntries` reads a JobFlow's stored list (each entry parsed only when asked for: most flows
#: never read theirs); `JobStatusIndex` is the list a sync computes and merges into.
def recorded_entries(job_flow: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The status's `jobStatusList` by Job name (the first entry of a name, as upstream's lookup),
    unparsed: only the flows still waiting read theirs."""
    out: dict[str, Mapping[str, Any]] = {}
    for raw in jf.job_status_list(job_flow):
        out.setdefault(str(raw.get("name") or ""), raw)
    return out


class RecordedEntries:
    """The stored `jobStatusList` of a JobFlow by Job name (the first of a name), parsed when asked."""

    def __init__(self, job_flow: Mapping[str, Any]) -> None:
        self._raw = recorded_entries(job_flow)
        self._parsed: dict[str, JobStatus] = {}

    def get(self, name: str) -> JobStatus | None:
        entry = self._parsed.get(name)
        if entry is None:
            raw = self._raw.get(name)
            if raw is None:
                return None
            entry = self._parsed[name] = JobStatus.from_dict(raw)
        return entry


class JobStatusIndex:
    """`jobStatusList` with its positions by name, so that a sync stays linear in its Jobs.

    `merge` is upstream's: replace the first entry of the same name in place, or append (never
    pruned). A stored list may hold a name twice (written by hand); every lookup sees all of them.
    """

    def __init__(self, entries: list[JobStatus]) -> None:
        self.entries = entries
        self._at: dict[str, list[int]] = {}
        for i, entry in enumerate(entries):
            self._at.setdefault(entry.name, []).append(i)

    def first(self, name: str) -> JobStatus | None:
        at = self._at.get(name)
        return self.entries[at[0]] if at else None

    def named(self, name: str) -> list[JobStatus]:
        return [self.entries[i] for i in self._at.get(name, ())]

    def merge(self, entry: JobStatus) -> None:
        """Upstream's; the entry replaced keeps its `results` (docs/results.md) unless the new one has its own."""
        at = self._at.get(entry.name)
        if at:
            if entry.results is None:
                entry.results = self.entries[at[0]].results
            self.entries[at[0]] = entry
        else:
            self._at[entry.name] = [len(self.entries)]
            self.entries.append(entry)


# -- the Jobs the status records as Completed --------------------------------------------------------
def recorded_completed(job_flow: Mapping[str, Any]) -> set[str]:
    """The Job names that this JobFlow object's status records as Completed: a `jobStatusList` entry
    whose state is Completed (upstream never prunes that list, so the entry outlives the Job), or the
    name in `completedJobs`. Both belong to the object they were read from; a JobFlow deleted and
    re-created under the same name starts with an empty status, so nothing of the old one counts.

    Not those a re-run (docs/lifecycle.md) is creating again: their entry's last history is `Rerun`.
    """
    status = jf.status(job_flow)
    names: set[str] = set()
    again: set[str] = set()
    for entry in jf.job_status_list(job_flow):
        name = str(entry.get("name") or "")
        if _recreating(entry):
            again.add(name)
        elif entry.get("state") == JobPhase.COMPLETED:
            names.add(name)
    completed = status.get("completedJobs")
    if isinstance(completed, list):
        names.update(str(n) for n in completed)
    names.discard("")
    return names - again


def replaced_since_deleted(job_flow: Mapping[str, Any], remembered: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The remembered Jobs that a retry or a re-run has since replaced (their attempt is behind).

    A re-run deletes Completed Jobs to create them again; the memory of such a Job must not make
    its successor count as Completed.
    """
    if not remembered:
        return set()
    counts: dict[str, int] = {}
    for entry in jf.job_status_list(job_flow):
        name = str(entry.get("name") or "")
        histories = entry.get("runningHistories")
        if name in remembered and name not in counts and isinstance(histories, list):
            counts[name] = sum(1 for h in histories if isinstance(h, Mapping) and h.get("state") in jf.RECREATING)
    return {n for n, job in remembered.items() if counts.get(n, 0) > job_attempt(job)}


def _recreating(entry: Mapping[str, Any]) -> bool:
    histories = entry.get("runningHistories")
    if not isinstance(histories, list) or not histories or not isinstance(histories[-1], Mapping):
        return False
    return histories[-1].get("state") in jf.RECREATING
