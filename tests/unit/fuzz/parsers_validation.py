"""The name and parameter rules (jobflow_controller/validation), for the fuzzer: regular expressions over
names a tenant chose (flows, templates, label values, params), and the event name built from an
object's name. Each takes any text; the callers hand them strings only."""

from __future__ import annotations

from registry import Parser, as_text

from jobflow_controller.record.recorder import generate_event_name
from jobflow_controller.validation import names, params

PARSERS: list[Parser] = [
    Parser("jobflow_controller.validation.names.is_subdomain", lambda t: names.is_subdomain(as_text(t)), "text", ()),
    Parser(
        "jobflow_controller.validation.names.template_name_problems",
        lambda t: names.template_name_problems(as_text(t)),
        "text",
        (),
    ),
    Parser(
        "jobflow_controller.validation.names._label_value_problems",
        lambda t: names._label_value_problems("jobflow Flow", "key", as_text(t)),
        "text",
        (),
    ),
    Parser(
        "jobflow_controller.validation.params._param_list_problems",
        lambda v: params._param_list_problems("jobflow params", v, "value", params.MAX_PARAMS),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.record.recorder.generate_event_name",
        lambda t: generate_event_name(as_text(t), 1),
        "text",
        (),
    ),
]
