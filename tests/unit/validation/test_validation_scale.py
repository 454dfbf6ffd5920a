"""The DAG check is linear in flows plus edges: 10,000 flows in a chain or a wide fan-in, and a
ladder whose path count is exponential (upstream's path-enumerating DFS never finishes on it).

The bounds are sanity bounds (a few hundred milliseconds are expected; 2 s leaves room for slow CI
machines), not benchmarks.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import jobflow_controller.validation as validation_package
from jobflow_controller.validation import FLOW_NOT_DAG, dag_problems, find_cycle, validate_job_flow
from jobflow_controller.validation.dag import Graph

N = 10_000
SANITY_BOUND_SECONDS = 2.0
VALIDATION_DIR = str(Path(validation_package.__file__).parent)


def chain(n: int) -> list[tuple[str, list[str]]]:
    return [(f"f{i}", [f"f{i - 1}"] if i else []) for i in range(n)]


def fan_in(n: int) -> Graph:
    return [*((f"f{i}", []) for i in range(n - 1)), ("sink", [f"f{i}" for i in range(n - 1)])]


def ladder(rungs: int) -> Graph:
    """Each rung's two vertices wait for both vertices of the previous rung: 2**rungs paths."""
    graph: list[tuple[str, list[str]]] = [("a0", []), ("b0", [])]
    for i in range(1, rungs):
        previous = [f"a{i - 1}", f"b{i - 1}"]
        graph.extend([(f"a{i}", previous), (f"b{i}", list(previous))])
    return graph


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


@pytest.mark.parametrize("shape", [chain, fan_in], ids=["chain", "fan-in"])
def test_ten_thousand_flows_are_checked_quickly(shape: Callable[[int], Graph]) -> None:
    graph = shape(N)
    problems, seconds = timed(lambda: dag_problems(graph))
    assert problems == []
    assert seconds < SANITY_BOUND_SECONDS


def test_ten_thousand_flows_in_reverse_spec_order() -> None:
    # The DFS starts from the first flow, the chain's tail, and walks 10,000 deep without recursion.
    graph = list(reversed(chain(N)))
    problems, seconds = timed(lambda: dag_problems(graph))
    assert problems == []
    assert seconds < SANITY_BOUND_SECONDS


def test_cycle_closing_a_ten_thousand_chain_is_found() -> None:
    graph = chain(N)
    graph[0] = ("f0", [f"f{N - 1}"])
    cycle, seconds = timed(lambda: find_cycle(graph))
    assert cycle is not None
    assert len(cycle) == N
    assert seconds < SANITY_BOUND_SECONDS


def test_exponentially_many_paths_are_not_enumerated() -> None:
    graph = ladder(2_000)  # 2**2000 paths, 4,000 vertices, about 8,000 edges
    problems, seconds = timed(lambda: dag_problems(graph))
    assert problems == []
    assert seconds < SANITY_BOUND_SECONDS


def test_whole_validation_of_a_ten_thousand_flow_jobflow() -> None:
    flows = [{"name": f"f{i}", "dependsOn": {"targets": [f"f{i - 1}"]}} if i else {"name": "f0"} for i in range(N)]
    flows.append({"name": "f0"})
    job_flow = {"metadata": {"name": "jf", "namespace": "default"}, "spec": {"flows": flows}}
    problems, seconds = timed(lambda: validate_job_flow(job_flow))
    # Over the 500-flow cap (issue 21), and every other rule still runs on it, in linear time.
    assert problems == ["jobflow has 10001 flows, more than the 500 allowed", 'jobflow Flow names must be unique: "f0"']
    assert seconds < SANITY_BOUND_SECONDS


def count_steps(graph: Graph) -> int:
    """The number of source lines of the validation package executed for ``dag_problems(graph)``."""
    steps = 0

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal steps
        if not frame.f_code.co_filename.startswith(VALIDATION_DIR):
            return None
        if event == "line":
            steps += 1
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        dag_problems(graph)
    finally:
        sys.settrace(previous)
    return steps


@pytest.mark.parametrize("shape", [chain, fan_in, ladder], ids=["chain", "fan-in", "ladder"])
def test_work_grows_linearly_with_size(shape: Callable[[int], Graph]) -> None:
    # A deterministic operation count rather than a timing: doubling the graph doubles the lines
    # executed (a quadratic check would quadruple them, upstream's path enumeration explode on the ladder).
    small, large = count_steps(shape(1_000)), count_steps(shape(2_000))
    assert small > 1_000
    assert 1.9 < large / small < 2.1


def test_cycle_message_is_upstreams_for_long_cycles() -> None:
    graph = chain(N)
    graph[0] = ("f0", [f"f{N - 1}"])
    assert dag_problems(graph) == [FLOW_NOT_DAG]
