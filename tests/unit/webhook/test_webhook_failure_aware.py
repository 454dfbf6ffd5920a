"""The webhook on the failure-aware fields (issue 22, docs/rules.md), through the HTTP server as kube-apiserver
calls it. The messages that our CRD's enums and types pre-empt on a real API server (an unknown rule or
policy, a continueOnFailure that is not a boolean) are the webhook's here, as a CRD that keeps unknown
fields would let them through."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from webhook_support import WebhookClient, flow, job_flow, review

RULES = "AllCompleted, AnyCompleted, AllFailed, AnyFailed, AllDone, NoneFailed"


def message(response: dict[str, Any]) -> str:
    assert response["allowed"] is False
    text: str = response["status"]["message"]
    return text


def ruled(name: str, rule: str, *targets: str) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": list(targets), "rule": rule}}


def with_spec(obj: dict[str, Any], **fields: Any) -> dict[str, Any]:
    obj["spec"].update(fields)
    return obj


def test_every_failure_aware_field_together_is_allowed(client: WebhookClient) -> None:
    obj = with_spec(
        job_flow({**flow("train"), "continueOnFailure": True}, ruled("alert", "AnyFailed", "train")),
        failurePolicy="RunToCompletion",
        **{"finally": [{"name": "notify", "patch": {"jobSpec": {"tasks": [{"name": "t", "replicas": 1}]}}}]},
    )
    assert client.review(review(obj))["allowed"] is True


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            job_flow(flow("a"), ruled("b", "OnFailure", "a")),
            f'jobflow Flow "b": dependsOn.rule: must be one of {RULES}, got "OnFailure"',
        ),
        (
            job_flow({**flow("a"), "continueOnFailure": "yes"}),
            'jobflow Flow "a": continueOnFailure: must be true or false, got "yes"',
        ),
        (
            with_spec(job_flow(flow("a")), failurePolicy="Never"),
            'jobflow failurePolicy: must be one of FailFast, RunToCompletion, got "Never"',
        ),
        (
            with_spec(job_flow(flow("a")), **{"finally": [{"name": "a"}]}),
            'jobflow Finally "a": repeats the name of a flow (both would be the Job "jobflow-a")',
        ),
    ],
    ids=["unknown-rule", "continueOnFailure-string", "unknown-policy", "finally-repeats-a-flow"],
)
def test_a_bad_value_is_denied_with_its_message(client: WebhookClient, obj: dict[str, Any], expected: str) -> None:
    assert message(client.review(review(obj))) == expected


def test_an_update_that_leaves_a_stored_bad_finally_alone_is_allowed(client: WebhookClient) -> None:
    old = with_spec(job_flow(flow("a")), **{"finally": [{"name": "a"}]})
    labelled = copy.deepcopy(old)
    labelled["metadata"]["labels"] = {"team": "ml"}
    assert client.review(review(labelled, operation="UPDATE", old=old))["allowed"] is True
    renamed = with_spec(copy.deepcopy(old), **{"finally": [{"name": "a"}, {"name": "b"}]})
    assert message(client.review(review(renamed, operation="UPDATE", old=old))) == (
        'jobflow Finally "a": repeats the name of a flow (both would be the Job "jobflow-a")'
    )
