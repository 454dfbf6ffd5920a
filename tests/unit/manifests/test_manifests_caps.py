"""Issue 21: one cap on flows per JobFlow and on targets per flow, the same number everywhere.

The constants live in ``jobflow_controller.validation.limits`` (the webhook's and the controller's rule,
tests/unit/validation/test_validation_limits.py); the generator imports them for the base CRD's
``maxItems``, which the CEL Component's cost estimates rest on. Here: the committed files carry those
numbers, and the base CRD's schema refuses a JobFlow over a cap (jsonschema, as the example tests).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import crdgen as crds
import jsonschema
import pytest
import yaml

from jobflow_controller.validation import MAX_FINALLY, MAX_FLOWS, MAX_TARGETS, validation_message

ROOT = Path(__file__).resolve().parents[3]
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(path: str) -> Any:
    documents = [d for d in yaml.load_all((ROOT / path).read_text(encoding="utf-8"), Loader=LOADER) if d]
    (document,) = documents
    return document


def flows_schema(crd: dict[str, Any]) -> dict[str, Any]:
    (version,) = crd["spec"]["versions"]
    flows: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["flows"]
    return flows


def root_schema(crd: dict[str, Any]) -> dict[str, Any]:
    (version,) = crd["spec"]["versions"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


BASE_CRD = load("manifests/crds/flow.volcano.sh_jobflows.yaml")
#: The CRD as the Component makes it: the committed base with the committed patch applied.
WITH_RULES = crds.apply_patch(BASE_CRD, load(crds.VALIDATION_PATCH_FILE))


def test_the_caps_are_500_flows_and_100_targets_defined_once() -> None:
    assert (MAX_FLOWS, MAX_TARGETS) == (500, 100)
    # The generator's names are the runtime's objects, not copies.
    assert crds.MAX_FLOWS is MAX_FLOWS
    assert crds.MAX_TARGETS is MAX_TARGETS


@pytest.mark.parametrize("crd", [BASE_CRD, WITH_RULES], ids=["base CRD", "with the CEL Component"])
def test_the_committed_crd_files_carry_the_constants(crd: dict[str, Any]) -> None:
    flows = flows_schema(crd)
    assert flows["maxItems"] == MAX_FLOWS
    assert flows["items"]["properties"]["dependsOn"]["properties"]["targets"]["maxItems"] == MAX_TARGETS


def test_the_component_relies_on_the_base_caps_and_says_their_numbers() -> None:
    # The Component cannot `add` maxItems over the base CRD's (apply_patch refuses), so the rules' cost
    # bounds are the base CRD's caps; its header and the estimates in rules.py name the same numbers.
    assert not [op for op in crds.validation_patch() if op["path"].endswith("/maxItems")]
    header = (ROOT / crds.VALIDATION_PATCH_FILE).read_text(encoding="utf-8")
    assert f"maxItems {MAX_FLOWS} (flows) and {MAX_TARGETS} (targets)" in header
    rules = (ROOT / "hack" / "crdgen" / "rules.py").read_text(encoding="utf-8")
    assert f"MAX_FLOWS = {MAX_FLOWS}, MAX_TARGETS = {MAX_TARGETS} (the maxItems of the base CRD" in rules
    base = (ROOT / "manifests/crds/flow.volcano.sh_jobflows.yaml").read_text(encoding="utf-8")
    assert f"maxItems {MAX_FLOWS} on spec.flows, maxItems {MAX_TARGETS} on" in base


def job_flow(flows: int, targets: int = 0) -> dict[str, Any]:
    """``flows`` flows named f0, f1, ...; with ``targets``, the last one waits for that many of the others."""
    spec_flows: list[dict[str, Any]] = [{"name": f"f{i}"} for i in range(flows)]
    if targets:
        spec_flows[-1]["dependsOn"] = {"targets": [f"f{i}" for i in range(targets)]}
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {"flows": spec_flows, "jobRetainPolicy": "retain"},
    }


def schema_errors(crd: dict[str, Any], document: dict[str, Any]) -> list[tuple[str, str, Any]]:
    validator = jsonschema.Draft202012Validator(root_schema(crd))
    return [(e.validator, e.json_path, e.validator_value) for e in validator.iter_errors(document)]


@pytest.mark.parametrize("crd", [BASE_CRD, WITH_RULES], ids=["base CRD", "with the CEL Component"])
def test_the_crd_schema_takes_a_jobflow_at_the_caps(crd: dict[str, Any]) -> None:
    at_caps = job_flow(MAX_FLOWS, targets=MAX_TARGETS)
    assert schema_errors(crd, at_caps) == []
    assert validation_message(at_caps) is None  # and so does the webhook


@pytest.mark.parametrize("crd", [BASE_CRD, WITH_RULES], ids=["base CRD", "with the CEL Component"])
def test_the_crd_schema_refuses_501_flows(crd: dict[str, Any]) -> None:
    too_many = job_flow(MAX_FLOWS + 1)
    assert schema_errors(crd, too_many) == [("maxItems", "$.spec.flows", MAX_FLOWS)]
    assert validation_message(too_many) == "jobflow has 501 flows, more than the 500 allowed"


@pytest.mark.parametrize("crd", [BASE_CRD, WITH_RULES], ids=["base CRD", "with the CEL Component"])
def test_the_crd_schema_refuses_101_targets(crd: dict[str, Any]) -> None:
    too_many = job_flow(MAX_TARGETS + 2, targets=MAX_TARGETS + 1)
    path = f"$.spec.flows[{MAX_TARGETS + 1}].dependsOn.targets"
    assert schema_errors(crd, too_many) == [("maxItems", path, MAX_TARGETS)]
    assert validation_message(too_many) == (
        'jobflow Flow "f101": dependsOn.targets: has 101 targets, more than the 100 allowed'
    )


# --- issue 22: finally entries ----------------------------------------------------------------------------


def finally_schema(crd: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = root_schema(crd)["properties"]["spec"]["properties"]["finally"]
    return schema


def with_finally(count: int) -> dict[str, Any]:
    document = job_flow(1)
    document["spec"]["finally"] = [{"name": f"n{i}"} for i in range(count)]
    return document


@pytest.mark.parametrize("crd", [BASE_CRD, WITH_RULES], ids=["base CRD", "with the CEL Component"])
def test_the_crd_caps_finally_entries_as_the_webhook_does(crd: dict[str, Any]) -> None:
    assert MAX_FINALLY == 100
    assert crds.MAX_FINALLY is MAX_FINALLY
    assert finally_schema(crd)["maxItems"] == MAX_FINALLY
    assert schema_errors(crd, with_finally(MAX_FINALLY)) == []
    assert validation_message(with_finally(MAX_FINALLY)) is None
    assert schema_errors(crd, with_finally(MAX_FINALLY + 1)) == [("maxItems", "$.spec.finally", MAX_FINALLY)]
    assert (
        validation_message(with_finally(MAX_FINALLY + 1))
        == "jobflow has 101 finally entries, more than the 100 allowed"
    )


def test_the_committed_files_name_the_finally_cap() -> None:
    base = (ROOT / "manifests/crds/flow.volcano.sh_jobflows.yaml").read_text(encoding="utf-8")
    assert f"spec.finally (maxItems {MAX_FINALLY})" in base
    rules = (ROOT / "hack" / "crdgen" / "rules.py").read_text(encoding="utf-8")
    assert f"MAX_FINALLY = {MAX_FINALLY}" in rules
