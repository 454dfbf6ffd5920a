"""The webhook on the lifecycle fields (docs/lifecycle.md#what-admission-says), through the HTTP server."""

from __future__ import annotations

import json

from webhook_support import WebhookClient, flow, job_flow, review


def message(response: dict[str, object]) -> str:
    assert response["allowed"] is False
    status = response["status"]
    assert isinstance(status, dict)
    return str(status["message"])


def test_the_lifecycle_fields_are_allowed(client: WebhookClient) -> None:
    obj = job_flow(flow("a"), {**flow("b", "a"), "activeDeadlineSeconds": 60})
    obj["spec"].update({"suspend": True, "shutdown": "Stop", "activeDeadlineSeconds": 0, "ttlSecondsAfterFinished": 30})
    obj["metadata"]["annotations"] = {"flow.volcano.sh/retry-request": '{"id": "r1", "flows": ["b"]}'}
    assert client.review(review(obj))["allowed"] is True


def test_lifecycle_problems_come_after_the_dag_problems(client: WebhookClient) -> None:
    obj = job_flow(flow("a", "missing"))
    obj["spec"]["ttlSecondsAfterFinished"] = -1
    assert message(client.review(review(obj))) == (
        "jobflow Flow is not DAG: vertex is not defined: missing; "
        "spec.ttlSecondsAfterFinished: must not be negative, got -1"
    )


def test_a_shutdown_changed_back_is_denied_on_update(client: WebhookClient) -> None:
    old = job_flow(flow("a"))
    old["spec"]["shutdown"] = "Terminate"
    new = json.loads(json.dumps(old))
    new["spec"]["shutdown"] = "Stop"
    assert message(client.review(review(new, operation="UPDATE", old=old))) == (
        'spec.shutdown: cannot change from "Terminate" to "Stop": '
        'it may only go from "" to Stop or Terminate, or from Stop to Terminate'
    )


def test_a_malformed_retry_request_is_denied(client: WebhookClient) -> None:
    obj = job_flow(flow("a"))
    obj["metadata"]["annotations"] = {"flow.volcano.sh/retry-request": '{"id": "", "flows": ["b"]}'}
    assert message(client.review(review(obj))) == (
        'annotation flow.volcano.sh/retry-request.id: must be a non-empty string, got ""; '
        'annotation flow.volcano.sh/retry-request.flows[0]: no flow of this JobFlow is named "b"'
    )
