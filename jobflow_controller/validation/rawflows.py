"""The flows of a JobFlow as admission receives it: raw JSON that may have any shape.

The per-flow rules (patch, probe) each walk `spec.flows`, skip what is not an object, and name the
flow in their messages as `jobflow Flow "<name>"`, with an empty name when it has none (the DAG rules
report that). One walk for all of them, so they agree on what a flow is. `spec.finally` entries
(JobTemplates run at the end, docs/rules.md) are walked the same way and named `jobflow Finally
"<name>"`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any


def raw_flows(job_flow: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """`(message prefix, flow)` for each flow that is an object, in spec order."""
    return _entries(job_flow, "flows", "Flow")


def raw_finally(job_flow: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """`(message prefix, entry)` for each `spec.finally` entry that is an object, in spec order."""
    return _entries(job_flow, "finally", "Finally")


def _entries(job_flow: Mapping[str, Any], field: str, kind: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    spec = job_flow.get("spec") if isinstance(job_flow, (dict, Mapping)) else None
    entries = spec.get(field) if isinstance(spec, (dict, Mapping)) else None
    if not isinstance(entries, Sequence) or isinstance(entries, str | bytes):
        return
    for entry in entries:
        if isinstance(entry, (dict, Mapping)):
            name = entry.get("name")
            yield f'jobflow {kind} "{name if isinstance(name, str) else ""}"', entry
