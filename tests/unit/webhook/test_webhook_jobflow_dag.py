"""Upstream's webhook unit tests, posted as real AdmissionReviews to a running webhook.

From ``pkg/webhooks/admission/jobflows/validate/*_test.go``: TestValidateJobFlowCreate (cases a-e)
and TestIsDAG (its table, each graph as a JobFlow). The outcomes are upstream's, except that
duplicate flow names are refused (upstream allows them; its open PR #5876 refuses them with this
message), and that a graph with several problems is refused with all of them, joined by "; "
(upstream stops at the first). The rules themselves are tested in tests/unit/validation.
"""

from __future__ import annotations

from typing import Any

import pytest
from webhook_support import WebhookClient, flow, job_flow, review

NOT_DAG = "jobflow Flow is not DAG"


def admit(client: WebhookClient, *flows: dict[str, Any]) -> dict[str, Any]:
    return client.review(review(job_flow(*flows)))


def message(response: dict[str, Any]) -> str:
    assert response["allowed"] is False
    text: str = response["status"]["message"]
    return text


# --- TestValidateJobFlowCreate ------------------------------------------------------------------------


def test_valid_dag_is_allowed(client: WebhookClient) -> None:
    response = admit(client, flow("a"), flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d"))
    assert response["allowed"] is True
    assert "status" not in response


def test_duplicated_flow_is_denied_unlike_upstream(client: WebhookClient) -> None:
    # Upstream: allowed, the second "a" silently replacing the first in its graph.
    response = admit(
        client, flow("a"), flow("a"), flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d")
    )
    assert message(response) == 'jobflow Flow names must be unique: "a"'


def test_missing_vertex_is_denied_with_upstreams_message(client: WebhookClient) -> None:
    response = admit(client, flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d"))
    assert message(response) == "jobflow Flow is not DAG: vertex is not defined: a"


def test_cycle_is_denied_with_upstreams_message(client: WebhookClient) -> None:
    response = admit(client, flow("a", "b"), flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d"))
    assert message(response) == NOT_DAG


def test_duplicated_flow_with_other_targets_is_denied_unlike_upstream(client: WebhookClient) -> None:
    # Upstream: allowed, and only the second "c"'s targets count.
    response = admit(client, flow("a"), flow("b", "a"), flow("c", "a"), flow("c", "b"))
    assert message(response) == 'jobflow Flow names must be unique: "c"'


# --- TestIsDAG ------------------------------------------------------------------------------------------

Graph = dict[str, list[str]]


def graph_flows(graph: Graph) -> list[dict[str, Any]]:
    return [flow(name, *targets) for name, targets in graph.items()]


@pytest.mark.parametrize(
    "graph",
    [
        {"1": ["2", "3"], "2": ["3"], "3": ["4"], "4": []},
        {"1": ["2", "3"], "2": ["4", "5"], "3": [], "4": [], "5": []},
        {"1": ["2", "3", "4"], "2": ["3"], "3": ["4"], "4": ["5"], "5": []},
        {"1": ["2", "3", "4"], "2": ["3", "5"], "3": ["5"], "4": ["3", "5"], "5": []},
    ],
    ids=["chain-with-shortcuts", "tree", "chain-with-fan-out", "diamonds"],
)
def test_dag_from_upstreams_table_is_allowed(client: WebhookClient, graph: Graph) -> None:
    assert admit(client, *graph_flows(graph))["allowed"] is True


@pytest.mark.parametrize(
    "graph",
    [
        {"1": ["2"], "2": ["3"], "3": ["1"]},
        {"1": ["2"], "2": ["1", "3"], "3": []},
        {"1": ["2", "3", "4"], "2": ["3", "5"], "3": ["5"], "4": ["3", "5"], "5": ["5", "3"]},
    ],
    ids=["three-cycle", "two-cycle", "self-loop"],
)
def test_cyclic_graph_from_upstreams_table_is_denied_as_not_dag(client: WebhookClient, graph: Graph) -> None:
    assert message(admit(client, *graph_flows(graph))) == NOT_DAG


def test_undefined_vertex_from_upstreams_table_is_denied_with_every_problem(client: WebhookClient) -> None:
    # Upstream's LoadVertexs fails on "3" before its cycle check; we also report the cycle 1 <-> 2.
    response = admit(client, *graph_flows({"1": ["2"], "2": ["1", "3"]}))
    assert message(response) == "jobflow Flow is not DAG: vertex is not defined: 3; jobflow Flow is not DAG"
