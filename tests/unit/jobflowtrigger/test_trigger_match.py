"""Which resource events fire a trigger (jobflowtrigger/match.py)."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.apis.jobflowtrigger import ResourceSource
from jobflow_controller.jobflowtrigger.match import event_fires, selector_matches


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ({}, {}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchLabels": {"a": "1"}}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Near"}]}, {"a": ""}, False),
    ],
)
def test_a_label_selector_matches_as_kubernetes(
    selector: dict[str, Any], labels: dict[str, str], matches: bool
) -> None:
    assert selector_matches(selector, labels) is matches


SOURCE = ResourceSource("v1", "ConfigMap", {"matchLabels": {"dataset": "daily"}}, ("create", "update"))
CM = {"metadata": {"name": "cm", "namespace": "ns", "labels": {"dataset": "daily"}}}


@pytest.mark.parametrize(
    ("namespace", "event", "obj", "fires"),
    [
        ("ns", "create", CM, True),
        ("ns", "update", CM, True),
        ("ns", "delete", CM, False),
        ("other", "create", CM, False),
        ("ns", "create", {"metadata": {"name": "cm", "namespace": "ns"}}, False),
    ],
)
def test_only_the_triggers_namespace_events_and_selector_fire(
    namespace: str, event: str, obj: dict[str, Any], fires: bool
) -> None:
    assert event_fires(SOURCE, namespace, event, obj) is fires
