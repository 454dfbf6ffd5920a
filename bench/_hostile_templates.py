"""bench/hostile.py's JobFlowTemplate scenario (docs/templates.md): a template with the largest spec a
run may store, and many runs of it at once, beside the bystanders.

``template_hostile``: in a namespace the webhook does not admit (the controller checks everything
itself), one JobFlowTemplate of 500 flows (the flows' cap) whose `when` values bring its spec to about
400 KB of JSON (under the 512 KiB a run may store), every flow Skipped by its `when` (no Job: the
load is the resolution, its checks and the stored specs), and `TEMPLATE_RUNS` runs of it created at
once. Reported: how long until every run is resolved (its spec stored) and final, the stored specs'
size, the Warnings. `bench` is hostile.py's `Bench`.
"""

from __future__ import annotations

import time
from typing import Any, Final

from bench._common import create_namespace, log
from jobflow_controller.apis.jobflowtemplate import STORED_SPEC_FIELD
from jobflow_controller.kube.resources import EVENTS
from jobflow_controller.validation.limits import MAX_FLOWS

NAMESPACE: Final = "hostile-templates"
TEMPLATE_RUNS: Final = 40
#: Each flow's `when` values: 4 of 190 characters (about 800 bytes of JSON a flow, 400 KB in all).
WHEN_VALUES: Final = 4
WHEN_VALUE_LENGTH: Final = 190
WINDOW: Final = 120.0


def _template() -> dict[str, Any]:
    values = [chr(ord("a") + i) * WHEN_VALUE_LENGTH for i in range(WHEN_VALUES)]
    flows = [
        {"name": f"f{i:03d}", "when": [{"input": "$(params.mode)", "operator": "in", "values": values}]}
        for i in range(MAX_FLOWS)
    ]
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlowTemplate",
        "metadata": {"name": "largest", "namespace": NAMESPACE},
        "spec": {"params": [{"name": "mode", "default": "skip"}, {"name": "tag"}], "jobFlow": {"flows": flows}},
    }


def _run(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": f"run-{i:03d}", "namespace": NAMESPACE},
        "spec": {"jobFlowTemplateRef": {"name": "largest"}, "params": [{"name": "tag", "value": str(i)}]},
    }


def template_hostile(bench: Any, no_webhook_label: str) -> dict[str, Any]:
    create_namespace(bench.clientset, NAMESPACE, {no_webhook_label: "true"})
    client = bench.clientset.job_flows(NAMESPACE)
    bench.clientset.job_flow_templates(NAMESPACE).create(_template())
    created = time.monotonic()
    for i in range(TEMPLATE_RUNS):
        client.create(_run(i))
    resolved_s = final_s = None
    stored_sizes: list[int] = []
    phases: dict[str, int] = {}
    while time.monotonic() - created < WINDOW:
        runs = client.list()
        stored_sizes = [len(r.get("status", {}).get(STORED_SPEC_FIELD) or "") for r in runs]
        phases = {}
        for r in runs:
            phase = (r.get("status", {}).get("state") or {}).get("phase") or ""
            phases[phase] = phases.get(phase, 0) + 1
        if resolved_s is None and all(stored_sizes) and len(runs) == TEMPLATE_RUNS:
            resolved_s = round(time.monotonic() - created, 1)
        if phases.get("Succeed", 0) + phases.get("Failed", 0) == TEMPLATE_RUNS:
            final_s = round(time.monotonic() - created, 1)
            break
        time.sleep(0.5)
    warnings: dict[str, int] = {}
    for event in bench.clientset.resource(EVENTS, NAMESPACE).list():
        if event.get("type") == "Warning":
            warnings[event["reason"]] = warnings.get(event["reason"], 0) + int(event.get("count") or 1)
    log(f"   template_hostile: resolved in {resolved_s} s, final in {final_s} s, phases {phases}, {warnings}")
    return {
        "runs": TEMPLATE_RUNS,
        "template_flows": MAX_FLOWS,
        "stored_spec_bytes_max": max(stored_sizes, default=0),
        "all_resolved_after_s": resolved_s,
        "all_final_after_s": final_s,
        "phases": phases,
        "jobs_created": len(bench.clientset.jobs(NAMESPACE).list()),
        "warnings_by_reason_count": warnings,
    }


def checks(name: str, result: dict[str, Any]) -> dict[str, bool]:
    """The scenario's own verdicts, beside hostile.py's common ones."""
    if name != "template_hostile":
        return {}
    return {
        "every_run_resolved": result["all_resolved_after_s"] is not None,
        "every_run_final_within_window": result["all_final_after_s"] is not None,
        "no_job_created": result["jobs_created"] == 0,
    }
