"""The webhook's answer about a JobFlowTemplate, and about a run's params against its template (docs/templates.md)."""

from __future__ import annotations

from typing import Any

from jobflow_controller.webhook.admission import review_response

TEMPLATES = {"group": "flow.volcano.sh", "version": "v1alpha1", "resource": "jobflowtemplates"}
JOBFLOWS = {"group": "flow.volcano.sh", "version": "v1alpha1", "resource": "jobflows"}
ETL = {
    "metadata": {"name": "etl", "namespace": "ns"},
    "spec": {
        "params": [{"name": "dataset"}, {"name": "mode", "default": "full"}],
        "jobFlow": {"flows": [{"name": "a"}]},
    },
}


def review(obj: Any, resource: dict[str, str], operation: str = "CREATE", old: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "uid": "u-1",
        "resource": resource,
        "operation": operation,
        "object": obj,
        "name": "x",
        "namespace": "ns",
    }
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def templates(namespace: str, name: str) -> dict[str, Any] | None:
    return ETL if (namespace, name) == ("ns", "etl") else None


def run(*params: tuple[str, str], ref: str = "etl") -> dict[str, Any]:
    return {
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {"jobFlowTemplateRef": {"name": ref}, "params": [{"name": n, "value": v} for n, v in params]},
    }


def answer(obj: Any, resource: dict[str, str], **kwargs: Any) -> dict[str, Any]:
    response: dict[str, Any] = review_response(review(obj, resource, **kwargs), None, templates)["response"]
    return response


def test_a_valid_template_is_allowed() -> None:
    assert answer(ETL, TEMPLATES) == {"uid": "u-1", "allowed": True}


def test_a_template_whose_jobflow_breaks_a_rule_is_denied() -> None:
    bad = {**ETL, "spec": {**ETL["spec"], "jobFlow": {"flows": [{"name": "a"}, {"name": "a"}]}}}
    response = answer(bad, TEMPLATES)
    assert not response["allowed"]
    assert response["status"]["message"] == 'spec.jobFlow: jobflow Flow names must be unique: "a"'


def test_a_template_update_of_its_labels_alone_is_allowed() -> None:
    bad = {**ETL, "spec": {"jobFlow": {"flows": [{"name": "a"}, {"name": "a"}]}}}
    assert answer(bad, TEMPLATES, operation="UPDATE", old=bad)["allowed"]


def test_a_run_with_its_params_is_allowed() -> None:
    assert answer(run(("dataset", "d1")), JOBFLOWS)["allowed"]


def test_a_run_with_an_unknown_param_is_denied() -> None:
    response = answer(run(("dataset", "d1"), ("typo", "x")), JOBFLOWS)
    assert response["status"]["message"] == 'param "typo" is not declared by JobFlowTemplate "etl"'


def test_a_run_without_a_required_param_is_denied() -> None:
    response = answer(run(("mode", "quick")), JOBFLOWS)
    assert response["status"]["message"] == 'param "dataset" is required by JobFlowTemplate "etl" and has no value'


def test_a_run_of_a_template_that_does_not_exist_is_allowed_and_waits() -> None:
    assert answer(run(("anything", "x"), ref="later"), JOBFLOWS)["allowed"]


def test_a_run_with_flows_and_a_reference_is_denied() -> None:
    both = run(("dataset", "d"))
    both["spec"]["flows"] = [{"name": "a"}]
    response = answer(both, JOBFLOWS)
    assert "mutually exclusive" in response["status"]["message"]


def test_an_update_of_a_run_is_not_checked_against_its_template_again() -> None:
    # The run was fixed to its spec at its first sync: the template's later edits are no reason to refuse a label.
    stale = run(("gone", "x"))
    assert answer(stale, JOBFLOWS, operation="UPDATE", old=stale)["allowed"]
