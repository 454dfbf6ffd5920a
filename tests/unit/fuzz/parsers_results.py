"""Results readers (docs/results.md), for the fuzzer: a pod's termination messages into declared
names (text: one container's message; json: a whole pod), a flow's `results` read, a `$(VAR)` name read
as a reference to a result, the admission rules, and `spec.results` read, checked and resolved."""

from __future__ import annotations

from typing import Any

from registry import Parser

from jobflow_controller.apis import results
from jobflow_controller.jobflow import own_results
from jobflow_controller.validation.results import own_results_problems, reference_problems, results_problems
from kubectl_jobflow.ui import results_view

NAMES = ["acc", "model"]
JOB = {"metadata": {"name": "jf-a", "uid": "u"}, "spec": {"tasks": [{"name": "t"}]}}


def _pod(value: Any) -> object:
    """A fuzzed pod, claimed by the Job when it is an object (so its messages are read)."""
    if isinstance(value, dict):
        value = {**value, "metadata": {"ownerReferences": [{"uid": "u", "controller": True}]}}
    return results.read_pod(value if isinstance(value, dict) else None, JOB, results.FlowResults(None, tuple(NAMES)))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


PARSERS: list[Parser] = [
    Parser(
        "jobflow_controller.apis.results.read_messages", lambda t: results.read_messages([("c", t)], NAMES), "text", ()
    ),
    Parser("jobflow_controller.apis.results.read_pod", _pod, "json", ()),
    Parser("jobflow_controller.apis.results.is_name", lambda t: results.is_name(_text(t)), "text", ()),
    Parser(
        "jobflow_controller.apis.results.result_reference", lambda t: results.result_reference(_text(t)), "text", ()
    ),
    Parser("jobflow_controller.apis.results.flow_results", results.flow_results, "json", ()),
    Parser(
        "jobflow_controller.validation.results.results_problems",
        lambda v: results_problems({"spec": {"flows": [{"name": "a", "results": v}]}}),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.validation.results.reference_problems",
        lambda v: reference_problems(v if isinstance(v, dict) else {}),
        "json",
        (),
    ),
    Parser("jobflow_controller.apis.results.own_results", results.own_results, "json", ()),
    Parser("jobflow_controller.apis.results.recorded_own_results", results.recorded_own_results, "json", ()),
    Parser(
        "jobflow_controller.validation.results.own_results_problems",
        lambda v: own_results_problems({"spec": {"flows": [{"name": "a", "results": {"names": NAMES}}], "results": v}}),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.jobflow.own_results.resolve",
        lambda t: own_results.resolve((("r", _text(t)),), {"flows.a.results.acc": "0.9", "params.p": "x"}),
        "text",
        (),
    ),
    Parser(
        "kubectl_jobflow.ui.results_view.job_results",
        lambda v: results_view.job_results({"status": {"jobStatusList": v}}, ["jf-a", "jf-b"]),
        "json",
        (),
    ),
    Parser(
        "kubectl_jobflow.ui.results_view.own_results",
        lambda v: results_view.own_results({"status": {"results": v}}),
        "json",
        (),
    ),
    Parser(
        "kubectl_jobflow.ui.results_view.declares_results",
        lambda v: results_view.declares_results({"spec": v}),
        "json",
        (),
    ),
]
