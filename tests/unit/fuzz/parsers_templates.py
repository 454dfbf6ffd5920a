"""JobFlowTemplates and the runs from one (docs/templates.md), for the fuzzer: the params' declarations,
the merge of a run's values, the template's rules, a run's reference, and the stored spec read back.

Each gets a whole object as the API server would hand it, or anything else.
"""

from __future__ import annotations

from typing import Any

from registry import Parser, as_text

from jobflow_controller.apis import jobflowtemplate as jft
from jobflow_controller.validation import jobflowtemplate as vjft
from jobflow_controller.validation import jobflowtemplate_ref

#: A template with a required param and a defaulted one, that fuzzed runs are merged with.
TEMPLATE = {
    "metadata": {"name": "etl", "namespace": "ns"},
    "spec": {"params": [{"name": "a"}, {"name": "b", "default": "x"}], "jobFlow": {"flows": [{"name": "p"}]}},
}


def _merge(value: Any) -> object:
    """A fuzzed run's `spec.params` (or the whole value as one) merged with `TEMPLATE`'s declarations."""
    values = (
        value.get("spec", {}).get("params")
        if isinstance(value, dict) and isinstance(value.get("spec"), dict)
        else value
    )
    return jft.merge_params(jft.declarations(TEMPLATE), values, "etl")


def _resolve(value: Any) -> object:
    """A fuzzed template run with a fuzzed run (the value both), as the controller resolves one."""
    if not isinstance(value, dict):
        return None
    return jft.resolve(value, value), jft.declarations(value), jft.template_job_flow_spec(value)


def _stored(value: Any) -> object:
    """A fuzzed stored spec text read back, and the run's effective spec."""
    run = {"spec": {"jobFlowTemplateRef": {"name": "etl"}}, "status": {jft.STORED_SPEC_FIELD: as_text(value)}}
    return jft.stored_spec(run), jft.effective_job_flow(run)


PARSERS: list[Parser] = [
    Parser("jobflow_controller.apis.jobflowtemplate.merge_params", _merge, "json", ()),
    Parser("jobflow_controller.apis.jobflowtemplate.resolve", _resolve, "json", ()),
    Parser("jobflow_controller.apis.jobflowtemplate.stored_spec", _stored, "text", ()),
    Parser("jobflow_controller.validation.jobflowtemplate.template_problems", vjft.template_problems, "json", ()),
    Parser(
        "jobflow_controller.validation.jobflowtemplate._declaration_problems",
        lambda v: vjft.template_problems({"spec": {"params": v, "jobFlow": {}}}),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.validation.jobflowtemplate.run_params_problems",
        lambda v: vjft.run_params_problems(v, TEMPLATE),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.validation.jobflowtemplate_ref.template_ref_problems",
        jobflowtemplate_ref.template_ref_problems,
        "json",
        (),
    ),
]
