"""The size caps over the wire (issue 21): a JobFlow over 500 flows or 100 targets a flow is refused.

With our CRD the API server refuses such a JobFlow itself (``maxItems``) before the webhook is
called; the webhook's refusal is what a cluster keeping upstream's CRD sees. The rule is
``validation.limits`` (tests/unit/validation/test_validation_limits.py).
"""

from __future__ import annotations

from typing import Any

from webhook_support import WebhookClient, flow, job_flow, review

from jobflow_controller.validation import MAX_FLOWS, MAX_TARGETS


def flows(count: int, targets: int = 0) -> list[dict[str, Any]]:
    """``count`` flows f0, f1, ...; the last waits for the first ``targets``."""
    listed = [flow(f"f{i}") for i in range(count - 1)]
    listed.append(flow(f"f{count - 1}", *(f"f{i}" for i in range(targets))))
    return listed


def test_a_jobflow_at_both_caps_is_allowed(client: WebhookClient) -> None:
    response = client.review(review(job_flow(*flows(MAX_FLOWS, targets=MAX_TARGETS))))
    assert response["allowed"] is True


def test_501_flows_are_refused_with_the_count_and_the_cap(client: WebhookClient) -> None:
    response = client.review(review(job_flow(*flows(MAX_FLOWS + 1))))
    assert response["allowed"] is False
    assert response["status"] == {
        "status": "Failure",
        "message": "jobflow has 501 flows, more than the 500 allowed",
        "code": 400,
    }


def test_101_targets_are_refused_naming_the_flow(client: WebhookClient) -> None:
    response = client.review(review(job_flow(*flows(MAX_TARGETS + 2, targets=MAX_TARGETS + 1))))
    assert response["allowed"] is False
    assert response["status"]["message"] == (
        'jobflow Flow "f101": dependsOn.targets: has 101 targets, more than the 100 allowed'
    )


def test_an_update_of_a_stored_jobflow_over_the_cap_that_leaves_its_flows_alone_is_allowed(
    client: WebhookClient,
) -> None:
    old = job_flow(*flows(MAX_FLOWS + 1))
    labelled = {**old, "metadata": {**old["metadata"], "labels": {"team": "a"}}}
    assert client.review(review(labelled, operation="UPDATE", old=old))["allowed"] is True
    grown = {**old, "spec": {**old["spec"], "flows": flows(MAX_FLOWS + 2)}}
    response = client.review(review(grown, operation="UPDATE", old=old))
    assert response["status"]["message"] == "jobflow has 502 flows, more than the 500 allowed"
