"""What the webhook says about `spec.flows[].dependsOn.probe` (ours: upstream ignores it), as real reviews.

Admission sees no Job, so it refuses what is wrong whatever the targets hold: shapes, task names,
ports, paths, headers, phases, a probe on a flow without targets. A task the targets' Jobs lack is
the controller's to report (`InvalidProbe`, tests/unit/jobflow/test_jobflow_probe.py).
"""

from __future__ import annotations

from typing import Any

from webhook_support import WebhookClient, flow, job_flow, review


def probed(name: str, probe: object, *targets: str) -> dict[str, Any]:
    entry = flow(name, *targets)
    entry.setdefault("dependsOn", {})["probe"] = probe
    return entry


def message(response: dict[str, Any]) -> str:
    assert response["allowed"] is False
    text: str = response["status"]["message"]
    return text


def test_a_valid_probe_is_allowed(client: WebhookClient) -> None:
    probe = {
        "httpGetList": [{"taskName": "ps", "port": 8080, "path": "/ready", "httpHeader": {"name": "X", "value": "1"}}],
        "tcpSocketList": [{"taskName": "ps", "port": 2222}],
        "taskStatusList": [{"taskName": "worker", "phase": "Running"}],
    }
    assert client.review(review(job_flow(flow("a"), probed("b", probe, "a"))))["allowed"] is True


def test_a_probe_task_the_targets_may_lack_is_allowed(client: WebhookClient) -> None:
    probe = {"taskStatusList": [{"taskName": "no-such-task", "phase": "Running"}]}
    assert client.review(review(job_flow(flow("a"), probed("b", probe, "a"))))["allowed"] is True


def test_a_bad_port_is_denied_naming_the_flow_and_the_field(client: WebhookClient) -> None:
    probe = {"tcpSocketList": [{"taskName": "ps", "port": 0}]}
    response = client.review(review(job_flow(flow("a"), probed("b", probe, "a"))))
    assert (
        message(response)
        == 'jobflow Flow "b": dependsOn.probe.tcpSocketList[0].port: must be between 1 and 65535, not 0'
    )


def test_a_path_without_a_leading_slash_is_denied(client: WebhookClient) -> None:
    probe = {"httpGetList": [{"taskName": "ps", "port": 80, "path": "ready"}]}
    response = client.review(review(job_flow(flow("a"), probed("b", probe, "a"))))
    assert message(response) == "jobflow Flow \"b\": dependsOn.probe.httpGetList[0].path: 'ready' must start with '/'"


def test_a_probe_on_a_flow_without_targets_is_denied(client: WebhookClient) -> None:
    probe = {"taskStatusList": [{"taskName": "ps", "phase": "Running"}]}
    response = client.review(review(job_flow(probed("a", probe))))
    assert message(response) == (
        'jobflow Flow "a": dependsOn.probe: needs dependsOn.targets: a probe checks the Jobs of the flow\'s targets'
    )


def test_an_update_leaving_a_bad_probe_as_it_is_is_allowed(client: WebhookClient) -> None:
    """The ratchet of docs/webhook.md: a JobFlow stored while the webhook was off can still be labelled."""
    old = job_flow(flow("a"), probed("b", {"tcpSocketList": [{"taskName": "ps", "port": 0}]}, "a"))
    new = {**old, "metadata": {**old["metadata"], "labels": {"team": "x"}}}
    assert client.review(review(new, operation="UPDATE", old=old))["allowed"] is True
