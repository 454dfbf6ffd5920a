"""The webhook's answer about a CronJobFlow (webhook/admission.py `admit_cron_job_flows`, `review_response`)."""

from __future__ import annotations

from typing import Any

from jobflow_controller.webhook.admission import OPERATION_NOT_CREATE_OR_UPDATE, review_response

CRON = {"group": "flow.volcano.sh", "version": "v1alpha1", "resource": "cronjobflows"}


def review(obj: Any, operation: str = "CREATE", old: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "uid": "u-1",
        "resource": CRON,
        "operation": operation,
        "object": obj,
        "name": "nightly",
        "namespace": "ns",
    }
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def cron(schedule: str = "0 2 * * *") -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "CronJobFlow",
        "metadata": {},  # the request's name and namespace fill it, as the API server would have
        "spec": {"schedule": schedule, "jobFlowTemplate": {"spec": {"flows": [{"name": "a"}]}}},
    }


def test_a_valid_cronjobflow_is_allowed() -> None:
    assert review_response(review(cron()))["response"] == {"uid": "u-1", "allowed": True}


def test_an_invalid_one_is_denied_with_every_problem() -> None:
    response = review_response(review(cron("TZ=UTC 61 * * * *")))["response"]
    assert response["allowed"] is False
    assert response["status"] == {
        "status": "Failure",
        "message": 'spec.schedule: cannot use TZ or CRON_TZ in schedule "TZ=UTC 61 * * * *", use spec.timeZone instead',
        "code": 400,
    }


def test_the_name_comes_from_the_request_when_the_object_has_none() -> None:
    obj = cron()
    obj["spec"]["jobFlowTemplate"]["spec"]["flows"] = [{"name": "x" * 60}]
    message = review_response(review(obj))["response"]["status"]["message"]
    assert 'Job name "nightly-<minutes>-' in message


def test_a_delete_is_not_a_validated_operation() -> None:
    response = review_response(review(cron(), operation="DELETE"))["response"]
    assert response["status"]["message"] == OPERATION_NOT_CREATE_OR_UPDATE


def test_an_update_of_metadata_only_passes_even_if_the_spec_is_invalid() -> None:
    stored = cron("61 * * * *")
    relabelled = {**stored, "metadata": {"labels": {"a": "b"}}}
    assert review_response(review(relabelled, "UPDATE", stored))["response"]["allowed"] is True
