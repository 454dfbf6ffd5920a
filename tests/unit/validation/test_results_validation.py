"""The admission rules on `spec.flows[].results` (docs/results.md): a table, one rule per row."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.validation.jobflow import validate_job_flow
from jobflow_controller.validation.results import results_problems


def job_flow(results: Any) -> dict[str, Any]:
    return {"metadata": {"name": "jf", "namespace": "ns"}, "spec": {"flows": [{"name": "a", "results": results}]}}


@pytest.mark.parametrize(
    ("results", "problem"),
    [
        ({"names": ["acc", "model-uri", "a_b"]}, None),
        ({"names": ["acc"], "from": {"task": "master"}}, None),
        ("acc", 'jobflow Flow "a": results: must be an object with names, got "acc"'),
        ({}, 'jobflow Flow "a": results.names: must list at least one name'),
        ({"names": []}, 'jobflow Flow "a": results.names: must list at least one name'),
        ({"names": [f"n{i}" for i in range(17)]}, 'jobflow Flow "a": results.names: has 17 names, more than the 16'),
        ({"names": ["Acc"]}, 'jobflow Flow "a": results.names[0]: must match [a-z0-9]([-a-z0-9_]*[a-z0-9])?'),
        ({"names": ["a" * 64]}, "at most 63 characters"),
        ({"names": [7]}, "got 7"),
        ({"names": ["acc", "acc"]}, 'jobflow Flow "a": results.names[1]: "acc" is repeated'),
        ({"names": ["acc"], "from": {"task": ""}}, 'jobflow Flow "a": results.from.task: must name a task in 1 to 63'),
        ({"names": ["acc"], "from": "master"}, "results.from.task"),
    ],
)
def test_each_results_rule(results: Any, problem: str | None) -> None:
    found = results_problems(job_flow(results))
    if problem is None:
        assert found == []
        assert validate_job_flow(job_flow(results)) == []
    else:
        assert len(found) == 1 and problem in found[0], found
        assert any(problem in p for p in validate_job_flow(job_flow(results)))


def test_a_long_bad_name_is_quoted_cut() -> None:
    (problem,) = results_problems(job_flow({"names": ["X" * 100_000]}))
    assert len(problem) < 300


def referring(text: str, *, matrix: bool = False, where: str = "patch") -> dict[str, Any]:
    train: dict[str, Any] = {"name": "train", "results": {"names": ["acc"]}}
    if matrix:
        train["matrix"] = {"params": [{"name": "x", "values": ["1"]}]}
    user: dict[str, Any] = {"name": "use", "dependsOn": {"targets": ["mid"]}}
    if where == "patch":
        user["patch"] = {"jobSpec": {"queue": text}}
    else:
        user["when"] = [{"input": text, "operator": "in", "values": ["x"]}]
    flows = [train, {"name": "mid", "dependsOn": {"targets": ["train"]}}, user, {"name": "other"}]
    return {"metadata": {"name": "jf", "namespace": "ns"}, "spec": {"flows": flows}}


@pytest.mark.parametrize(
    ("text", "matrix", "where", "problem"),
    [
        ("$(flows.train.results.acc)", False, "patch", None),
        ("a-$(flows.train.results.acc)-$(params.x)", False, "when", None),
        ("$(flows.train.results.acc[*])", True, "patch", None),
        ("$$(flows.other.results.acc)", False, "patch", None),
        ("$(flows.other.results.acc)", False, "patch", 'flow "other" is not one of its dependencies'),
        ("$(flows.train.results.loss)", False, "when", 'flow "train" declares no result "loss"'),
        ("$(flows.train.results.acc[*])", False, "patch", '[*] reads a matrix flow\'s values, and "train" has no'),
        ("$(flows.train.results.acc)", True, "patch", 'flow "train" has a matrix: its values are read as an array'),
    ],
)
def test_each_reference_rule(text: str, matrix: bool, where: str, problem: str | None) -> None:
    found = results_problems(referring(text, matrix=matrix, where=where))
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and problem in found[0] and found[0].startswith('jobflow Flow "use": $(flows.'), found


def test_a_finally_entry_may_read_any_flows_results() -> None:
    job_flow = referring("x")
    job_flow["spec"]["finally"] = [{"name": "notify", "patch": {"jobSpec": {"queue": "$(flows.train.results.acc)"}}}]
    assert results_problems(job_flow) == []
