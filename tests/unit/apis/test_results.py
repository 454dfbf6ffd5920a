"""The results reader (docs/results.md): a pod's termination messages into the declared names, one rule per row."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jobflow_controller.apis.results import (
    MAX_RESULT_BYTES,
    FlowResults,
    ResultsSpec,
    flow_results,
    pod_name,
    read_messages,
    read_pod,
)

JOB = {"metadata": {"name": "jf-train", "uid": "job-uid"}, "spec": {"tasks": [{"name": "master"}, {"name": "w"}]}}


def pod(*messages: object, uid: str = "job-uid") -> dict[str, Any]:
    owner = {"kind": "Job", "name": "jf-train", "uid": uid, "controller": True}
    statuses = [{"name": f"c{i}", "state": {"terminated": {"message": m}}} for i, m in enumerate(messages)]
    return {
        "metadata": {"name": "jf-train-master-0", "ownerReferences": [owner]},
        "status": {"containerStatuses": statuses},
    }


@pytest.mark.parametrize(
    ("messages", "values", "problem"),
    [
        ([json.dumps({"acc": "0.9", "model": "s3://m"})], {"acc": "0.9", "model": "s3://m"}, None),
        ([json.dumps({"acc": "0.9"}), json.dumps({"model": "s3://m"})], {"acc": "0.9", "model": "s3://m"}, None),
        (["panic: out of memory", json.dumps({"acc": "0.9", "model": "m"})], {"acc": "0.9", "model": "m"}, None),
        ([json.dumps({"acc": "0.9"})], {"acc": "0.9"}, "'model': not reported by any container"),
        ([json.dumps({"acc": "0.9", "model": "a"}), json.dumps({"model": "b"})], {"acc": "0.9"}, "given by containers"),
        ([json.dumps({"acc": 0.9, "model": "m"})], {"model": "m"}, "'acc': must be a string, got float"),
        ([json.dumps({"acc": "x" * (MAX_RESULT_BYTES + 1), "model": "m"})], {"model": "m"}, "4097 bytes, more than"),
        (["[1, 2]", json.dumps({"acc": "1", "model": "m"})], {"acc": "1", "model": "m"}, None),
        (["{" * 100], {}, "not reported"),
        ([json.dumps({"acc": "1", "model": "m", "pad": "p" * 20000})], {}, "not reported"),
    ],
)
def test_each_rule_of_the_termination_messages(
    messages: list[str], values: dict[str, str], problem: str | None
) -> None:
    found = read_messages([(f"c{i}", m) for i, m in enumerate(messages)], ["acc", "model"])
    assert dict(found.values) == values
    if problem is None:
        assert found.problems == ()
    else:
        assert any(problem in p for p in found.problems), found.problems


def test_the_pod_read_is_task_zero_of_the_named_or_first_task() -> None:
    assert pod_name(JOB, FlowResults("w", ("acc",))) == "jf-train-w-0"
    assert pod_name(JOB, FlowResults(None, ("acc",))) == "jf-train-master-0"


def test_a_missing_pod_or_one_another_controls_gives_no_value() -> None:
    declared = FlowResults(None, ("acc",))
    assert read_pod(None, JOB, declared).pod_missing
    foreign = read_pod(pod(json.dumps({"acc": "1"}), uid="other"), JOB, declared)
    assert foreign.pod_missing and dict(foreign.values) == {}
    assert "not controlled by Job jf-train" in foreign.problems[0]
    assert dict(read_pod(pod(json.dumps({"acc": "1"})), JOB, declared).values) == {"acc": "1"}


def test_a_job_flow_without_results_has_no_results_spec() -> None:
    assert ResultsSpec.of([("a", None), ("b", None)]) is None
    found = ResultsSpec.of([("a", {"names": ["acc", "Bad", "acc"], "from": {"task": "t"}}), ("b", None)])
    assert found is not None and found.flows == {"a": FlowResults("t", ("acc",))}
    assert flow_results("text") is None
