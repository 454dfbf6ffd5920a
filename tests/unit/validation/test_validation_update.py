"""The ratchet on UPDATE (issue 14): the rules stricter than upstream's apply only when ``spec.flows`` changes.

Upstream's webhook validates an UPDATE exactly like a CREATE (§4.2 #4), with upstream's rules only:
undefined targets and cycles, on a graph where a later flow of a repeated name replaces the earlier
one (§4.3). So an UPDATE that leaves ``spec.flows`` alone is held to exactly that, and any other
UPDATE to every rule, as a CREATE is.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobflow_controller.validation import (
    FLOW_NOT_DAG,
    dag_problems,
    flows_changed,
    upstream_dag_problems,
    validate_job_flow,
    validate_job_flow_update,
    validation_message,
    vertex_not_defined_message,
)
from jobflow_controller.validation.dag import upstream_graph

DUPLICATE_A = 'jobflow Flow names must be unique: "a"'


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


def annotated(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` after ``kubectl annotate``: the metadata changes, the spec does not."""
    updated = copy.deepcopy(obj)
    updated["metadata"]["annotations"] = {"team": "ml"}
    return updated


# --- upstream's graph ------------------------------------------------------------------------------


def test_upstream_graph_lets_the_last_flow_of_a_name_win_in_the_place_of_its_first() -> None:
    graph = [("a", ["b"]), ("b", []), ("a", ["c"]), ("c", [])]
    assert upstream_graph(graph) == [("a", ["c"]), ("b", []), ("c", [])]


def test_upstream_graph_of_unique_names_is_the_graph() -> None:
    graph = [("a", []), ("b", ["a"]), ("c", ["a", "b"])]
    assert upstream_graph(graph) == graph


@pytest.mark.parametrize(
    ("graph", "problems"),
    [
        # A repeat whose last flow drops the target of the first: no problem, as upstream.
        ([("a", ["x"]), ("a", [])], []),
        # A repeat whose last flow brings an undefined target: upstream's message.
        ([("a", []), ("b", []), ("a", ["x"])], [vertex_not_defined_message("x")]),
        # a -> b -> a only through the first a, which the second replaces: a DAG to upstream.
        ([("a", ["b"]), ("b", ["a"]), ("a", [])], []),
        # The cycle survives through the last a.
        ([("a", []), ("b", ["a"]), ("a", ["b"])], [FLOW_NOT_DAG]),
    ],
    ids=["target-dropped", "target-added", "cycle-dropped", "cycle-kept"],
)
def test_upstream_dag_problems_judge_repeated_names_as_upstream(
    graph: list[tuple[str, list[str]]], problems: list[str]
) -> None:
    assert upstream_dag_problems(graph) == problems


PROPERTY = settings(max_examples=200, deadline=None)


@st.composite
def unique_graphs(draw: st.DrawFn) -> list[tuple[str, list[str]]]:
    """Any graph of distinct names, cycles and undefined targets included."""
    n = draw(st.integers(min_value=0, max_value=12))
    names = [f"f{i}" for i in range(n)]
    pool = [*names, "missing-1", "missing-2"]
    return [(name, draw(st.lists(st.sampled_from(pool), max_size=4))) for name in names]


@PROPERTY
@given(unique_graphs())
def test_without_repeated_names_upstream_dag_problems_are_dag_problems(graph: list[tuple[str, list[str]]]) -> None:
    assert upstream_dag_problems(graph) == dag_problems(graph)


# --- what counts as changing spec.flows -----------------------------------------------------------


def test_metadata_and_retain_policy_leave_the_flows_unchanged() -> None:
    old = job_flow(flow("a"), flow("b", "a"))
    updated = annotated(old)
    updated["spec"]["jobRetainPolicy"] = "delete"
    assert not flows_changed(updated, old)


@pytest.mark.parametrize(
    "spec",
    [{"flows": []}, {}, {"flows": None}],
    ids=["empty", "absent", "null"],
)
def test_no_flows_in_any_spelling_is_no_change(spec: dict[str, Any]) -> None:
    old = job_flow()
    updated = job_flow()
    updated["spec"] = spec
    assert not flows_changed(updated, old)


@pytest.mark.parametrize(
    "flows",
    [
        [flow("a"), flow("b", "a"), flow("c", "b")],  # appended
        [flow("b", "a"), flow("a")],  # reordered
        [flow("a"), flow("b")],  # a target removed
        [flow("a"), {"name": "b", "dependsOn": {"targets": ["a"]}, "patch": {"jobSpec": {"queue": "q"}}}],  # patched
    ],
    ids=["appended", "reordered", "target-removed", "patch-added"],
)
def test_any_edit_of_the_flows_is_a_change(flows: list[dict[str, Any]]) -> None:
    old = job_flow(flow("a"), flow("b", "a"))
    assert flows_changed(job_flow(*flows), old)


# --- the ratchet ----------------------------------------------------------------------------------


def test_a_metadata_edit_of_a_stored_jobflow_with_a_repeated_name_is_allowed() -> None:
    old = job_flow(flow("a"), flow("a"), flow("b", "a"))
    assert validate_job_flow(old) == [DUPLICATE_A]
    assert validate_job_flow_update(annotated(old), old) == []
    assert validation_message(annotated(old), old) is None


def test_an_update_changing_the_flows_of_a_jobflow_with_a_repeated_name_is_refused() -> None:
    old = job_flow(flow("a"), flow("a"), flow("b", "a"))
    updated = job_flow(flow("a"), flow("a"), flow("b", "a"), flow("c", "b"))
    assert validate_job_flow_update(updated, old) == [DUPLICATE_A]
    assert validation_message(updated, old) == DUPLICATE_A


def test_a_metadata_edit_of_a_stored_jobflow_whose_job_name_is_too_long_is_allowed() -> None:
    old = job_flow(flow("f" * 60), name="pipeline")
    assert validate_job_flow(old)  # 69 characters: refused on CREATE
    assert validate_job_flow_update(annotated(old), old) == []


def test_a_metadata_edit_of_a_stored_jobflow_whose_label_value_is_too_long_is_allowed() -> None:
    old = job_flow(flow("x" * 40), name="jf", namespace="n" * 30)
    assert validate_job_flow(old)
    assert validate_job_flow_update(annotated(old), old) == []


def test_a_metadata_edit_of_a_cyclic_jobflow_is_refused_as_upstream_refuses_it() -> None:
    old = job_flow(flow("a", "b"), flow("b", "a"))
    assert validate_job_flow_update(annotated(old), old) == [FLOW_NOT_DAG]


def test_a_metadata_edit_of_a_jobflow_with_an_undefined_target_is_refused_with_upstreams_message() -> None:
    old = job_flow(flow("b", "a"))
    assert validate_job_flow_update(annotated(old), old) == ["jobflow Flow is not DAG: vertex is not defined: a"]


def test_a_metadata_edit_is_judged_on_upstreams_graph_when_names_repeat() -> None:
    # [a -> b, b -> a, a]: to upstream the second a replaces the first, so there is no cycle.
    old = job_flow(flow("a", "b"), flow("b", "a"), flow("a"))
    assert validate_job_flow_update(annotated(old), old) == []
    # [a, b, a -> x]: the last a names a flow that does not exist.
    old = job_flow(flow("a"), flow("b"), flow("a", "x"))
    assert validate_job_flow_update(annotated(old), old) == [vertex_not_defined_message("x")]


def test_a_reordering_of_the_flows_is_held_to_every_rule() -> None:
    old = job_flow(flow("a"), flow("b", "a"), flow("a"))
    reordered = job_flow(flow("b", "a"), flow("a"), flow("a"))
    assert validate_job_flow_update(reordered, old) == [DUPLICATE_A]


def test_an_update_fixing_the_flows_is_allowed() -> None:
    old = job_flow(flow("a"), flow("a"), flow("b", "a"))
    assert validate_job_flow_update(job_flow(flow("a"), flow("b", "a")), old) == []
