"""The webhook refuses a patch that sets a field outside --jobflow-patch-allowed-fields (issue 21, item 7).

A server of its own, given the allowed fields as the manager gives them; real reviews over HTTPS.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from webhook_support import ServingCerts, WebhookClient, flow, job_flow, review

from jobflow_controller.apis.patch_fields import parse_patch_fields
from jobflow_controller.webhook import WebhookServer

ALLOWED = ["tasks.replicas", "minAvailable"]


@pytest.fixture(scope="module")
def limited(certs: ServingCerts) -> Iterator[WebhookServer]:
    fields = parse_patch_fields(ALLOWED)
    with WebhookServer(("127.0.0.1", 0), str(certs.cert_file), str(certs.key_file), patch_fields=fields) as running:
        yield running


@pytest.fixture
def client(limited: WebhookServer, certs: ServingCerts) -> WebhookClient:
    return WebhookClient(limited.port, certs.ca_pem)


def patched(name: str, job_spec: dict[str, Any]) -> dict[str, Any]:
    return {**flow(name), "patch": {"jobSpec": job_spec}}


IMAGE = {"tasks": [{"name": "worker", "template": {"spec": {"containers": [{"name": "main", "image": "evil"}]}}}]}


def test_a_patch_within_the_allowed_fields_is_admitted(client: WebhookClient) -> None:
    job_spec = {"maxRetry": 3, "queue": "default", "minAvailable": 2, "tasks": [{"name": "worker", "replicas": 4}]}
    assert client.review(review(job_flow(patched("train", job_spec))))["allowed"] is True


def test_a_patch_setting_another_field_is_refused_with_its_path(client: WebhookClient) -> None:
    response = client.review(review(job_flow(flow("a"), patched("train", IMAGE), patched("eval", {"queue": "vip"}))))
    assert response["allowed"] is False
    assert response["status"]["message"] == (
        'jobflow Flow "train": patch.jobSpec.tasks[0].template: not among the fields a patch may set '
        "(--jobflow-patch-allowed-fields=minAvailable,tasks.replicas); "
        'jobflow Flow "eval": patch.jobSpec.queue: not among the fields a patch may set '
        "(--jobflow-patch-allowed-fields=minAvailable,tasks.replicas)"
    )


def test_the_fields_come_after_the_other_problems(client: WebhookClient) -> None:
    bad = {**patched("train", {"queue": "vip"}), "dependsOn": {"targets": ["missing"]}}
    message = client.review(review(job_flow(bad)))["status"]["message"]
    assert message.startswith("jobflow Flow is not DAG: vertex is not defined: missing; ")
    assert message.endswith(
        'jobflow Flow "train": patch.jobSpec.queue: not among the fields a patch may set '
        "(--jobflow-patch-allowed-fields=minAvailable,tasks.replicas)"
    )


def test_an_update_that_keeps_the_flows_is_not_refused_for_them(client: WebhookClient) -> None:
    """A JobFlow stored before the flag was set can still be labelled, as the other stricter rules allow."""
    old = job_flow(patched("train", IMAGE))
    new = {**old, "metadata": {**old["metadata"], "labels": {"team": "a"}}}
    assert client.review(review(new, operation="UPDATE", old=old))["allowed"] is True
    changed = job_flow(patched("train", IMAGE), flow("b"))
    assert client.review(review(changed, operation="UPDATE", old=old))["allowed"] is False


def test_a_malformed_patch_gets_its_shape_problem_only(client: WebhookClient) -> None:
    message = client.review(review(job_flow(patched("train", {"queue": "vip", "tasks": [{"replicas": 1}]}))))
    assert message["status"]["message"] == (
        'jobflow Flow "train": patch.jobSpec.tasks[0]: has no name '
        "(patch entries are matched to the template's by name)"
    )


def test_a_finally_patch_is_held_to_the_allowed_fields_as_a_flows(client: WebhookClient) -> None:
    """Issue 22: a finally entry runs a Job like a flow's; its patch could otherwise set any field."""
    obj = job_flow(flow("a"))
    obj["spec"]["finally"] = [{"name": "notify", "patch": {"jobSpec": {"queue": "vip"}}}]
    response = client.review(review(obj))
    assert response["allowed"] is False
    assert response["status"]["message"] == (
        'jobflow Finally "notify": patch.jobSpec.queue: not among the fields a patch may set '
        "(--jobflow-patch-allowed-fields=minAvailable,tasks.replicas)"
    )


def test_an_update_that_changes_only_finally_is_held_to_the_allowed_fields(client: WebhookClient) -> None:
    old = job_flow(flow("a"))
    new = job_flow(flow("a"))
    new["spec"]["finally"] = [{"name": "notify", "patch": {"jobSpec": {"tasks": [{"name": "t", "replicas": 2}]}}}]
    assert client.review(review(new, operation="UPDATE", old=old))["allowed"] is True
    new["spec"]["finally"][0]["patch"]["jobSpec"]["queue"] = "vip"
    assert client.review(review(new, operation="UPDATE", old=old))["allowed"] is False
