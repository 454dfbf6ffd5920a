"""The rules on `spec.flows[].dependsOn.probe` that admission can check without any Job.

Admission sees neither the targets' JobTemplates nor their Jobs, so it refuses only what is wrong
whatever they hold (`apis.probe.probe_problems`): shapes, task names, ports, paths, headers, pod
phases, and a probe on a flow without targets. Whether a target's Job has the task a probe names
only the controller can tell (the `InvalidProbe` event; docs/probe.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis.probe import PROBE_FIELD, probe_problems
from jobflow_controller.validation.rawflows import raw_flows

__all__ = ["flow_probe_problems"]


def flow_probe_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """``jobflow Flow "<flow>": dependsOn.probe...: <problem>`` for each problem, flows in spec order."""
    problems: list[str] = []
    for prefix, flow in raw_flows(job_flow):
        depends_on = flow.get("dependsOn")
        if not isinstance(depends_on, Mapping):
            continue
        has_targets = isinstance(depends_on.get("targets"), list) and bool(depends_on["targets"])
        problems.extend(
            f"{prefix}: {err}" for err in probe_problems(depends_on.get(PROBE_FIELD), has_targets=has_targets)
        )
    return problems
