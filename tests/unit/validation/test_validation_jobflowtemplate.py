"""Admission of JobFlowTemplates and of runs from one: each refusal (docs/templates.md)."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.validation import validate_job_flow
from jobflow_controller.validation.jobflowtemplate import run_params_problems, template_problems
from jobflow_controller.validation.jobflowtemplate_ref import REFUSE_BOTH, template_ref_problems


def template(params: Any = None, job_flow: Any = None, name: str = "etl") -> dict[str, Any]:
    spec: dict[str, Any] = {"jobFlow": {"flows": [{"name": "a"}]} if job_flow is None else job_flow}
    if params is not None:
        spec["params"] = params
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": spec}


def test_a_template_with_params_and_a_dag_is_admitted() -> None:
    flows = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    assert (
        template_problems(
            template([{"name": "x"}, {"name": "y", "default": "1", "description": "why"}], {"flows": flows})
        )
        == []
    )


@pytest.mark.parametrize(
    ("tmpl", "problem"),
    [
        (template(name="t" * 64), "metadata.name: must be no more than 63 characters (it is the runs' label value)"),
        (template("x"), 'spec.params: must be a list of {name, default, description}, got "x"'),
        (
            template([{"name": "1x"}]),
            "spec.params[0].name: must match [A-Za-z_][A-Za-z0-9_-]* and be at most 63 characters",
        ),
        (template([{"name": "x"}, {"name": "x"}]), 'spec.params[1].name: "x" is declared more than once'),
        (template([{}]), "spec.params[0].name: required"),
        (
            template([{"name": "x", "default": 1}]),
            "spec.params[0].default: must be a string of at most 4096 characters",
        ),
        (
            template([{"name": "x", "default": "v" * 4097}]),
            "spec.params[0].default: must be a string of at most 4096 characters",
        ),
        (
            template([{"name": "x", "description": "d" * 1025}]),
            "spec.params[0].description: must be a string of at most 1024 characters",
        ),
        (template([{"name": f"p{i}"} for i in range(101)]), "spec.params: has 101 params, more than the 100 allowed"),
        (
            {"metadata": {"name": "t"}, "spec": {}},
            "spec.jobFlow: required, an object: the JobFlow spec each run is made from",
        ),
        (
            template(job_flow={"jobFlowTemplateRef": {"name": "other"}}),
            "spec.jobFlow.jobFlowTemplateRef: not allowed in a template (a template cannot run another)",
        ),
        (
            template(job_flow={"flows": [{"name": "a"}], "params": [{"name": "x", "value": "1"}]}),
            "spec.jobFlow.params: not allowed in a template (declare them in spec.params)",
        ),
        (
            template(job_flow={"flows": [{"name": "a", "dependsOn": {"targets": ["b"]}}]}),
            "spec.jobFlow: jobflow Flow is not DAG: vertex is not defined: b",
        ),
        (
            template(job_flow={"flows": [{"name": "a"}, {"name": "a"}]}),
            'spec.jobFlow: jobflow Flow names must be unique: "a"',
        ),
    ],
)
def test_a_template_is_refused(tmpl: dict[str, Any], problem: str) -> None:
    assert problem in template_problems(tmpl)


def test_a_template_update_that_leaves_the_spec_is_never_refused() -> None:
    bad = template(job_flow={"flows": [{"name": "a"}, {"name": "a"}]})
    assert template_problems({**bad, "metadata": {"name": "etl", "labels": {"x": "y"}}}, bad) == []


def test_a_template_params_defaults_are_checked_where_a_jobflow_reads_them() -> None:
    # The params' defaults are the values `when` and the Jobs read: a valid template stays valid.
    flows = [{"name": "a", "when": [{"input": "$(params.mode)", "operator": "in", "values": ["full"]}]}]
    assert template_problems(template([{"name": "mode", "default": "full"}], {"flows": flows})) == []


@pytest.mark.parametrize(
    ("spec", "problems"),
    [
        ({"jobFlowTemplateRef": {"name": "etl"}}, []),
        ({"jobFlowTemplateRef": {"name": "etl"}, "flows": []}, []),
        ({"jobFlowTemplateRef": {"name": "etl"}, "flows": [{"name": "a"}]}, [REFUSE_BOTH]),
        ({"jobFlowTemplateRef": "etl"}, ['spec.jobFlowTemplateRef: must be an object with a name, got "etl"']),
        ({"jobFlowTemplateRef": {}}, ["spec.jobFlowTemplateRef.name: required, the JobFlowTemplate to run"]),
        ({"jobFlowTemplateRef": {"name": "t" * 64}}, ["spec.jobFlowTemplateRef.name: must be at most 63 characters"]),
        ({"flows": [{"name": "a"}]}, []),
    ],
)
def test_a_runs_reference(spec: dict[str, Any], problems: list[str]) -> None:
    assert template_ref_problems({"spec": spec}) == problems


def test_a_jobflow_with_flows_and_a_reference_is_invalid_for_the_controller_too() -> None:
    job_flow = {
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {"jobFlowTemplateRef": {"name": "etl"}, "flows": [{"name": "a"}]},
    }
    assert REFUSE_BOTH in validate_job_flow(job_flow, patches=False, retries=False)


@pytest.mark.parametrize(
    ("params", "problems"),
    [
        ([{"name": "x", "value": "1"}], []),
        ([{"name": "x", "value": "1"}, {"name": "y", "value": "2"}], []),
        (
            [{"name": "x", "value": "1"}, {"name": "z", "value": "2"}],
            ['param "z" is not declared by JobFlowTemplate "etl"'],
        ),
        ([{"name": "y", "value": "2"}], ['param "x" is required by JobFlowTemplate "etl" and has no value']),
    ],
)
def test_a_runs_params_against_its_template(params: list[dict[str, str]], problems: list[str]) -> None:
    tmpl = template([{"name": "x"}, {"name": "y", "default": "d"}])
    run = {"spec": {"jobFlowTemplateRef": {"name": "etl"}, "params": params}}
    assert run_params_problems(run, tmpl) == problems
