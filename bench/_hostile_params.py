"""bench/hostile.py's params scenarios (issue 42 items 1 and 2): an oversized matrix, and expansions
past their budgets, each against the CRDs of the default install alone (no webhook, no CEL Component).

Each scenario puts the plain CRDs of `kubectl apply -k manifests/` in place of the local control plane's
(which carry the CEL Component, refusing the oversized matrix itself), in a namespace the benchmark's
webhook does not admit, and the Component back after. `bench` is hostile.py's `Bench`.
"""

from __future__ import annotations

import subprocess
import time
from typing import Any

from bench._common import create_namespace, log
from jobflow_controller.kube.errors import ApiStatusError
from jobflow_controller.kube.resources import EVENTS
from jobflow_controller.local.kubectl import CRDS_DIR, install_crds, kubectl_path, plugin_env
from tests.e2e.jobflows import flow, template

#: A matrix of 3 lists of 256 values: 16.7 M combinations (the CRD alone admits 16 lists).
OVERSIZED_LISTS = 3
#: A param of the CRD's longest value, read 100 times by one template (400 KB of expansion), by 200
#: `when` inputs of 315 references each (1.3 MB each), and a template string of 200,000 unclosed `$(`.
PARAM = "v" * 4096
WHEN_FLOWS = 200
WHEN_REFERENCES = 315
UNCLOSED = 200_000
WARNING_WITHIN = 30.0


def _plain_crds(bench: Any, namespace: str, labels: dict[str, str]) -> None:
    install_crds(bench.plane.kubeconfig_path, CRDS_DIR)
    create_namespace(bench.clientset, namespace, labels)


def _create(bench: Any, namespace: str, doc: dict[str, Any]) -> None:
    """Create, waiting out the API server's switch to the plain CRDs (a 422 from the old rules)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            bench.clientset.job_flows(namespace).create(doc)
            return
        except ApiStatusError as err:
            if err.code != 422 or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _warnings(bench: Any, namespace: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for event in bench.clientset.resource(EVENTS, namespace).list():
        if event.get("type") == "Warning":
            out[event["reason"]] = out.get(event["reason"], 0) + int(event.get("count") or 1)
    return out


def _longest_message(bench: Any, namespace: str) -> int:
    return max((len(e.get("message") or "") for e in bench.clientset.resource(EVENTS, namespace).list()), default=0)


def _wait_warning(bench: Any, namespace: str, reason: str) -> float | None:
    started = time.monotonic()
    while time.monotonic() - started < WARNING_WITHIN:
        if reason in _warnings(bench, namespace):
            return round(time.monotonic() - started, 2)
        time.sleep(0.1)
    return None


def matrix_oversized(bench: Any, no_webhook_label: str) -> dict[str, Any]:
    """A JobFlow with a 256^3 matrix: its InvalidJobFlow Warning, and `kubectl jobflow tree` on it."""
    namespace = "hostile-matrix"
    _plain_crds(bench, namespace, {no_webhook_label: "true"})
    try:
        bench.clientset.job_templates(namespace).create(template("m", namespace))
        lists = [{"name": f"p{i}", "values": [str(v) for v in range(256)]} for i in range(OVERSIZED_LISTS)]
        _create(bench, namespace, flow("huge", namespace, [{"name": "m", "matrix": {"params": lists}}]))
        warned_s = _wait_warning(bench, namespace, "InvalidJobFlow")
        started = time.monotonic()
        try:
            tree = subprocess.run(
                [kubectl_path(), "jobflow", "tree", "huge", "-n", namespace],
                capture_output=True,
                text=True,
                timeout=60,
                env=plugin_env(bench.plane.kubeconfig_path),
                check=False,
            )
            tree_s: float | None = round(time.monotonic() - started, 2)
            tree_ok = tree.returncode == 0 and "Invalid" in tree.stdout
        except subprocess.TimeoutExpired:
            tree_s, tree_ok = None, False
        jobs = len(bench.clientset.jobs(namespace).list())
        log(f"   matrix_oversized: InvalidJobFlow after {warned_s} s, tree in {tree_s} s, {jobs} Jobs")
        return {
            "combinations": 256**OVERSIZED_LISTS,
            "invalid_warning_after_s": warned_s,
            "plugin_tree_s": tree_s,
            "plugin_tree_shows_invalid": tree_ok,
            "jobs_created": jobs,
        }
    finally:
        install_crds(bench.plane.kubeconfig_path)


def param_expansion(bench: Any, no_webhook_label: str) -> dict[str, Any]:
    """A 4 KiB param read 100 times by a template, by 200 `when` inputs of 1.3 MB each, and a
    template of 200,000 unclosed `$(`: InvalidParams for the first two, the third's Job created."""
    namespace = "hostile-params"
    _plain_crds(bench, namespace, {no_webhook_label: "true"})
    try:
        reader, dollars = template("reader", namespace), template("dollars", namespace)
        reader["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"] = ["$(params.big)"] * 100
        dollars["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"] = ["$(" * UNCLOSED]
        for doc in (reader, dollars, template("judged", namespace)):
            bench.clientset.job_templates(namespace).create(doc)
        flows: list[dict[str, Any]] = [{"name": "reader"}, {"name": "dollars"}]
        when = [{"input": "$(params.big)" * WHEN_REFERENCES, "operator": "in", "values": ["x"]}]
        flows += [{"name": "judged", "when": when}]
        doc = flow("expands", namespace, flows)
        doc["spec"]["params"] = [{"name": "big", "value": PARAM}]
        log_before = len(bench.controller.log_tail(10_000_000))
        _create(bench, namespace, doc)
        for i in range(WHEN_FLOWS):
            many = flow(f"judged-{i}", namespace, [{"name": "judged", "when": when}])
            many["spec"]["params"] = doc["spec"]["params"]
            _create(bench, namespace, many)
        warned_s = _wait_warning(bench, namespace, "InvalidParams")
        time.sleep(5.0)  # the 200 JobFlows' syncs
        jobs = sorted(j["metadata"]["name"] for j in bench.clientset.jobs(namespace).list())
        log_growth = len(bench.controller.log_tail(10_000_000)) - log_before
        warnings = _warnings(bench, namespace)
        log(f"   param_expansion: InvalidParams after {warned_s} s, {warnings}, Jobs {jobs}")
        return {
            "invalid_params_after_s": warned_s,
            "warnings_by_reason_count": warnings,
            "longest_event_message": _longest_message(bench, namespace),
            "jobs_created": jobs,
            "controller_log_growth_bytes": log_growth,
        }
    finally:
        install_crds(bench.plane.kubeconfig_path)


def checks(name: str, result: dict[str, Any]) -> dict[str, bool]:
    """The scenario's own verdicts, beside hostile.py's common ones."""
    if name == "matrix_oversized":
        warned = result["invalid_warning_after_s"]
        return {
            "invalid_warning_within_5_s": warned is not None and warned <= 5.0,
            "plugin_tree_within_30_s": result["plugin_tree_shows_invalid"] and (result["plugin_tree_s"] or 99) < 30,
            "no_job_created": result["jobs_created"] == 0,
        }
    if name == "param_expansion":
        warned = result["invalid_params_after_s"]
        return {
            "invalid_params_within_5_s": warned is not None and warned <= 5.0,
            "only_the_unclosed_dollars_job_created": result["jobs_created"] == ["expands-dollars"],
            "event_messages_at_most_4096_bytes": result["longest_event_message"] <= 4096,
            "log_growth_under_5_mib": result["controller_log_growth_bytes"] < 5 * 1024 * 1024,
        }
    return {}
