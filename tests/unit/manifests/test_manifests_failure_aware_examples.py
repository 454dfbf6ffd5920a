"""The three failure-aware examples of docs/rules.md (manifests/examples/failure-aware): each JobFlow passes
the validation package and our CRD's schema with nothing pruned, has a JobTemplate for every flow and
finally entry, and fails in the simulator exactly where its comment says."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from closed_schema import closed_jobflow_schema

from jobflow_controller.local.demo import FAILURE_AWARE_EXAMPLE, FLOWS
from jobflow_controller.local.kubectl import EXAMPLES_DIR, kubectl_path
from jobflow_controller.validation import validate_job_flow

DIRECTORY = EXAMPLES_DIR / "failure-aware"
PHASES = "sim.jobflow.volcano.sh/phases"


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


KUSTOMIZATION = yaml.safe_load((DIRECTORY / "kustomization.yaml").read_text(encoding="utf-8"))
EXAMPLES = {name: documents(DIRECTORY / name) for name in KUSTOMIZATION["resources"]}
JOB_FLOWS = {d["metadata"]["name"]: d for docs in EXAMPLES.values() for d in docs if d["kind"] == "JobFlow"}


def templates_of(example: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in EXAMPLES[f"{example}-jobtemplates.yaml"]}


def test_the_three_examples_are_listed_templates_first() -> None:
    files = sorted(p.name for p in DIRECTORY.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(KUSTOMIZATION["resources"]) == files
    kinds = [d["kind"] for docs in EXAMPLES.values() for d in docs]
    assert kinds == sorted(kinds, key=lambda kind: kind != "JobTemplate")
    assert sorted(JOB_FLOWS) == ["flaky-optional-step", "nightly-report", "on-failure-alerting"]


@pytest.mark.parametrize("name", sorted(JOB_FLOWS))
def test_each_example_passes_the_validation_package(name: str) -> None:
    assert validate_job_flow(JOB_FLOWS[name]) == []


@pytest.mark.parametrize("name", sorted(JOB_FLOWS))
def test_each_example_fits_our_crd_with_nothing_pruned(name: str) -> None:
    jsonschema.Draft202012Validator(closed_jobflow_schema()).validate(JOB_FLOWS[name])


@pytest.mark.parametrize("name", sorted(JOB_FLOWS))
def test_each_flow_and_finally_entry_has_its_jobtemplate(name: str) -> None:
    spec = JOB_FLOWS[name]["spec"]
    names = [f["name"] for f in spec["flows"]] + [f["name"] for f in spec.get("finally", [])]
    assert sorted(names) == sorted(templates_of(name))


@pytest.mark.parametrize(
    ("name", "failing"),
    [
        ("on-failure-alerting", ["train-model"]),
        ("flaky-optional-step", ["enrich-metadata"]),
        ("nightly-report", ["extract-us"]),
    ],
)
def test_each_example_fails_in_the_simulator_where_its_comment_says(name: str, failing: list[str]) -> None:
    scripts = {
        t: doc["spec"]["tasks"][0]["template"]["metadata"]["annotations"][PHASES]
        for t, doc in templates_of(name).items()
    }
    assert sorted(t for t, script in scripts.items() if script.endswith(",Failed")) == failing
    assert all(script.endswith((",Completed", ",Failed")) for script in scripts.values())


def test_the_examples_use_every_field_of_the_api() -> None:
    flows = [f for jf in JOB_FLOWS.values() for f in jf["spec"]["flows"]]
    rules = {f["dependsOn"].get("rule") for f in flows if "dependsOn" in f} - {None}
    assert rules == {"AnyFailed", "AllDone", "NoneFailed"}
    assert [f["name"] for f in flows if f.get("continueOnFailure")] == ["enrich-metadata"]
    assert JOB_FLOWS["nightly-report"]["spec"]["failurePolicy"] == "RunToCompletion"
    assert JOB_FLOWS["nightly-report"]["spec"]["finally"] == [{"name": "notify-team"}]


def test_the_demo_runs_nightly_report_and_expects_it_failed() -> None:
    assert [p.relative_to(DIRECTORY).as_posix() for p in FAILURE_AWARE_EXAMPLE] == [
        "nightly-report-jobtemplates.yaml",
        "nightly-report-jobflow.yaml",
    ]
    assert FLOWS["nightly-report"] == "Failed"


def test_kubectl_kustomize_builds_the_directory() -> None:
    out = subprocess.run(
        [kubectl_path(), "kustomize", str(DIRECTORY)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    built = [d for d in yaml.safe_load_all(out) if d]
    assert len(built) == sum(len(docs) for docs in EXAMPLES.values())
