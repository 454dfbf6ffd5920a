"""Property-based tests: random DAGs are accepted, random graphs with a cycle are refused, and the
cycle check agrees with Kahn's algorithm on arbitrary graphs."""

from __future__ import annotations

import random
from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from jobflow_controller.validation import FLOW_NOT_DAG, dag_problems, find_cycle, validate_job_flow
from jobflow_controller.validation.dag import Graph, undefined_targets

# Per-test settings, so the session's hypothesis profile is left alone.
PROPERTY = settings(max_examples=200, deadline=None)


@st.composite
def dags(draw: st.DrawFn, max_flows: int = 40) -> list[tuple[str, list[str]]]:
    """A DAG: flow i only waits for flows with a smaller index; then the flows are shuffled."""
    n = draw(st.integers(min_value=0, max_value=max_flows))
    graph: list[tuple[str, list[str]]] = []
    for i in range(n):
        targets = draw(st.lists(st.integers(min_value=0, max_value=i - 1), max_size=5)) if i else []
        graph.append((f"f{i}", [f"f{t}" for t in targets]))
    return draw(st.permutations(graph))


@st.composite
def graphs_with_a_cycle(draw: st.DrawFn) -> tuple[list[tuple[str, list[str]]], list[str]]:
    graph = draw(dags().filter(lambda g: len(g) > 0))
    names = [name for name, _ in graph]
    cycle = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
    adjacency = {name: list(targets) for name, targets in graph}
    for k, vertex in enumerate(cycle):
        adjacency[vertex].append(cycle[(k + 1) % len(cycle)])
    return [(name, adjacency[name]) for name in names], cycle


@st.composite
def arbitrary_graphs(draw: st.DrawFn) -> list[tuple[str, list[str]]]:
    """Any directed graph on unique names, with some targets that name no flow."""
    n = draw(st.integers(min_value=0, max_value=25))
    universe = [f"v{i}" for i in range(n + 3)]  # the last three are never flows
    return [
        (f"v{i}", draw(st.lists(st.sampled_from(universe), max_size=4))) for i in draw(st.permutations(list(range(n))))
    ]


def kahn_is_acyclic(graph: Graph) -> bool:
    """Reference: Kahn's algorithm on the flows, ignoring targets that name no flow."""
    names = {name for name, _ in graph}
    waiting_for = {name: {t for t in targets if t in names} for name, targets in graph}
    dependants: dict[str, set[str]] = {name: set() for name in names}
    for name, targets in waiting_for.items():
        for target in targets:
            dependants[target].add(name)
    ready = deque(name for name, targets in waiting_for.items() if not targets)
    done = 0
    while ready:
        vertex = ready.popleft()
        done += 1
        for dependant in dependants[vertex]:
            waiting_for[dependant].discard(vertex)
            if not waiting_for[dependant]:
                ready.append(dependant)
    return done == len(names)


def is_cycle_of(cycle: list[str], graph: Graph) -> bool:
    edges = {name: set(targets) for name, targets in graph}
    return len(set(cycle)) == len(cycle) and all(
        cycle[(k + 1) % len(cycle)] in edges[vertex] for k, vertex in enumerate(cycle)
    )


@PROPERTY
@given(dags())
def test_random_dags_are_accepted(graph: list[tuple[str, list[str]]]) -> None:
    assert dag_problems(graph) == []
    assert find_cycle(graph) is None


@PROPERTY
@given(dags())
def test_random_dags_are_accepted_as_jobflows(graph: list[tuple[str, list[str]]]) -> None:
    flows = [{"name": name, "dependsOn": {"targets": targets}} for name, targets in graph]
    job_flow = {"metadata": {"name": "jf", "namespace": "default"}, "spec": {"flows": flows}}
    assert validate_job_flow(job_flow) == []


@PROPERTY
@given(graphs_with_a_cycle())
def test_random_graphs_with_a_cycle_are_refused(case: tuple[list[tuple[str, list[str]]], list[str]]) -> None:
    graph, _planted = case
    assert dag_problems(graph) == [FLOW_NOT_DAG]
    found = find_cycle(graph)
    assert found is not None
    assert is_cycle_of(found, graph)


@PROPERTY
@given(arbitrary_graphs())
def test_cycle_check_agrees_with_kahns_algorithm(graph: list[tuple[str, list[str]]]) -> None:
    found = find_cycle(graph)
    assert (found is None) is kahn_is_acyclic(graph)
    if found is not None:
        assert is_cycle_of(found, graph)


@PROPERTY
@given(arbitrary_graphs())
def test_undefined_targets_are_exactly_the_targets_naming_no_flow_in_spec_order(
    graph: list[tuple[str, list[str]]],
) -> None:
    names = {name for name, _ in graph}
    expected: list[str] = []
    for _, targets in graph:
        for target in targets:
            if target not in names and target not in expected:
                expected.append(target)
    assert undefined_targets(graph) == expected


@PROPERTY
@given(arbitrary_graphs(), st.randoms())
def test_acceptance_does_not_depend_on_flow_order(graph: list[tuple[str, list[str]]], rnd: random.Random) -> None:
    shuffled = list(graph)
    rnd.shuffle(shuffled)
    assert (find_cycle(graph) is None) is (find_cycle(shuffled) is None)
    assert sorted(undefined_targets(graph)) == sorted(undefined_targets(shuffled))
