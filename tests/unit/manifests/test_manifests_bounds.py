"""Issue 42: every field the project adds to upstream's CRDs is bounded in the schema; upstream's stay upstream's.

The default install's only admission is the CRD schema, so a string of ours without ``maxLength``,
a list without ``maxItems``, a map without ``maxProperties`` or an integer without ``maximum`` lets a
tenant store whatever the API server's 3 MiB request takes, for the controller to read (and expand).
The walker below goes through each generated CRD beside the schema upstream has at the same places
(``crdgen.upstream_counterpart``: upstream's CRD, pinned by its hash, and the upstream schemas we embed)
and names every field of ours without a bound. The bounds of the parameter fields are the expansion
budget's (``apis.params``), the deadline's the cron controller's (``apis.cronjobflow``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import crdgen as crds
import jsonschema
import pytest
import yaml
from crdgen.upstream import root_schema, upstream_counterpart

from jobflow_controller.apis.cronjobflow import MAX_STARTING_DEADLINE_SECONDS
from jobflow_controller.apis.params import (
    MAX_MATRIX_COMBINATIONS,
    MAX_PARAM_NAME_LENGTH,
    MAX_PARAM_VALUE_LENGTH,
    MAX_WHEN_EXPRESSIONS,
    MAX_WHEN_VALUES,
)

ROOT = Path(__file__).resolve().parents[3]
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(path: str) -> dict[str, Any]:
    (document,) = [d for d in yaml.load_all((ROOT / path).read_text(encoding="utf-8"), Loader=LOADER) if d]
    return dict(document)


#: Every CRD file the generator writes, as committed.
COMMITTED = {path: load(path) for path in crds.all_crds()}
JOBFLOW = COMMITTED["manifests/crds/flow.volcano.sh_jobflows.yaml"]
CRONJOBFLOW = COMMITTED["manifests/crds/flow.volcano.sh_cronjobflows.yaml"]


def missing_bound(node: Mapping[str, Any]) -> str | None:
    """What bound a field of ours lacks, or None: a string needs maxLength or an enum, a list maxItems, a map
    maxProperties, an integer maximum (or an enum); an object of named properties and a boolean need none."""
    kind = node.get("type")
    if "enum" in node:
        return None
    if kind == "string":
        return None if "maxLength" in node else "a string without maxLength"
    if kind == "array":
        return None if "maxItems" in node else "a list without maxItems"
    if kind in ("integer", "number"):
        return None if "maximum" in node else f"an {kind} without maximum"
    if kind == "object":
        if isinstance(node.get("additionalProperties"), Mapping) and "maxProperties" not in node:
            return "a map without maxProperties"
        if node.get("x-kubernetes-preserve-unknown-fields"):
            return "an object keeping unknown fields"
        return None
    if kind == "boolean":
        return None
    return f"no type to bound ({sorted(node)})"


def unbounded(schema: Mapping[str, Any], upstream: Mapping[str, Any] | None, path: str = "") -> list[str]:
    """``path: problem`` for every field of ``schema`` that upstream has not (``upstream`` is the schema
    upstream has at the same place, None where it has none) and that has no bound, in schema order."""
    out = []
    if upstream is None and path:
        problem = missing_bound(schema)
        if problem is not None:
            out.append(f"{path}: {problem}")
    theirs: Mapping[str, Any] = upstream or {}
    for key, child in schema.get("properties", {}).items():
        out.extend(unbounded(child, theirs.get("properties", {}).get(key) if upstream else None, f"{path}.{key}"))
    for key, step in (("items", "[]"), ("additionalProperties", "{}")):
        child = schema.get(key)
        if isinstance(child, Mapping):
            their_child = theirs.get(key) if isinstance(theirs.get(key), Mapping) else None
            out.extend(unbounded(child, their_child if upstream else None, f"{path}{step}"))
    return out


def crd_unbounded(crd: Mapping[str, Any]) -> list[str]:
    return unbounded(root_schema(crd), upstream_counterpart(crd["metadata"]["name"]))


# --- the walk over the generated CRDs --------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(COMMITTED))
def test_every_field_we_add_to_a_committed_crd_is_bounded(path: str) -> None:
    assert crd_unbounded(COMMITTED[path]) == []


@pytest.mark.parametrize("crd", [crds.jobflow_crd(with_rules=True), crds.cron_crd(with_rules=True)], ids=["jf", "cjf"])
def test_every_field_we_add_is_bounded_with_the_cel_component_too(crd: dict[str, Any]) -> None:
    assert crd_unbounded(crd) == []


def test_the_walker_names_a_field_of_ours_that_loses_its_bound() -> None:
    crd = copy.deepcopy(JOBFLOW)
    spec = root_schema(crd)["properties"]["spec"]["properties"]
    del spec["params"]["items"]["properties"]["value"]["maxLength"]
    del spec["flows"]["items"]["properties"]["when"]["maxItems"]
    assert crd_unbounded(crd) == [
        ".spec.flows[].when: a list without maxItems",
        ".spec.params[].value: a string without maxLength",
    ]


def test_the_walker_names_a_new_unbounded_field_even_inside_an_embedded_upstream_schema() -> None:
    crd = copy.deepcopy(CRONJOBFLOW)
    spec = root_schema(crd)["properties"]["spec"]["properties"]
    del spec["startingDeadlineSeconds"]["maximum"]
    template = spec["jobFlowTemplate"]["properties"]["spec"]["properties"]
    template["flows"]["items"]["properties"]["note"] = {"type": "string"}
    template["labels"] = {"additionalProperties": {"type": "string", "maxLength": 63}, "type": "object"}
    assert crd_unbounded(crd) == [
        ".spec.jobFlowTemplate.spec.flows[].note: a string without maxLength",
        ".spec.jobFlowTemplate.spec.labels: a map without maxProperties",
        ".spec.startingDeadlineSeconds: an integer without maximum",
    ]


def test_the_walker_exempts_exactly_upstreams_fields() -> None:
    # Upstream's flow names, targets and status lists have no bound: left so (the faithful contract). Walked
    # as if all were ours, they are named; the counterpart is what exempts them.
    everything_ours = unbounded(root_schema(JOBFLOW), None)
    assert ".spec.flows[].name: a string without maxLength" in everything_ours
    assert ".spec.flows[].dependsOn.targets: a list without maxItems" not in everything_ours  # our cap
    assert ".status.completedJobs: a list without maxItems" in everything_ours
    assert crd_unbounded(JOBFLOW) == []


def test_the_counterparts_are_upstreams_pinned_crds_and_embedded_schemas() -> None:
    jobflow = upstream_counterpart("jobflows.flow.volcano.sh")
    flow = jobflow["properties"]["spec"]["properties"]["flows"]["items"]["properties"]
    finally_entry = jobflow["properties"]["spec"]["properties"]["finally"]["items"]["properties"]
    assert finally_entry == {"patch": {"properties": {"jobSpec": flow["patch"]["properties"]["jobSpec"]}}}
    assert set(jobflow["properties"]["spec"]["properties"]) == {"flows", "jobRetainPolicy", "finally"}
    cron = upstream_counterpart("cronjobflows.flow.volcano.sh")
    assert set(cron["properties"]) == {"apiVersion", "kind", "metadata", "spec"}
    # A template's spec is a JobFlow's: upstream's fields, and a finally entry's jobSpec as in a JobFlow.
    assert (
        cron["properties"]["spec"]["properties"]["jobFlowTemplate"]["properties"]["spec"]
        == (jobflow["properties"]["spec"])
    )
    assert upstream_counterpart("jobtemplates.flow.volcano.sh") == root_schema(crds.jobtemplate_crd())


def test_upstreams_fields_keep_upstreams_schema() -> None:
    # Bounding ours touched nothing of upstream's: what the CRD has beyond upstream's is our additions alone.
    assert (
        crds.canonical_sha256(crds.without_our_additions(JOBFLOW))
        == (crds.UPSTREAM_CRD_SHA256["jobflows.flow.volcano.sh"])
    )


# --- the bounds themselves ---------------------------------------------------------------------------------


def at(schema: Mapping[str, Any], path: str) -> dict[str, Any]:
    node: Any = schema
    for step in path.split("."):
        node = node["items"] if step == "[]" else node["properties"][step]
    return dict(node)


def test_the_parameter_bounds_are_the_expansion_budgets() -> None:
    spec = root_schema(JOBFLOW)["properties"]["spec"]
    assert (MAX_PARAM_VALUE_LENGTH, MAX_WHEN_EXPRESSIONS, MAX_WHEN_VALUES) == (4096, 16, 64)
    for path in ("params.[].value", "flows.[].when.[].input", "flows.[].when.[].values.[]"):
        assert at(spec, path)["maxLength"] == MAX_PARAM_VALUE_LENGTH, path
    assert at(spec, "flows.[].matrix.params.[].values.[]")["maxLength"] == MAX_PARAM_VALUE_LENGTH
    assert at(spec, "flows.[].matrix.params.[].values")["maxItems"] == MAX_MATRIX_COMBINATIONS
    assert at(spec, "flows.[].when")["maxItems"] == MAX_WHEN_EXPRESSIONS
    assert at(spec, "flows.[].when.[].values")["maxItems"] == MAX_WHEN_VALUES
    assert at(spec, "params.[].name")["maxLength"] == MAX_PARAM_NAME_LENGTH
    assert at(spec, "flows.[].matrix.params.[].name")["maxLength"] == MAX_PARAM_NAME_LENGTH


def test_the_starting_deadline_is_at_most_a_year() -> None:
    assert MAX_STARTING_DEADLINE_SECONDS == 31_536_000
    spec = root_schema(CRONJOBFLOW)["properties"]["spec"]
    assert at(spec, "startingDeadlineSeconds")["maximum"] == MAX_STARTING_DEADLINE_SECONDS


def job_flow(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "spec": {"flows": [{"name": "a"}], **spec}}


def when(count: int = 1, values: int = 1, length: int = 1) -> list[dict[str, Any]]:
    return [{"input": "x" * length, "operator": "in", "values": ["v"] * values} for _ in range(count)]


AT_THE_BOUND = {
    "a param value": job_flow(params=[{"name": "p", "value": "x" * MAX_PARAM_VALUE_LENGTH}]),
    "a when input": job_flow(flows=[{"name": "a", "when": when(length=MAX_PARAM_VALUE_LENGTH)}]),
    "when expressions": job_flow(flows=[{"name": "a", "when": when(count=MAX_WHEN_EXPRESSIONS)}]),
    "when values": job_flow(flows=[{"name": "a", "when": when(values=MAX_WHEN_VALUES)}]),
    "a matrix value": job_flow(
        flows=[{"name": "a", "matrix": {"params": [{"name": "m", "values": ["x" * MAX_PARAM_VALUE_LENGTH]}]}}]
    ),
}
PAST_THE_BOUND = {
    "a param value": (
        job_flow(params=[{"name": "p", "value": "x" * (MAX_PARAM_VALUE_LENGTH + 1)}]),
        "is too long",
    ),
    "a when input": (
        job_flow(flows=[{"name": "a", "when": when(length=MAX_PARAM_VALUE_LENGTH + 1)}]),
        "is too long",
    ),
    "when expressions": (job_flow(flows=[{"name": "a", "when": when(count=MAX_WHEN_EXPRESSIONS + 1)}]), "too long"),
    "when values": (job_flow(flows=[{"name": "a", "when": when(values=MAX_WHEN_VALUES + 1)}]), "too long"),
    "a matrix value": (
        job_flow(
            flows=[{"name": "a", "matrix": {"params": [{"name": "m", "values": ["x" * (MAX_PARAM_VALUE_LENGTH + 1)]}]}}]
        ),
        "is too long",
    ),
}


#: The base CRD's schema as a validator, built once (``jsonschema.validate`` checks the 0.5 MB schema each call).
VALIDATOR = jsonschema.Draft7Validator(root_schema(JOBFLOW))


@pytest.mark.parametrize("document", list(AT_THE_BOUND.values()), ids=list(AT_THE_BOUND))
def test_the_base_crd_takes_a_field_at_its_bound(document: dict[str, Any]) -> None:
    VALIDATOR.validate(document)


@pytest.mark.parametrize(("document", "error"), list(PAST_THE_BOUND.values()), ids=list(PAST_THE_BOUND))
def test_the_base_crd_refuses_a_field_past_its_bound(document: dict[str, Any], error: str) -> None:
    with pytest.raises(jsonschema.ValidationError, match=error):
        VALIDATOR.validate(document)


def test_the_cronjobflow_crd_refuses_a_starting_deadline_past_a_year() -> None:
    validator = jsonschema.Draft7Validator(root_schema(CRONJOBFLOW))
    template = {"spec": {"flows": [{"name": "a"}]}}

    def cron(deadline: int) -> dict[str, Any]:
        return {"spec": {"schedule": "@daily", "jobFlowTemplate": template, "startingDeadlineSeconds": deadline}}

    validator.validate(cron(MAX_STARTING_DEADLINE_SECONDS))
    with pytest.raises(jsonschema.ValidationError, match="is greater than the maximum of 31536000"):
        validator.validate(cron(10**11))
