"""The webhook compiles a `when` item's `cel` and refuses it with the library's message, naming the flow
and the item (docs/results.md)."""

from __future__ import annotations

from typing import Any

from webhook_support import WebhookClient, review


def job_flow(when: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": "jf", "namespace": "ns"}, "spec": {"flows": [{"name": "publish", "when": when}]}}


def test_the_webhook_refuses_a_cel_that_does_not_compile(client: WebhookClient) -> None:
    response = client.review(review(job_flow([{"cel": "params['mode'] =="}])))
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert 'jobflow Flow "publish": when[0].cel: Failed to parse expression' in message
    assert "Syntax error" in message


def test_the_webhook_admits_a_cel_that_compiles(client: WebhookClient) -> None:
    response = client.review(review(job_flow([{"cel": "params['mode'] == 'full'"}])))
    assert response["allowed"] is True
