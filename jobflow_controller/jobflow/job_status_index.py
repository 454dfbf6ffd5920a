"""`jobStatusList` read by name, the one way: the first entry of a name, as upstream's lookup.

`RecordedEntries` reads a JobFlow's stored list (each entry parsed only when asked for: most flows
never read theirs); `JobStatusIndex` is the list a sync computes and merges into.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.status import JobStatus

Obj = Mapping[str, Any]


def recorded_entries(job_flow: Obj) -> dict[str, Obj]:
    """The status's `jobStatusList` by Job name (the first entry of a name, as upstream's lookup),
    unparsed: only the flows still waiting read theirs."""
    out: dict[str, Obj] = {}
    for raw in jf.job_status_list(job_flow):
        out.setdefault(str(raw.get("name") or ""), raw)
    return out


class RecordedEntries:
    """The stored `jobStatusList` of a JobFlow by Job name (the first of a name), parsed when asked."""

    def __init__(self, job_flow: Obj) -> None:
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
