"""The DAG rules of a JobFlow's flows: upstream's webhook tests, and what we deliberately do differently.

Upstream's cases are from ``pkg/webhooks/admission/jobflows/validate/*_test.go`` (TestValidateJobFlowCreate,
TestIsDAG) and ``test/e2e/admission/jobflow_validation_test.go``. The outcomes are upstream's, except that
duplicate flow names are refused (upstream accepts them; PR #5876 would refuse them with our message).
"""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.validation import (
    FLOW_NOT_DAG,
    dag_problems,
    find_cycle,
    flow_graph,
    validate_job_flow,
    validation_message,
)
from jobflow_controller.validation.dag import duplicate_names, undefined_targets

NOT_DEFINED = "jobflow Flow is not DAG: vertex is not defined"


def flow(name: str, *targets: str) -> dict[str, Any]:
    if not targets:
        return {"name": name}
    return {"name": name, "dependsOn": {"targets": list(targets)}}


def job_flow(*flows: dict[str, Any], name: str = "jobflow", namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"jobRetainPolicy": "retain", "flows": list(flows)},
    }


# --- TestValidateJobFlowCreate -------------------------------------------------------------------------


def test_valid_dag_is_allowed() -> None:
    jf = job_flow(flow("a"), flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d"))
    assert validate_job_flow(jf) == []
    assert validation_message(jf) is None


def test_duplicated_flow_is_refused_unlike_upstream() -> None:
    # Upstream: allowed (the later "a" silently replaces the earlier one in its graph map).
    jf = job_flow(flow("a"), flow("a"), flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d"))
    assert validate_job_flow(jf) == ['jobflow Flow names must be unique: "a"']


def test_missing_vertex_is_refused_with_upstream_message() -> None:
    jf = job_flow(flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d"))
    assert validate_job_flow(jf) == ["jobflow Flow is not DAG: vertex is not defined: a"]
    assert validation_message(jf) == "jobflow Flow is not DAG: vertex is not defined: a"


def test_cycle_is_refused_with_upstream_message() -> None:
    jf = job_flow(flow("a", "b"), flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d"))
    assert validate_job_flow(jf) == ["jobflow Flow is not DAG"]


def test_duplicate_with_different_dependencies_is_refused_unlike_upstream() -> None:
    # Upstream: allowed; which dependencies "c" has depends on which duplicate came last.
    jf = job_flow(flow("a"), flow("b", "a"), flow("c", "a"), flow("c", "b"))
    assert validate_job_flow(jf) == ['jobflow Flow names must be unique: "c"']


# --- TestIsDAG (LoadVertexs + IsDAG) --------------------------------------------------------------------


def graph(spec: dict[int, list[int]]) -> list[tuple[str, list[str]]]:
    return [(str(name), [str(t) for t in targets]) for name, targets in spec.items()]


def test_undefined_vertex_is_an_error_before_the_cycle() -> None:
    problems = dag_problems(graph({1: [2], 2: [1, 3]}))
    # Upstream stops at the undefined vertex; we also report the 1 <-> 2 cycle, after it.
    assert problems == [f"{NOT_DEFINED}: 3", FLOW_NOT_DAG]


@pytest.mark.parametrize(
    ("spec", "is_dag"),
    [
        ({1: [2], 2: [3], 3: [1]}, False),
        ({1: [2], 2: [1, 3], 3: []}, False),
        ({1: [2, 3], 2: [3], 3: [4], 4: []}, True),
        ({1: [2, 3], 2: [4, 5], 3: [], 4: [], 5: []}, True),
        ({1: [2, 3, 4], 2: [3], 3: [4], 4: [5], 5: []}, True),
        ({1: [2, 3, 4], 2: [3, 5], 3: [5], 4: [3, 5], 5: []}, True),
        ({1: [2, 3, 4], 2: [3, 5], 3: [5], 4: [3, 5], 5: [5, 3]}, False),
    ],
)
def test_is_dag(spec: dict[int, list[int]], is_dag: bool) -> None:
    problems = dag_problems(graph(spec))
    assert problems == ([] if is_dag else [FLOW_NOT_DAG])
    assert (find_cycle(graph(spec)) is None) is is_dag


# --- e2e "JobFlow Validating E2E Test" ----------------------------------------------------------------


@pytest.mark.parametrize(
    "flows",
    [
        pytest.param([flow("a"), flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d")], id="dag"),
        pytest.param([flow("start"), flow("middle", "start"), flow("end", "middle")], id="linear-chain"),
        pytest.param(
            [
                flow("root1"),
                flow("root2"),
                flow("level1-a", "root1"),
                flow("level1-b", "root2"),
                flow("level2", "level1-a", "level1-b"),
                flow("final", "level2"),
            ],
            id="complex-dag",
        ),
        pytest.param([], id="empty-flows"),
        pytest.param([flow("single-flow")], id="single-flow"),
    ],
)
def test_e2e_accepted_specs(flows: list[dict[str, Any]]) -> None:
    assert validate_job_flow(job_flow(*flows)) == []


def test_e2e_update_appending_a_flow_is_validated_like_create() -> None:
    created = job_flow(flow("a"), flow("b", "a"))
    updated = job_flow(flow("a"), flow("b", "a"), flow("c", "b"))
    assert validate_job_flow(created) == []
    assert validate_job_flow(updated) == []


def test_e2e_missing_flow_definition_is_refused() -> None:
    message = validation_message(job_flow(flow("b", "a"), flow("c", "a", "b")))
    assert message is not None
    assert "jobflow Flow is not DAG" in message
    assert "vertex is not defined" in message


def test_e2e_self_dependency_is_refused() -> None:
    assert validate_job_flow(job_flow(flow("self-dependent", "self-dependent"))) == [FLOW_NOT_DAG]


@pytest.mark.parametrize(
    "flows",
    [
        pytest.param([flow("a"), flow("a"), flow("b", "a")], id="duplicate-names"),
        pytest.param([flow("a"), flow("b", "a"), flow("c", "a"), flow("c", "b")], id="same-target-duplicate"),
    ],
)
def test_e2e_duplicate_names_are_refused_unlike_upstream(flows: list[dict[str, Any]]) -> None:
    message = validation_message(job_flow(*flows))
    assert message is not None
    assert message.startswith("jobflow Flow names must be unique: ")


# --- determinism and reporting order ------------------------------------------------------------------


def test_every_undefined_target_is_reported_once_in_spec_order() -> None:
    jf = job_flow(flow("a", "z", "y"), flow("b", "y", "x", "a"), flow("c", "z"))
    assert validate_job_flow(jf) == [f"{NOT_DEFINED}: z", f"{NOT_DEFINED}: y", f"{NOT_DEFINED}: x"]


def test_each_duplicate_name_is_reported_once_in_order_of_first_repeat() -> None:
    graph_: list[tuple[str, list[str]]] = [("b", []), ("a", []), ("a", []), ("b", []), ("a", [])]
    assert duplicate_names(graph_) == ["a", "b"]


def test_problems_come_in_fixed_order_duplicates_then_targets_then_cycle() -> None:
    jf = job_flow(flow("a", "b"), flow("b", "a", "missing"), flow("a"))
    assert validate_job_flow(jf) == [
        'jobflow Flow names must be unique: "a"',
        f"{NOT_DEFINED}: missing",
        FLOW_NOT_DAG,
    ]
    assert validation_message(jf) == "; ".join(validate_job_flow(jf))


def test_cycle_is_reported_once_however_many_cycles() -> None:
    jf = job_flow(flow("a", "a"), flow("b", "c"), flow("c", "b"))
    assert validate_job_flow(jf) == [FLOW_NOT_DAG]


def test_find_cycle_returns_the_first_cycle_in_spec_order() -> None:
    graph_ = [("x", ["y"]), ("y", ["z"]), ("z", ["y"]), ("a", ["a"])]
    assert find_cycle(graph_) == ["y", "z"]
    assert find_cycle([("a", ["a"])]) == ["a"]


def test_undefined_targets_do_not_hide_a_cycle_among_defined_flows() -> None:
    assert find_cycle([("a", ["nope", "b"]), ("b", ["a"])]) == ["a", "b"]
    assert undefined_targets([("a", ["nope", "b"]), ("b", ["a"])]) == ["nope"]


def test_duplicates_form_one_vertex_with_the_union_of_their_targets() -> None:
    assert find_cycle([("a", []), ("b", ["a"]), ("a", ["b"])]) == ["a", "b"]


def test_same_spec_always_gives_the_same_messages() -> None:
    flows = [flow(f"f{i}", f"missing{i % 7}", f"f{(i + 1) % 50}") for i in range(50)]
    first = validate_job_flow(job_flow(*flows))
    for _ in range(5):
        assert validate_job_flow(job_flow(*flows)) == first
    assert first[:7] == [f"{NOT_DEFINED}: missing{i}" for i in range(7)]
    assert first[7] == FLOW_NOT_DAG


# --- reading the JSON dict ----------------------------------------------------------------------------


def test_flow_graph_reads_targets_in_spec_order_and_treats_absent_parts_as_empty() -> None:
    jf = job_flow(
        {"name": "a"},
        {"name": "b", "dependsOn": None},
        {"name": "c", "dependsOn": {}},
        {"name": "d", "dependsOn": {"targets": None}},
        {"name": "e", "dependsOn": {"targets": ["a", "b"], "probe": {}}},
    )
    assert list(flow_graph(jf)) == [("a", []), ("b", []), ("c", []), ("d", []), ("e", ["a", "b"])]


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({}, id="empty-object"),
        pytest.param({"spec": None}, id="null-spec"),
        pytest.param({"spec": {}}, id="no-flows"),
        pytest.param({"spec": {"flows": None}}, id="null-flows"),
        pytest.param({"metadata": {"name": "x", "namespace": "default"}, "spec": {"flows": []}}, id="empty-flows"),
    ],
)
def test_jobflow_without_flows_is_valid(obj: dict[str, Any]) -> None:
    assert validate_job_flow(obj) == []


def test_validation_does_not_mutate_the_object() -> None:
    jf = job_flow(flow("a"), flow("b", "a", "zz"), flow("b"))
    snapshot = repr(jf)
    validate_job_flow(jf)
    assert repr(jf) == snapshot
