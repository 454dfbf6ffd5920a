"""What the webhook refuses in a JobFlowTrigger, and the controller again: one row per rule."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobflow_controller.validation.jobflowtrigger import job_flow_trigger_problems

HTTP: dict[str, Any] = {
    "apiVersion": "flow.volcano.sh/v1alpha1",
    "kind": "JobFlowTrigger",
    "metadata": {"name": "etl-http", "namespace": "ns"},
    "spec": {
        "jobFlowTemplateRef": {"name": "etl"},
        "params": [{"name": "dataset", "cel": "body.dataset"}, {"name": "mode", "value": "full"}],
        "http": {},
    },
}
RESOURCE: dict[str, Any] = {
    **HTTP,
    "spec": {
        "jobFlowTemplateRef": {"name": "etl"},
        "resource": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "labelSelector": {"matchLabels": {"dataset": "daily"}},
            "events": ["create", "update"],
        },
        "concurrencyPolicy": "Forbid",
        "successfulJobFlowsHistoryLimit": 3,
        "failedJobFlowsHistoryLimit": 1,
    },
}


def _with(base: dict[str, Any], path: str, value: object) -> dict[str, Any]:
    obj = copy.deepcopy(base)
    node: Any = obj
    *parents, last = path.split(".")
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is _DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return obj


_DELETE = object()


@pytest.mark.parametrize("trigger", [HTTP, RESOURCE], ids=["http", "resource"])
def test_a_good_trigger_passes(trigger: dict[str, Any]) -> None:
    assert job_flow_trigger_problems(trigger) == []


@pytest.mark.parametrize(
    ("base", "path", "value", "message"),
    [
        (HTTP, "metadata.name", "x" * 58, "metadata.name: must be no more than 57"),
        (HTTP, "spec.jobFlowTemplateRef", _DELETE, "spec.jobFlowTemplateRef.name: required"),
        (HTTP, "spec.jobFlowTemplateRef.name", "Bad_Name", "DNS-1123 subdomain"),
        (HTTP, "spec.jobFlowTemplateRef.name", "a" * 64, "at most 63"),
        (HTTP, "spec.params", "x", "spec.params: must be a list"),
        (HTTP, "spec.params", [{"name": f"p{i}", "value": "v"} for i in range(65)], "more than the 64"),
        (HTTP, "spec.params.0", "x", "spec.params[0]: must be an object"),
        (HTTP, "spec.params.0.name", "1bad", "spec.params[0].name"),
        (HTTP, "spec.params.1.name", "dataset", "is bound twice"),
        (HTTP, "spec.params.1", {"name": "mode"}, "exactly one of value and cel"),
        (HTTP, "spec.params.1", {"name": "mode", "value": "v", "cel": "body"}, "exactly one of value and cel"),
        (HTTP, "spec.params.1.value", "v" * 4097, "at most 4096"),
        (HTTP, "spec.params.0.cel", "body..x", "does not compile"),
        (HTTP, "spec.params.0.cel", "b" * 1025, "1 to 1024"),
        (HTTP, "spec.http", _DELETE, "exactly one of http and resource"),
        (HTTP, "spec.http", [], "spec.http: must be an object"),
        (RESOURCE, "spec.http", {}, "exactly one of http and resource"),
        (RESOURCE, "spec.resource.apiVersion", "v 1", "spec.resource.apiVersion"),
        (RESOURCE, "spec.resource.kind", "config-map", "spec.resource.kind"),
        (RESOURCE, "spec.resource.events", [], "spec.resource.events"),
        (RESOURCE, "spec.resource.events", ["create", "create"], "spec.resource.events"),
        (RESOURCE, "spec.resource.events", ["patch"], "spec.resource.events"),
        (RESOURCE, "spec.resource.labelSelector", "x", "labelSelector: must be an object"),
        (
            RESOURCE,
            "spec.resource.labelSelector.matchLabels",
            {f"k{i}": "v" for i in range(33)},
            "matchLabels: at most 32",
        ),
        (
            RESOURCE,
            "spec.resource.labelSelector.matchExpressions",
            [{"key": "k", "operator": "In"}],
            "matchExpressions[0]",
        ),
        (
            RESOURCE,
            "spec.resource.labelSelector.matchExpressions",
            [{"key": "k", "operator": "Exists", "values": ["x"]}],
            "matchExpressions[0]",
        ),
        (RESOURCE, "spec.concurrencyPolicy", "Sometimes", "spec.concurrencyPolicy"),
        (RESOURCE, "spec.successfulJobFlowsHistoryLimit", -1, "successfulJobFlowsHistoryLimit"),
        (RESOURCE, "spec.failedJobFlowsHistoryLimit", 2**31, "failedJobFlowsHistoryLimit"),
        (RESOURCE, "spec.failedJobFlowsHistoryLimit", True, "failedJobFlowsHistoryLimit"),
    ],
)
def test_each_rule_refuses_with_its_field(base: dict[str, Any], path: str, value: object, message: str) -> None:
    problems = job_flow_trigger_problems(_with(base, path, value))
    assert any(message in p for p in problems), problems


def test_a_trigger_without_a_spec_is_refused() -> None:
    assert job_flow_trigger_problems({"metadata": {"name": "t"}}) == ["spec: required"]


def test_an_update_that_leaves_the_spec_alone_passes() -> None:
    bad = _with(HTTP, "spec.jobFlowTemplateRef", _DELETE)
    assert job_flow_trigger_problems(bad, old=bad) == []
