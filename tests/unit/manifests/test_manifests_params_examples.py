"""The two examples of docs/params.md (manifests/examples/params): each JobFlow passes the validation package
and our CRD's schema with nothing pruned, has a JobTemplate for every flow, uses the fields the docs
show, and `make demo` runs the sweep."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from closed_schema import closed_jobflow_schema

from jobflow_controller.apis.params import matrix
from jobflow_controller.local.demo import FLOWS, PARAMS_EXAMPLE, TREE_FLOWS
from jobflow_controller.local.kubectl import EXAMPLES_DIR, kubectl_path
from jobflow_controller.validation import validate_job_flow

DIRECTORY = EXAMPLES_DIR / "params"


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


KUSTOMIZATION = yaml.safe_load((DIRECTORY / "kustomization.yaml").read_text(encoding="utf-8"))
EXAMPLES = {name: documents(DIRECTORY / name) for name in KUSTOMIZATION["resources"]}
JOB_FLOWS = {d["metadata"]["name"]: d for docs in EXAMPLES.values() for d in docs if d["kind"] == "JobFlow"}


def test_the_two_examples_are_listed_templates_first() -> None:
    files = sorted(p.name for p in DIRECTORY.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(KUSTOMIZATION["resources"]) == files
    kinds = [d["kind"] for docs in EXAMPLES.values() for d in docs]
    assert kinds == sorted(kinds, key=lambda kind: kind != "JobTemplate")
    assert sorted(JOB_FLOWS) == ["conditional-step", "hyperparameter-sweep"]


@pytest.mark.parametrize("name", sorted(JOB_FLOWS))
def test_each_example_passes_the_validation_package(name: str) -> None:
    assert validate_job_flow(JOB_FLOWS[name]) == []


@pytest.mark.parametrize("name", sorted(JOB_FLOWS))
def test_each_example_fits_our_crd_with_nothing_pruned(name: str) -> None:
    jsonschema.Draft202012Validator(closed_jobflow_schema()).validate(JOB_FLOWS[name])


@pytest.mark.parametrize("name", sorted(JOB_FLOWS))
def test_each_flow_has_its_jobtemplate(name: str) -> None:
    templates = {d["metadata"]["name"] for d in EXAMPLES[f"{name}-jobtemplates.yaml"]}
    assert sorted(f["name"] for f in JOB_FLOWS[name]["spec"]["flows"]) == sorted(templates)


def test_the_sweep_is_2_by_3_with_max_parallel_2_and_its_templates_use_the_values() -> None:
    train = JOB_FLOWS["hyperparameter-sweep"]["spec"]["flows"][1]
    found = matrix(train["matrix"])
    assert found is not None and (found.size, found.max_parallel) == (6, 2)
    text = (DIRECTORY / "hyperparameter-sweep-jobtemplates.yaml").read_text(encoding="utf-8")
    assert all(ref in text for ref in ("$(matrix.lr)", "$(matrix.seed)", "$(params.dataset)"))


def test_the_conditional_step_skips_a_step_by_when_and_joins_with_none_failed() -> None:
    spec = JOB_FLOWS["conditional-step"]["spec"]
    assert spec["params"] == [{"name": "mode", "value": "incremental"}]
    flows = {f["name"]: f for f in spec["flows"]}
    assert flows["full-reindex"]["when"] == [{"input": "$(params.mode)", "operator": "in", "values": ["full"]}]
    assert flows["publish"]["dependsOn"]["rule"] == "NoneFailed"


def test_the_demo_runs_the_sweep_and_draws_it() -> None:
    assert [p.relative_to(DIRECTORY).as_posix() for p in PARAMS_EXAMPLE] == [
        "hyperparameter-sweep-jobtemplates.yaml",
        "hyperparameter-sweep-jobflow.yaml",
    ]
    assert FLOWS["hyperparameter-sweep"] == "Succeed"
    assert "hyperparameter-sweep" in TREE_FLOWS


def test_kubectl_kustomize_builds_the_directory() -> None:
    out = subprocess.run(
        [kubectl_path(), "kustomize", str(DIRECTORY)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert len([d for d in yaml.safe_load_all(out) if d]) == sum(len(docs) for docs in EXAMPLES.values())
