"""The webhook's ratchet on UPDATE (issue 14): what upstream does not check is checked only when ``spec.flows`` changes.

Upstream's webhook validates an UPDATE exactly like a CREATE, with its own rules (undefined targets,
cycles) and never reads ``oldObject``. Ours adds rules (repeated names, Job names and label
values; docs/deviations.md rows 16, 17). They apply to a CREATE and to an UPDATE that changes
``spec.flows``, never to one that leaves the flows alone, so a JobFlow stored while the webhook was
off can still be labelled, annotated or given another ``jobRetainPolicy``; upstream's rules still
refuse a cyclic one as upstream does.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from webhook_support import WebhookClient, flow, job_flow, review

DUPLICATE_A = 'jobflow Flow names must be unique: "a"'
NOT_DAG = "jobflow Flow is not DAG"

#: Stored while the webhook was off: a repeated name, which upstream allows and we refuse on CREATE.
WITH_DUPLICATE = job_flow(flow("a"), flow("a"), flow("b", "a"))


def annotated(obj: dict[str, Any]) -> dict[str, Any]:
    updated = copy.deepcopy(obj)
    updated["metadata"]["annotations"] = {"team": "ml"}
    return updated


def labelled(obj: dict[str, Any]) -> dict[str, Any]:
    updated = copy.deepcopy(obj)
    updated["metadata"]["labels"] = {"pipeline": "nightly"}
    return updated


def retained_otherwise(obj: dict[str, Any]) -> dict[str, Any]:
    updated = copy.deepcopy(obj)
    updated["spec"]["jobRetainPolicy"] = "delete"
    return updated


def test_create_with_a_duplicate_name_is_denied(client: WebhookClient) -> None:
    response = client.review(review(WITH_DUPLICATE))
    assert (response["allowed"], response["status"]["message"]) == (False, DUPLICATE_A)


@pytest.mark.parametrize("edit", [annotated, labelled, retained_otherwise], ids=["annotate", "label", "retain-policy"])
def test_update_leaving_the_flows_of_a_stored_duplicate_alone_is_allowed(client: WebhookClient, edit: Any) -> None:
    response = client.review(review(edit(WITH_DUPLICATE), operation="UPDATE", old=WITH_DUPLICATE))
    assert response["allowed"] is True


def test_update_changing_the_flows_of_a_stored_duplicate_is_denied_with_the_message(client: WebhookClient) -> None:
    updated = copy.deepcopy(WITH_DUPLICATE)
    updated["spec"]["flows"].append(flow("c", "b"))
    response = client.review(review(updated, operation="UPDATE", old=WITH_DUPLICATE))
    assert (response["allowed"], response["status"]["message"]) == (False, DUPLICATE_A)


def test_update_of_a_stored_duplicate_without_old_object_is_validated_like_create(client: WebhookClient) -> None:
    # The API server always sends oldObject with an UPDATE; a review without one gets every rule.
    response = client.review(review(annotated(WITH_DUPLICATE), operation="UPDATE", old=None))
    assert response["status"]["message"] == DUPLICATE_A


def test_update_leaving_an_overlong_job_name_alone_is_allowed(client: WebhookClient) -> None:
    old = job_flow(flow("f" * 60), name="pipeline")
    assert client.review(review(old))["allowed"] is False
    assert client.review(review(annotated(old), operation="UPDATE", old=old))["allowed"] is True


def test_update_changing_the_flows_of_an_overlong_job_name_is_denied(client: WebhookClient) -> None:
    old = job_flow(flow("f" * 60), name="pipeline")
    updated = job_flow(flow("f" * 60), flow("g"), name="pipeline")
    response = client.review(review(updated, operation="UPDATE", old=old))
    assert response["status"]["message"].startswith(f'jobflow Flow "{"f" * 60}": Job name "pipeline-{"f" * 60}" is 69')


def test_update_leaving_an_overlong_label_value_alone_is_allowed(client: WebhookClient) -> None:
    old = job_flow(flow("x" * 40), name="jf", namespace="n" * 30)
    assert client.review(review(old))["allowed"] is False
    assert client.review(review(labelled(old), operation="UPDATE", old=old))["allowed"] is True


def test_update_leaving_a_cycle_alone_is_denied_as_upstream(client: WebhookClient) -> None:
    # A rule of upstream's own: upstream refuses every UPDATE of a cyclic JobFlow, and so do we.
    cyclic = job_flow(flow("a", "b"), flow("b", "a"))
    response = client.review(review(annotated(cyclic), operation="UPDATE", old=cyclic))
    assert (response["allowed"], response["status"]["message"]) == (False, NOT_DAG)


def test_update_leaving_an_undefined_target_alone_is_denied_with_upstreams_message(client: WebhookClient) -> None:
    missing = job_flow(flow("b", "a"))
    response = client.review(review(annotated(missing), operation="UPDATE", old=missing))
    assert response["status"]["message"] == "jobflow Flow is not DAG: vertex is not defined: a"


def test_update_leaving_a_duplicate_alone_sees_the_graph_as_upstream_does(client: WebhookClient) -> None:
    # [a -> b, b -> a, a]: upstream's graph map keeps the last a (no targets), so there is no cycle.
    stored = job_flow(flow("a", "b"), flow("b", "a"), flow("a"))
    assert client.review(review(annotated(stored), operation="UPDATE", old=stored))["allowed"] is True


def test_update_fixing_a_stored_duplicate_is_allowed(client: WebhookClient) -> None:
    fixed = job_flow(flow("a"), flow("b", "a"))
    assert client.review(review(fixed, operation="UPDATE", old=WITH_DUPLICATE))["allowed"] is True
