"""The webhook's answer about a JobFlowTrigger (webhook/admission.py `admit_job_flow_triggers`)."""

from __future__ import annotations

from typing import Any

from jobflow_controller.webhook.admission import (
    OBJECT_NOT_JOB_FLOW_TRIGGER,
    OPERATION_NOT_CREATE_OR_UPDATE,
    review_response,
)

TRIGGERS = {"group": "flow.volcano.sh", "version": "v1alpha1", "resource": "jobflowtriggers"}


def review(obj: Any, operation: str = "CREATE", old: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {"uid": "u-1", "resource": TRIGGERS, "operation": operation, "object": obj}
    request |= {"name": "etl", "namespace": "ns"}
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def trigger(**spec: Any) -> dict[str, Any]:
    return {"metadata": {}, "spec": {"jobFlowTemplateRef": {"name": "etl"}, "http": {}, **spec}}


def test_a_valid_trigger_is_allowed() -> None:
    assert review_response(review(trigger()))["response"] == {"uid": "u-1", "allowed": True}


def test_an_invalid_trigger_is_denied_with_every_problem() -> None:
    response = review_response(review(trigger(params=[{"name": "p", "cel": "body.."}], concurrencyPolicy="x")))
    message = response["response"]["status"]["message"]
    assert response["response"]["allowed"] is False
    assert "spec.params[0].cel: does not compile" in message and "spec.concurrencyPolicy" in message


def test_an_update_that_keeps_the_spec_passes_and_other_operations_are_refused() -> None:
    bad = trigger(concurrencyPolicy="x")
    assert review_response(review(bad, "UPDATE", old=bad))["response"]["allowed"] is True
    refused = review_response(review(bad, "DELETE"))["response"]
    assert refused["status"]["message"] == OPERATION_NOT_CREATE_OR_UPDATE
    assert review_response(review("nope"))["response"]["status"]["message"] == OBJECT_NOT_JOB_FLOW_TRIGGER
