"""`JobFlowTemplate` and the run of one, built by the SDK (jobflow_sdk/jobflowtemplate.py, docs/templates.md)."""

from __future__ import annotations

import pytest

from jobflow_controller.validation.jobflowtemplate import run_params_problems
from jobflow_sdk import JobFlowTemplate
from jobflow_sdk.jobflowtemplate import run_of


def test_a_template_is_built_with_its_declared_params_and_its_jobflow() -> None:
    with JobFlowTemplate("etl", params={"dataset": None, "mode": "full"}, descriptions={"dataset": "input"}) as etl:
        etl.flow("prepare") >> etl.flow("train")
    doc = etl.to_dict()
    assert doc["kind"] == "JobFlowTemplate"
    assert doc["spec"]["params"] == [{"name": "dataset", "description": "input"}, {"name": "mode", "default": "full"}]
    assert [f["name"] for f in doc["spec"]["jobFlow"]["flows"]] == ["prepare", "train"]
    assert etl.problems() == []
    assert etl.param("mode") == "$(params.mode)"
    with pytest.raises(KeyError):
        etl.param("nope")


def test_a_run_names_its_template_and_passes_admission() -> None:
    etl = JobFlowTemplate("etl", params={"dataset": None})
    etl.flow("a")
    doc = run_of("etl", {"dataset": "d"})
    assert doc["metadata"] == {"labels": {"flow.volcano.sh/jobflowtemplate": "etl"}, "generateName": "etl-"}
    assert doc["spec"] == {"jobFlowTemplateRef": {"name": "etl"}, "params": [{"name": "dataset", "value": "d"}]}
    assert run_params_problems(doc, etl.to_dict()) == []
    assert run_of("etl", name="mine")["metadata"]["name"] == "mine"
