"""Upstream's functions hold upstream's logic only (issue 44, widening /work/shared/tools/planner_seams.py).

Every function of jobflow/ named after one of upstream's (jobflow_controller_action.go,
jobflow_controller_handler.go, jobflow_controller.go) must not mention an extension by name: an
extension plugs into the flow policy (flow_policy.py `FlowHooks`, the policy's named points) or
into a named step of the sync, never into upstream's functions. Two composition points are left
out on purpose: `sync_job_flow` (action.py and sync.py), which calls the extensions' steps between
upstream's, and the handler's `update_job_flow`, whose resync and re-run triggers are ours.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
JOBFLOW = ROOT / "jobflow_controller/jobflow"

UPSTREAM_FUNCTIONS = {
    "action.py": (
        "deploy_job",
        "judge",
        "load_job_template_and_set_job",
        "get_all_job_status",
        "get_running_histories",
        "delete_all_jobs_created_by_job_flow",
    ),
    "sync.py": ("handle_job_flow", "create_job", "delete_all_jobs_created_by_job_flow"),
    "handler.py": ("add_job_flow", "update_job", "add_job_template"),
    "controller.py": ("sync_handler", "record_events_for_job_flow"),
}
EXTENSIONS = (
    "found",
    "outcomes",
    "retry",
    "retries",
    "probe",
    "probes",
    "lifecycle",
    "finally",
    "params",
    "matrix",
    "variables",
    "problem",
    "when",
    "results",
    "readings",
    "attempt",
    "rerun",
)


def _names(fn: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return out


def _mentions(name: str) -> bool:
    return any(name == e or name.startswith(e + "_") or name.endswith("_" + e) for e in EXTENSIONS)


@pytest.mark.parametrize(("module", "function"), [(m, f) for m, fs in UPSTREAM_FUNCTIONS.items() for f in fs])
def test_an_upstream_function_names_no_extension(module: str, function: str) -> None:
    tree = ast.parse((JOBFLOW / module).read_text())
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
    assert found, f"{module} has no {function}"
    assert sorted(n for fn in found for n in _names(fn) if _mentions(n)) == []


def test_upstreams_rule_imports_no_extension() -> None:
    """At run time (a type named under TYPE_CHECKING, such as outcomes.FlowShape for `shape`, is no import)."""
    tree = ast.parse((JOBFLOW / "flow_policy.py").read_text())
    modules = {
        node.module.rsplit(".", 1)[-1]
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("jobflow_controller.jobflow")
    }
    extensions = {"lifecycle", "retry", "probes", "rules_policy", "params_policy", "results_policy", "when", "outcomes"}
    assert modules & extensions == set()
