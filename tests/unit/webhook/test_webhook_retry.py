"""The webhook on retry policies (docs/retry.md#what-admission-says): `spec.flows[].retry` and the
`flow.volcano.sh/retry` annotation, through the HTTP server as kube-apiserver calls it."""

from __future__ import annotations

import copy
import json
from typing import Any

from webhook_support import WebhookClient, flow, job_flow, review

from jobflow_controller.validation import validation_message


def retried(name: str, retry: object, *targets: str) -> dict[str, Any]:
    return {**flow(name, *targets), "retry": retry}


def message(response: dict[str, Any]) -> str:
    assert response["allowed"] is False
    text: str = response["status"]["message"]
    return text


def test_a_valid_retry_policy_is_allowed(client: WebhookClient) -> None:
    obj = job_flow(retried("a", {"maxRetries": 2, "backoff": "30s"}), retried("b", {"maxRetries": 0}, "a"))
    assert client.review(review(obj))["allowed"] is True


def test_a_bad_backoff_is_denied_naming_the_flow_and_the_field(client: WebhookClient) -> None:
    response = client.review(review(job_flow(flow("a"), retried("b", {"maxRetries": 1, "backoff": "soon"}, "a"))))
    assert message(response) == (
        'jobflow Flow "b": retry.backoff: invalid duration "soon" (a Go duration such as "30s", "1m30s")'
    )


def test_retry_problems_come_after_the_dag_problems_fields_before_the_annotation(client: WebhookClient) -> None:
    obj = job_flow(retried("a", {"maxRetries": -1}, "missing"))
    obj["metadata"]["annotations"] = {"flow.volcano.sh/retry": json.dumps({"z": {"maxRetries": 1}})}
    assert message(client.review(review(obj))) == (
        "jobflow Flow is not DAG: vertex is not defined: missing; "
        'jobflow Flow "a": retry.maxRetries: must not be negative, got -1; '
        'annotation flow.volcano.sh/retry["z"]: no flow of this JobFlow is named "z"'
    )


def test_an_update_that_leaves_a_stored_bad_policy_alone_is_allowed(client: WebhookClient) -> None:
    old = job_flow(retried("a", {"maxRetries": -1}))
    labelled = copy.deepcopy(old)
    labelled["metadata"]["labels"] = {"team": "ml"}
    assert client.review(review(labelled, operation="UPDATE", old=old))["allowed"] is True


def test_an_update_that_changes_the_policy_is_held_to_the_rules(client: WebhookClient) -> None:
    old = job_flow(retried("a", {"maxRetries": 1}))
    new = job_flow(retried("a", {"maxRetries": 1, "backoff": "-1s"}))
    assert message(client.review(review(new, operation="UPDATE", old=old))) == (
        'jobflow Flow "a": retry.backoff: must not be negative, got "-1s"'
    )


def test_the_controller_leaves_retry_problems_out_of_the_whole_job_flows_check() -> None:
    bad = job_flow(retried("a", {"maxRetries": -1}))
    assert validation_message(bad) is not None
    assert validation_message(bad, retries=False) is None
