"""The typed models: generated from manifests/crds/ (never drifting from them), strict as the API
server's schema, and every problem reported with the field's path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from jobflow_sdk import JobFlow, JobTemplate, SchemaError
from jobflow_sdk.models import CronJobFlowModel, JobFlowModel, JobTemplateModel
from jobflow_sdk.schema import field_path, schema_problems

ROOT = Path(__file__).resolve().parents[3]


def test_the_checked_in_models_are_what_the_current_crds_generate() -> None:
    # Regenerates from manifests/crds/ as they are now: after a CRD change, `make sdk-models`.
    result = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "gen_sdk_models.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_the_root_models_are_the_three_kinds() -> None:
    assert {m.__name__ for m in (JobFlowModel, JobTemplateModel, CronJobFlowModel)} == {
        "JobFlow",
        "JobTemplate",
        "CronJobFlow",
    }


def job_flow(**flow: object) -> dict[str, object]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "p"},
        "spec": {"flows": [{"name": "a", **flow}]},
    }


def test_an_unknown_field_is_refused_with_its_path() -> None:
    assert schema_problems(job_flow(dependsOn={"target": ["b"]}), "JobFlow") == [
        "spec.flows[0].dependsOn.target: Extra inputs are not permitted"
    ]


def test_a_wrong_type_is_refused_with_its_path_and_value() -> None:
    assert schema_problems(job_flow(continueOnFailure="yes"), "JobFlow") == [
        'spec.flows[0].continueOnFailure: Input should be a valid boolean (got "yes")'
    ]


def test_a_missing_required_field_is_refused_with_its_path() -> None:
    assert schema_problems(job_flow(retry={"backoff": "1s"}), "JobFlow") == [
        "spec.flows[0].retry.maxRetries: Field required"
    ]


def test_an_enum_is_checked() -> None:
    [problem] = schema_problems(job_flow(dependsOn={"rule": "Always"}), "JobFlow")
    assert problem.startswith("spec.flows[0].dependsOn.rule: Input should be 'AllCompleted'")


def test_the_volcano_job_spec_of_a_template_is_typed_down_to_the_container() -> None:
    template = JobTemplate("t", image="i", resources={"requests": {"cpu": "1"}}).to_dict()
    template["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["imagePullPolice"] = "Always"
    assert schema_problems(template, "JobTemplate") == [
        "spec.tasks[0].template.spec.containers[0].imagePullPolice: Extra inputs are not permitted"
    ]


def test_an_int_or_string_takes_both() -> None:
    template = JobTemplate("t", image="i", resources={"requests": {"cpu": 2, "memory": "1Gi"}}).to_dict()
    assert schema_problems(template, "JobTemplate") == []


def test_from_dict_refuses_what_the_schema_refuses_before_anything_is_sent() -> None:
    with pytest.raises(SchemaError, match=r"spec\.flows\[0\]\.matrix\.params: Field required") as caught:
        JobFlow.from_dict(job_flow(matrix={"maxParallel": 1}))
    assert caught.value.problems == ["spec.flows[0].matrix.params: Field required"]


def test_a_builder_field_of_the_wrong_type_fails_validate_with_its_path() -> None:
    with JobFlow("p") as jf:
        jf.flow("a", active_deadline_seconds="60")  # type: ignore[arg-type]
    assert jf.validate() == ['spec.flows[0].activeDeadlineSeconds: Input should be a valid integer (got "60")']
    with pytest.raises(SchemaError):
        jf.check()


def test_a_union_members_name_is_left_out_of_the_path() -> None:
    document = {"spec": {"x": [{"y": 1}]}}
    assert field_path(("spec", "x", 0, "int", "y"), document) == "spec.x[0].y"
