"""The JobFlowTrigger's readers of tenant text (issue 46, docs/triggers.md), for the fuzzer: an HTTP
trigger's body and its bindings, the endpoint's path, a bearer token, and the trigger's own spec as
the webhook and the controller check it. None may raise but the documented `BindingError`."""

from __future__ import annotations

from typing import Any

from registry import Parser, as_text

from jobflow_controller.apis import jobflowtrigger as jft
from jobflow_controller.jobflowtrigger import auth, bindings, match, server
from jobflow_controller.validation.jobflowtrigger import job_flow_trigger_problems

_BINDINGS = [
    jft.Binding("dataset", cel="body.dataset"),
    jft.Binding("n", cel="string(size(body))"),
    jft.Binding("mode", value="full"),
]


def _bytes(value: Any) -> bytes:
    """A fuzzed input as the bytes of a request body (the server hands the parser bytes alone)."""
    return value if isinstance(value, bytes) else as_text(value).encode("utf-8", "surrogatepass")


def _body_then_bind(data: Any) -> object:
    """What the endpoint does with a body: parse it, then bind the params from it."""
    return bindings.bind(_BINDINGS, {"body": bindings.parse_body(_bytes(data))})


def _trigger(spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "t", "namespace": "ns"}, "spec": spec}


def _spec_read(spec: Any) -> object:
    """A stored trigger of any shape, read as the controller reads it."""
    trigger = _trigger(spec)
    source = jft.resource_source(trigger)
    if source is not None:
        match.event_fires(source, "ns", "update", {"metadata": {"namespace": "ns", "labels": {"a": "b"}}})
    return (jft.bindings(trigger), jft.kind_of(trigger), jft.template_name(trigger))


PARSERS: list[Parser] = [
    Parser(
        "jobflow_controller.jobflowtrigger.bindings.parse_body",
        lambda v: bindings.parse_body(_bytes(v)),
        "bytes",
        (bindings.BindingError,),
    ),
    Parser("jobflow_controller.jobflowtrigger.bindings.bind", _body_then_bind, "bytes", (bindings.BindingError,)),
    Parser(
        "jobflow_controller.jobflowtrigger.bindings.bind[cel]",
        lambda t: bindings.bind([jft.Binding("p", cel=as_text(t)[:1024])], {"body": {"a": "b"}}),
        "text",
        (bindings.BindingError,),
    ),
    Parser(
        "jobflow_controller.jobflowtrigger.server._Handler._answer",
        lambda t: server.PATH.fullmatch(as_text(t)),
        "text",
        (),
    ),
    Parser("jobflow_controller.jobflowtrigger.auth.bearer_token", lambda t: auth.bearer_token(as_text(t)), "text", ()),
    Parser(
        "jobflow_controller.jobflowtrigger.auth.caller_of",
        lambda v: auth.caller_of(v if isinstance(v, dict) else {}),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.validation.jobflowtrigger._binding_problems",
        lambda v: job_flow_trigger_problems(_trigger({"params": v})),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.validation.jobflowtrigger._resource_problems",
        lambda v: job_flow_trigger_problems(_trigger({"jobFlowTemplateRef": {"name": "etl"}, "resource": v})),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.validation.jobflowtrigger.job_flow_trigger_problems",
        lambda v: job_flow_trigger_problems(_trigger(v)),
        "json",
        (),
    ),
    Parser("jobflow_controller.apis.jobflowtrigger.bindings", _spec_read, "json", ()),
]
