"""The flows of a JobFlow as admission receives it: raw JSON that may have any shape.

The per-flow rules (patch, probe) each walk `spec.flows`, skip what is not an object, and name the
flow in their messages as `jobflow Flow "<name>"`, with an empty name when it has none (the DAG rules
report that). One walk for all of them, so they agree on what a flow is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any


def raw_flows(job_flow: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """`(message prefix, flow)` for each flow that is an object, in spec order."""
    spec = job_flow.get("spec")
    flows = spec.get("flows") if isinstance(spec, Mapping) else None
    if not isinstance(flows, Sequence) or isinstance(flows, str | bytes):
        return
    for flow in flows:
        if isinstance(flow, Mapping):
            name = flow.get("name")
            yield f'jobflow Flow "{name if isinstance(name, str) else ""}"', flow
