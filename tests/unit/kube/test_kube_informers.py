"""The factory's transform: what every cached JobFlow, JobTemplate and Job goes through."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from jobflow_controller.kube.informers import default_transform

EXAMPLES = Path(__file__).resolve().parents[3] / "manifests" / "examples"
MANAGED_FIELDS = [
    {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {}}},
        "manager": "kubectl",
        "operation": "Update",
    }
]


def _examples() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(EXAMPLES.glob("*-*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def _as_served(obj: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """The object as the API server would send it: decoded from JSON, with managedFields."""
    served = copy.deepcopy(obj)
    metadata = served["metadata"]
    if name is not None:
        metadata["name"] = name
    metadata.update({"resourceVersion": "42", "uid": f"uid-{metadata['name']}", "managedFields": MANAGED_FIELDS})
    decoded: dict[str, Any] = orjson.loads(orjson.dumps(served))
    return decoded


@pytest.mark.parametrize("obj", _examples(), ids=lambda o: f"{o['kind']}-{o['metadata']['name']}")
def test_the_cached_object_is_the_served_one_without_managed_fields(obj: dict[str, Any]) -> None:
    served = _as_served(obj)
    expected = copy.deepcopy(served)
    del expected["metadata"]["managedFields"]
    cached = default_transform()(served)
    assert cached == expected
    assert orjson.dumps(cached) == orjson.dumps(expected)  # same key order, same types
    assert served["metadata"]["managedFields"] == MANAGED_FIELDS  # the input is left alone


def test_two_objects_with_one_spec_share_it_in_the_cache() -> None:
    template = next(o for o in _examples() if o["kind"] == "JobTemplate")
    transform = default_transform()
    transform(_as_served(template, "seen-once"))
    first = transform(_as_served(template, "a"))
    second = transform(_as_served(template, "b"))
    assert first["spec"] is second["spec"]
    assert first["metadata"]["name"] == "a"
    assert second["metadata"]["name"] == "b"
