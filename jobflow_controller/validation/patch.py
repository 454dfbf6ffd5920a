"""The rules on `spec.flows[].patch` that admission can check without the JobTemplate.

Admission cannot see the template, so it checks the patch's shape (`apis.patch.patch_problems`):
`patch` and `patch.jobSpec` are objects, the keyed lists are arrays of objects, every entry has its
key (a task its name), no two entries of a list share one. Whether each patch task names a task of
the template only the controller can tell (the `InvalidPatch` event; docs/patch.md). With
`--jobflow-patch-allowed-fields`, the fields a patch sets outside the allowed ones
(`apis.patch_fields`), for each flow whose patch has the right shape. A `spec.finally` entry's
`patch` is a flow's patch in every respect: the same rules, after the flows' (docs/rules.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from jobflow_controller.apis.patch import patch_problems
from jobflow_controller.apis.patch_fields import PatchFields, patch_field_problems
from jobflow_controller.validation.rawflows import raw_finally, raw_flows

__all__ = ["flow_patch_field_problems", "flow_patch_problems"]


def flow_patch_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """``jobflow Flow "<flow>": <path>: <problem>`` for each problem, flows in spec order, then
    ``jobflow Finally "<name>": <path>: <problem>`` for the finally entries'."""
    return [f"{prefix}: {err}" for prefix, flow in _patched(job_flow) for err in patch_problems(flow.get("patch"))]


def flow_patch_field_problems(job_flow: Mapping[str, Any], fields: PatchFields | None) -> list[str]:
    """``jobflow Flow "<flow>": <path>: not among the fields a patch may set (...)`` for each field a
    well-shaped patch sets outside ``fields`` (None allows every field), flows in spec order, then the
    finally entries (``jobflow Finally "<name>": ...``)."""
    if fields is None:
        return []
    return [
        f"{prefix}: {err}"
        for prefix, flow in _patched(job_flow)
        if not patch_problems(flow.get("patch"))
        for err in patch_field_problems(flow.get("patch"), fields)
    ]


def _patched(job_flow: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Everything that may carry a ``patch``: the flows, then the finally entries."""
    yield from raw_flows(job_flow)
    yield from raw_finally(job_flow)
