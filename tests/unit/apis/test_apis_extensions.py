"""`extensions`: which of our extensions a JobFlow uses, decided once from its keys (apis/jobflow.py).

A JobFlow that sets none of our fields, annotations or status stamps uses none, and its sync runs no
extension's seam; each field, annotation and stamp names its extension. A key set to null counts as
unset (the parsers read it so); any other value counts, whatever it is, so a seam errs on running.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.apis.jobflow import Extension, extensions

E = Extension


def _flow(
    spec: dict[str, Any] | None = None, *, flows: list[dict[str, Any]] | None = None, **top: Any
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": "f", "namespace": "default"},
        "spec": {
            "flows": flows if flows is not None else [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
        },
    }
    obj["spec"].update(spec or {})
    for key, value in top.items():
        obj[key] = {**obj.get(key, {}), **value}
    return obj


@pytest.mark.parametrize(
    ("obj", "uses"),
    [
        (_flow(), set()),
        (_flow({"jobRetainPolicy": "delete"}), set()),
        (_flow(flows=[{"name": "a", "dependsOn": {"targets": []}}]), set()),
        (_flow({"jobFlowTemplateRef": {"name": "t"}}), {E.TEMPLATE}),
        (_flow({"suspend": True}), {E.LIFECYCLE}),
        (_flow({"suspend": False}), {E.LIFECYCLE}),
        (_flow({"shutdown": "Stop"}), {E.LIFECYCLE}),
        (_flow({"activeDeadlineSeconds": 60}), {E.LIFECYCLE}),
        (_flow({"ttlSecondsAfterFinished": 0}), {E.LIFECYCLE}),
        (_flow(flows=[{"name": "a", "activeDeadlineSeconds": 5}]), {E.LIFECYCLE}),
        (_flow({"params": [{"name": "p", "value": "1"}]}), {E.PARAMS}),
        (_flow(flows=[{"name": "a", "when": [{"input": "x", "operator": "in", "values": ["x"]}]}]), {E.PARAMS}),
        (_flow(flows=[{"name": "a", "matrix": {"params": [{"name": "i", "value": ["1"]}]}}]), {E.PARAMS}),
        (_flow(flows=[{"name": "a", "results": {"names": ["r"]}}]), {E.RESULTS}),
        (_flow({"results": [{"name": "r", "value": "x"}]}), {E.RESULTS}),
        (_flow({"failurePolicy": "RunToCompletion"}), {E.RULES}),
        (_flow({"finally": [{"name": "z"}]}), {E.RULES}),
        (_flow({"finally": [{"name": "z", "patch": {"jobSpec": {}}}]}), {E.RULES, E.PATCH}),
        (_flow(flows=[{"name": "a", "dependsOn": {"targets": ["b"], "rule": "AnyFailed"}}]), {E.RULES}),
        (_flow(flows=[{"name": "a", "continueOnFailure": True}]), {E.RULES}),
        (_flow(flows=[{"name": "a", "dependsOn": {"targets": ["b"], "probe": {"http": {}}}}]), {E.PROBES}),
        (_flow(flows=[{"name": "a", "patch": {"jobSpec": {}}}]), {E.PATCH}),
        (_flow(flows=[{"name": "a", "retry": {"maxRetries": 1}}]), {E.RETRY, E.ATTEMPTS}),
        (_flow(metadata={"annotations": {"flow.volcano.sh/retry": "{}"}}), {E.RETRY, E.ATTEMPTS}),
        (_flow(metadata={"annotations": {"flow.volcano.sh/retry-request": "{}"}}), {E.RERUN, E.ATTEMPTS}),
        (_flow(metadata={"annotations": {"other": "x"}}), set()),
        (_flow(status={"storedJobFlowTemplateSpec": "{}"}), {E.TEMPLATE}),
        (_flow(status={"suspendedSince": "2026-12-06T07:00:00Z"}), {E.LIFECYCLE}),
        (_flow(status={"finishedAt": "2026-12-06T07:00:00Z"}), {E.LIFECYCLE}),
        (_flow(status={"retryRequest": "r1"}), {E.LIFECYCLE}),
        (_flow(status={"jobStatusList": [{"name": "f-a", "runningHistories": [{"state": "Running"}]}]}), set()),
        (_flow(status={"jobStatusList": [{"name": "f-a", "runningHistories": [{"state": "Retrying"}]}]}), {E.ATTEMPTS}),
        (
            _flow(
                status={
                    "jobStatusList": [{"name": "f-a", "runningHistories": [{"state": "Rerun"}, {"state": "Running"}]}]
                }
            ),
            {E.ATTEMPTS},
        ),
        (_flow({"suspend": None, "params": None}, flows=[{"name": "a", "retry": None, "patch": None}]), set()),
        (_flow(flows=["not a flow", {"name": "a", "dependsOn": "not an object"}]), set()),
    ],
)
def test_each_field_annotation_and_stamp_names_its_extension(obj: dict[str, Any], uses: set[Extension]) -> None:
    assert extensions(obj) == uses


def test_a_malformed_object_uses_no_extension() -> None:
    assert extensions({}) == frozenset()
    assert extensions({"spec": "x", "status": [], "metadata": None}) == frozenset()
