"""The admission rules on `spec.results` (docs/results.md): a table, one rule per row; the webhook
(tests/unit/webhook/test_webhook_own_results.py) refuses them and the controller reports a stored one as
`InvalidJobFlow` with no Job (tests/unit/jobflow/test_jobflow_own_results.py)."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.validation.jobflow import validate_job_flow
from jobflow_controller.validation.results import own_results_problems

FLOWS = [
    {"name": "train", "results": {"names": ["acc", "model"]}},
    {"name": "sweep", "results": {"names": ["acc"]}, "matrix": {"params": [{"name": "x", "values": ["1", "2"]}]}},
    {"name": "plain"},
]


def job_flow(results: Any) -> dict[str, Any]:
    return {"metadata": {"name": "jf", "namespace": "ns"}, "spec": {"flows": FLOWS, "results": results}}


def entry(value: Any, name: Any = "best") -> list[dict[str, Any]]:
    return [{"name": name, "value": value}]


@pytest.mark.parametrize(
    ("results", "problem"),
    [
        (entry("$(flows.train.results.model)"), None),
        (entry("$(flows.sweep.results.acc[*]) $(params.p) literal"), None),
        ([{"name": f"r{i}", "value": "x"} for i in range(16)], None),
        ([{"name": f"r{i}", "value": "x"} for i in range(17)], "spec.results: has 17 entries, more than the 16"),
        ("best", 'spec.results: must be a list of {name, value}, got "best"'),
        (["best"], 'spec.results[0]: must be an object with name and value, got "best"'),
        (entry("x", "Best"), "spec.results[0].name: must match [a-z0-9]([-a-z0-9_]*[a-z0-9])? and be at most 63"),
        (entry("x", "a" * 64), "spec.results[0].name: must match"),
        (entry("x") + entry("y"), 'spec.results[1].name: "best" is repeated'),
        (entry(7), "spec.results[0].value: must be a string of at most 4096 characters, got 7"),
        (entry("x" * 4097), "spec.results[0].value: must be a string of at most 4096 characters, got 4097 characters"),
        (entry("$(flows.nope.results.acc)"), 'spec.results[0].value: $(flows.nope.results.acc): flow "nope" is not'),
        (entry("$(flows.plain.results.acc)"), 'flow "plain" declares no result "acc"'),
        (entry("$(flows.train.results.loss)"), 'flow "train" declares no result "loss"'),
        (entry("$(flows.train.results.acc[*])"), '[*] reads a matrix flow\'s values, and "train" has no matrix'),
        (entry("$(flows.sweep.results.acc)"), 'flow "sweep" has a matrix: its values are read as an array'),
    ],
)
def test_each_own_results_rule(results: Any, problem: str | None) -> None:
    found = own_results_problems(job_flow(results))
    if problem is None:
        assert found == []
        assert validate_job_flow(job_flow(results)) == []
    else:
        assert len(found) == 1 and problem in found[0], found
        assert any(problem in p for p in validate_job_flow(job_flow(results)))


def test_no_spec_results_no_problem() -> None:
    obj = job_flow(None)
    del obj["spec"]["results"]
    assert own_results_problems(obj) == []


@pytest.mark.parametrize("obj", [None, "x", {"spec": None}, {"spec": "x"}])
def test_a_malformed_object_has_no_results_problem_and_does_not_raise(obj: Any) -> None:
    assert own_results_problems(obj) == []
