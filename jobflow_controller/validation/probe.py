"""The rules on `spec.flows[].dependsOn.probe` that admission can check without any Job.

Admission sees neither the targets' JobTemplates nor their Jobs, so it refuses only what is wrong
whatever they hold (`apis.probe.probe_problems`): shapes, task names, ports, paths, headers, pod
phases, and a probe on a flow without targets. Whether a target's Job has the task a probe names
only the controller can tell (the `InvalidProbe` event; docs/probe.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jobflow_controller.apis.probe import PROBE_FIELD, probe_problems

__all__ = ["flow_probe_problems"]


def flow_probe_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """``jobflow Flow "<flow>": dependsOn.probe...: <problem>`` for each problem, flows in spec order."""
    spec = job_flow.get("spec")
    flows = spec.get("flows") if isinstance(spec, Mapping) else None
    if not isinstance(flows, Sequence) or isinstance(flows, str | bytes):
        return []
    problems: list[str] = []
    for flow in flows:
        if not isinstance(flow, Mapping):
            continue
        depends_on = flow.get("dependsOn")
        if not isinstance(depends_on, Mapping):
            continue
        name = flow.get("name")
        label = name if isinstance(name, str) else ""
        has_targets = isinstance(depends_on.get("targets"), list) and bool(depends_on["targets"])
        problems.extend(
            f'jobflow Flow "{label}": {err}'
            for err in probe_problems(depends_on.get(PROBE_FIELD), has_targets=has_targets)
        )
    return problems
