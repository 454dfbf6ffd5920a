"""What the webhook answers to a well-formed AdmissionReview: its shape, and upstream's refusals.

Upstream's AdmitJobFlows checks the resource, then the operation, then the flows; a refusal carries
only a message (``util.ToAdmissionResponse``). Ours also carries ``code: 400`` and ``status:
Failure``, which the API server would fill in anyway, and no ``reason``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from webhook_support import WebhookClient, flow, job_flow, review

from jobflow_controller.webhook import OPERATION_NOT_CREATE_OR_UPDATE, RESOURCE_NOT_JOB_FLOWS

VALID = job_flow(flow("a"), flow("b", "a"))
CYCLIC = job_flow(flow("a", "b"), flow("b", "a"))


def test_response_echoes_the_requests_uid(client: WebhookClient) -> None:
    response = client.review(review(VALID, uid="705ab4f5-6393-11e8-b7cc-42010a800002"))
    assert response["uid"] == "705ab4f5-6393-11e8-b7cc-42010a800002"


def test_allowed_response_is_only_uid_and_allowed(client: WebhookClient) -> None:
    response = client.review(review(VALID, uid="u-1"))
    assert response == {"uid": "u-1", "allowed": True}


def test_denied_response_carries_the_message_in_a_failure_status(client: WebhookClient) -> None:
    response = client.review(review(CYCLIC, uid="u-2"))
    assert response == {
        "uid": "u-2",
        "allowed": False,
        "status": {"status": "Failure", "message": "jobflow Flow is not DAG", "code": 400},
    }


def test_denied_status_has_no_reason_as_upstreams(client: WebhookClient) -> None:
    assert "reason" not in client.review(review(CYCLIC))["status"]


def test_resource_message_prints_the_resource_as_go_prints_the_struct() -> None:
    assert RESOURCE_NOT_JOB_FLOWS == "expect resource to be {flow.volcano.sh v1alpha1 jobflows}"


@pytest.mark.parametrize(
    "resource",
    [
        ("flow.volcano.sh", "v1alpha1", "jobtemplates"),
        ("flow.volcano.sh", "v1beta1", "jobflows"),
        ("batch.volcano.sh", "v1alpha1", "jobflows"),
        ("flow.volcano.sh", "v1alpha1", "jobflows/status"),
    ],
    ids=["other-resource", "other-version", "other-group", "subresource-as-resource"],
)
def test_other_resource_is_denied_with_upstreams_message(client: WebhookClient, resource: tuple[str, str, str]) -> None:
    response = client.review(review(VALID, resource=resource))
    assert response["allowed"] is False
    assert response["status"]["message"] == "expect resource to be {flow.volcano.sh v1alpha1 jobflows}"


def test_request_without_resource_is_denied_as_other_resource(client: WebhookClient) -> None:
    admission_review = review(VALID)
    del admission_review["request"]["resource"]
    assert client.review(admission_review)["status"]["message"] == RESOURCE_NOT_JOB_FLOWS


@pytest.mark.parametrize("operation", ["DELETE", "CONNECT"])
def test_other_operation_is_denied_with_upstreams_message(client: WebhookClient, operation: str) -> None:
    response = client.review(review(None, old=VALID, operation=operation))
    assert response["allowed"] is False
    assert response["status"]["message"] == "expect operation to be 'CREATE' or 'UPDATE'"
    assert response["status"]["message"] == OPERATION_NOT_CREATE_OR_UPDATE


def test_resource_is_checked_before_operation(client: WebhookClient) -> None:
    admission_review = review(None, old=VALID, operation="DELETE", resource=("", "v1", "pods"))
    assert client.review(admission_review)["status"]["message"] == RESOURCE_NOT_JOB_FLOWS


def test_update_is_validated_like_create(client: WebhookClient) -> None:
    response = client.review(review(CYCLIC, operation="UPDATE", old=VALID))
    assert response["allowed"] is False
    assert response["status"]["message"] == "jobflow Flow is not DAG"


def test_update_to_a_valid_spec_is_allowed_whatever_the_old_object(client: WebhookClient) -> None:
    # Upstream never reads oldObject: fixing a JobFlow admitted before the webhook existed is allowed.
    assert client.review(review(VALID, operation="UPDATE", old=CYCLIC))["allowed"] is True


def test_update_appending_a_flow_is_allowed(client: WebhookClient) -> None:
    # Upstream e2e "allow update with valid DAG": a; b->a, then c->b appended.
    updated = copy.deepcopy(VALID)
    updated["spec"]["flows"].append(flow("c", "b"))
    assert client.review(review(updated, operation="UPDATE", old=VALID))["allowed"] is True


def test_request_without_object_is_denied(client: WebhookClient) -> None:
    response = client.review(review(None))
    assert response["allowed"] is False
    assert response["status"]["message"] == "expect request.object to be a JobFlow object"


@pytest.mark.parametrize(
    "spec",
    [{"flows": []}, {}, {"flows": None}],
    ids=["empty-flows", "no-flows", "null-flows"],
)
def test_jobflow_without_flows_is_allowed(client: WebhookClient, spec: dict[str, Any]) -> None:
    jf = job_flow()
    jf["spec"] = spec
    assert client.review(review(jf))["allowed"] is True


def test_job_name_over_63_characters_is_denied_with_the_name(client: WebhookClient) -> None:
    # Not upstream: the Job "<jobflow>-<flow>" would be refused by the API server or Volcano's webhook.
    response = client.review(review(job_flow(flow("f" * 60), name="pipeline")))
    assert response["allowed"] is False
    assert response["status"]["message"].startswith(f'jobflow Flow "{"f" * 60}": Job name "pipeline-{"f" * 60}" is 69')


def test_namespace_missing_from_the_object_is_taken_from_the_request(client: WebhookClient) -> None:
    # "<namespace>.<flow>" is a label value: 63 characters at most. The object alone does not say the
    # namespace here; the request does, so the rule is still applied.
    jf = job_flow(flow("x" * 40), name="jf", namespace="n" * 30)
    admission_review = review(jf)
    del admission_review["request"]["object"]["metadata"]["namespace"]
    response = client.review(admission_review)
    assert response["allowed"] is False
    assert "volcano.sh/createdByJobTemplate" in response["status"]["message"]


def test_several_problems_are_reported_together_in_spec_order(client: WebhookClient) -> None:
    response = client.review(review(job_flow(flow("a", "z"), flow("a"), flow("b", "b"))))
    assert response["status"]["message"] == (
        'jobflow Flow names must be unique: "a"; jobflow Flow is not DAG: vertex is not defined: z;'
        " jobflow Flow is not DAG"
    )


def test_dry_run_request_is_answered_like_any_other(client: WebhookClient) -> None:
    admission_review = review(CYCLIC)
    admission_review["request"]["dryRun"] = True
    assert client.review(admission_review)["status"]["message"] == "jobflow Flow is not DAG"


def test_flow_that_cannot_name_a_jobtemplate_is_denied(client: WebhookClient) -> None:
    # "-a" makes the valid Job name "jobflow--a", but no JobTemplate can be named "-a".
    response = client.review(review(job_flow(flow("-a"))))
    assert response["allowed"] is False
    assert response["status"]["message"] == (
        'jobflow Flow "-a": JobTemplate name "-a" must be a lowercase RFC 1123 subdomain: lowercase letters,'
        " digits, '-' and '.', with every '.'-separated part starting and ending with a letter or digit"
    )
