"""The merge of a run's params with its template's declarations, and the spec a run is fixed to (docs/templates.md)."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.apis import jobflowtemplate as jft

DECLARED = (jft.ParamDeclaration("dataset"), jft.ParamDeclaration("mode", "full"), jft.ParamDeclaration("n", "1"))


def template(params: Any = None, job_flow: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"jobFlow": job_flow if job_flow is not None else {"flows": [{"name": "a"}]}}
    if params is not None:
        spec["params"] = params
    return {"metadata": {"name": "etl", "namespace": "ns"}, "spec": spec}


def run(params: Any = None, **own: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"jobFlowTemplateRef": {"name": "etl"}, **own}
    if params is not None:
        spec["params"] = params
    return {"metadata": {"name": "r", "namespace": "ns"}, "spec": spec}


@pytest.mark.parametrize(
    ("values", "merged", "problems"),
    [
        pytest.param(
            [{"name": "dataset", "value": "d1"}], [("dataset", "d1"), ("mode", "full"), ("n", "1")], (), id="defaults"
        ),
        pytest.param(
            [{"name": "n", "value": "5"}, {"name": "dataset", "value": "d1"}, {"name": "mode", "value": "quick"}],
            [("dataset", "d1"), ("mode", "quick"), ("n", "5")],
            (),
            id="overrides, in declaration order",
        ),
        pytest.param(
            [{"name": "dataset", "value": ""}], [("dataset", ""), ("mode", "full"), ("n", "1")], (), id="empty"
        ),
        pytest.param(
            [{"name": "dataset", "value": "d"}, {"name": "typo", "value": "x"}],
            [],
            ('param "typo" is not declared by JobFlowTemplate "etl"',),
            id="unknown",
        ),
        pytest.param(
            None, [], ('param "dataset" is required by JobFlowTemplate "etl" and has no value',), id="missing"
        ),
        pytest.param(
            [{"name": "dataset", "value": 3}],
            [],
            (
                "spec.params[0]: must be an object with a name and a string value",
                'param "dataset" is required by JobFlowTemplate "etl" and has no value',
            ),
            id="not a string",
        ),
        pytest.param(
            [{"name": "dataset", "value": "a"}, {"name": "dataset", "value": "b"}],
            [],
            ('spec.params[1]: param "dataset" is given more than once',),
            id="twice",
        ),
        pytest.param(
            "dataset=x",
            [],
            (
                "spec.params: must be a list of {name, value}",
                'param "dataset" is required by JobFlowTemplate "etl" and has no value',
            ),
            id="not a list",
        ),
    ],
)
def test_merge_params(values: Any, merged: list[tuple[str, str]], problems: tuple[str, ...]) -> None:
    merge = jft.merge_params(DECLARED, values, "etl")
    assert (list(merge.params), merge.problems) == (merged, problems)


def test_a_long_unknown_name_is_quoted_cut() -> None:
    merge = jft.merge_params((), [{"name": "x" * 500, "value": "v"}], "etl")
    assert merge.problems == (f'param "{"x" * 80}..." is not declared by JobFlowTemplate "etl"',)


@pytest.mark.parametrize(
    ("raw", "declared"),
    [
        ([{"name": "a"}], (jft.ParamDeclaration("a"),)),
        ([{"name": "a", "default": "", "description": "d"}], (jft.ParamDeclaration("a", "", "d"),)),
        ([{"default": "x"}, "a", {"name": ""}], ()),
        ("a", ()),
    ],
)
def test_declarations(raw: Any, declared: tuple[jft.ParamDeclaration, ...]) -> None:
    assert jft.declarations(template(raw)) == declared


def test_a_declaration_without_default_is_required_and_an_empty_default_is_not() -> None:
    assert jft.ParamDeclaration("a").required
    assert not jft.ParamDeclaration("a", "").required


def test_resolve_is_the_template_spec_with_the_merged_params() -> None:
    spec, problems = jft.resolve(
        template(
            [{"name": "dataset"}, {"name": "mode", "default": "full"}],
            {"flows": [{"name": "a"}], "jobRetainPolicy": "delete"},
        ),
        run([{"name": "dataset", "value": "d1"}]),
    )
    assert problems == ()
    assert spec == {
        "flows": [{"name": "a"}],
        "jobRetainPolicy": "delete",
        "params": [{"name": "dataset", "value": "d1"}, {"name": "mode", "value": "full"}],
    }


def test_resolve_never_changes_the_template() -> None:
    tmpl = template([{"name": "m", "default": "x"}])
    before = repr(tmpl)
    spec, _ = jft.resolve(tmpl, run())
    assert spec is not None
    spec["flows"].append({"name": "b"})
    assert repr(tmpl) == before


def test_resolve_refuses_what_the_merge_refuses() -> None:
    assert jft.resolve(template([{"name": "dataset"}]), run()) == (
        None,
        ('param "dataset" is required by JobFlowTemplate "etl" and has no value',),
    )


def test_a_template_without_params_gives_a_spec_without_params() -> None:
    assert jft.resolve(template(), run()) == ({"flows": [{"name": "a"}]}, ())


def test_the_effective_spec_is_the_stored_one_with_the_runs_own_fields_on_top() -> None:
    stored = {"flows": [{"name": "a"}], "params": [{"name": "m", "value": "x"}], "suspend": False}
    job_flow = run([{"name": "m", "value": "y"}], suspend=True, flows=[{"name": "z"}])
    job_flow["status"] = {jft.STORED_SPEC_FIELD: jft.stored_spec_text(stored)}
    assert jft.effective_job_flow(job_flow)["spec"] == {
        "flows": [{"name": "a"}],
        "params": [{"name": "m", "value": "x"}],
        "suspend": True,
    }


@pytest.mark.parametrize(
    "text",
    ["", "[]", "{", "null", "[" * 2000 + "]" * 2000, "{}" + " " * jft.MAX_STORED_SPEC_BYTES],
)
def test_a_stored_spec_that_is_no_json_object_within_the_bound_is_none(text: str) -> None:
    job_flow = {**run(), "status": {jft.STORED_SPEC_FIELD: text}}
    assert jft.is_resolved(job_flow)
    assert jft.stored_spec(job_flow) is None
    assert jft.effective_job_flow(job_flow) is job_flow


def test_a_jobflow_without_a_reference_is_its_own_effective_jobflow() -> None:
    plain = {"metadata": {"name": "p"}, "spec": {"flows": [{"name": "a"}]}, "status": {jft.STORED_SPEC_FIELD: "{}"}}
    assert jft.effective_job_flow(plain) is plain
    assert not jft.is_template_run(plain)


def test_every_status_write_keeps_the_stored_spec() -> None:
    job_flow = {**run(), "status": {jft.STORED_SPEC_FIELD: "{}", "state": {}}}
    assert jft.with_stored_spec({"state": {"phase": "Running"}}, job_flow) == {
        "state": {"phase": "Running"},
        jft.STORED_SPEC_FIELD: "{}",
    }
    assert jft.with_stored_spec({"state": {}}, run()) == {"state": {}}


def test_the_stored_text_is_the_same_for_the_same_spec() -> None:
    assert jft.stored_spec_text({"b": 1, "a": [2]}) == jft.stored_spec_text({"a": [2], "b": 1}) == '{"a":[2],"b":1}'
