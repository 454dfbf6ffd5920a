"""The webhook refuses a `spec.results` reference to an unknown flow (docs/results.md)."""

from __future__ import annotations

from webhook_support import WebhookClient, review


def test_the_webhook_refuses_a_reference_to_an_unknown_flow(client: WebhookClient) -> None:
    flows = [{"name": "train", "results": {"names": ["acc"]}}]
    results = [{"name": "best", "value": "$(flows.nope.results.acc)"}]
    obj = {"metadata": {"name": "jobflow", "namespace": "ns"}, "spec": {"flows": flows, "results": results}}
    response = client.review(review(obj))
    assert response["allowed"] is False
    expected = 'spec.results[0].value: $(flows.nope.results.acc): flow "nope" is not a flow'
    assert expected in response["status"]["message"]
