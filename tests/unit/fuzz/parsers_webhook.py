"""The webhook's readers of what a client sends (jobflow_controller/webhook), for the fuzzer.

Anyone who reaches port 8443 controls the bytes of a request: its headers (``Content-Type``,
``Content-Length``) and its body, which is decoded (``decode_review``: UTF-8, the JSON's shape
measured on the text by ``jsonshape``, then ``json.loads`` and the review's envelope) and judged
(``review_response`` and ``admit_job_flows``, whose rules live in ``validation``, registered by
parsers_controller.py). The request line and header block are parsed by ``http.server`` under
``MAX_HEADER_BYTES`` and ``HEADERS_DEADLINE``; nothing of ours reads them but the two headers.

The socket gives the body as bytes and ``http.server`` the headers as text (or None), never another
type: a value of another type is turned away by ``_wire`` as ``TypeError`` before the call, so the
fuzzer's wrong-typed inputs check the adapter, not a path the product has. A refusal of the request
is ``ReviewError`` (answered 400, 411, 413 or 415); the judging functions raise nothing.
"""

from __future__ import annotations

import json
from typing import Any

from registry import Parser

from jobflow_controller.webhook import admission, jsonshape
from jobflow_controller.webhook.admission import ReviewError
from jobflow_controller.webhook.limits import MAX_JSON_DEPTH, MAX_JSON_VALUES

JSON = "application/json"
RESOURCE = {"group": "flow.volcano.sh", "version": "v1alpha1", "resource": "jobflows"}
VALID_JOB_FLOW: dict[str, Any] = {
    "apiVersion": "flow.volcano.sh/v1alpha1",
    "kind": "JobFlow",
    "metadata": {"name": "f", "namespace": "default"},
    "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
}


def _wire(value: Any, kind: type) -> Any:
    """``value`` if the socket or ``http.server`` could hand it over (``kind``, or None for a header)."""
    if (value is None and kind is str) or isinstance(value, kind):
        return value
    raise TypeError(f"a request carries no {type(value).__name__} here")


def _text(value: Any) -> str:
    text: str = _wire(value, str)
    if text is None:
        raise TypeError("a body's text is never None")
    return text


def _review_of(value: Any) -> object:
    """A fuzzed JSON value as a request body, through the whole path: decode, then judge."""
    body = json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")
    return admission.review_response(admission.decode_review(body, JSON))


def _request(value: Any, *, operation: str = "CREATE", old: Any = None) -> dict[str, Any]:
    request = {"uid": "u", "resource": RESOURCE, "operation": operation, "object": value}
    if operation == "UPDATE":
        request["oldObject"] = old
    return request


def _admit_as_object(value: Any) -> object:
    """The fuzzed value as the JobFlow of a CREATE, and of an UPDATE from a valid one."""
    created = admission.admit_job_flows(_request(value))
    updated = admission.admit_job_flows(_request(value, operation="UPDATE", old=VALID_JOB_FLOW))
    return created, updated


def _admit_as_old_object(value: Any) -> object:
    """The fuzzed value as the stored JobFlow an UPDATE ratchets against (``oldObject``)."""
    return admission.admit_job_flows(_request(VALID_JOB_FLOW, operation="UPDATE", old=value))


def _admit_as_request(value: Any) -> object:
    """The fuzzed value as the whole AdmissionRequest of an envelope ``decode_review`` accepted."""
    request = value if isinstance(value, dict) else {"object": value}
    return admission.review_response({"request": {**request, "uid": "u"}})


PARSERS: list[Parser] = [
    # -- the headers --------------------------------------------------------------------------------
    Parser(
        "jobflow_controller.webhook.admission.check_content_type",
        lambda t: admission.check_content_type(_wire(t, str)),
        "text",
        (ReviewError, TypeError),
    ),
    Parser(
        "jobflow_controller.webhook.admission.body_length",
        lambda t: admission.body_length(_wire(t, str)),
        "text",
        (ReviewError, TypeError),
    ),
    # -- the body ----------------------------------------------------------------------------------
    Parser(
        "jobflow_controller.webhook.admission.decode_review",
        lambda b: admission.decode_review(_wire(b, bytes), JSON),
        "bytes",
        (ReviewError, TypeError),
    ),
    Parser(
        "jobflow_controller.webhook.admission.decode_review[text]",
        lambda t: admission.decode_review(_text(t).encode("utf-8", "surrogatepass"), JSON),
        "text",
        (ReviewError, TypeError),
    ),
    Parser(
        "jobflow_controller.webhook.jsonshape.json_shape_problem",
        lambda t: jsonshape.json_shape_problem(_text(t), max_values=MAX_JSON_VALUES, max_depth=MAX_JSON_DEPTH),
        "text",
        (TypeError,),
    ),
    Parser(
        "jobflow_controller.webhook.jsonshape.skeleton", lambda t: jsonshape.skeleton(_text(t)), "text", (TypeError,)
    ),
    # -- the review, decoded -----------------------------------------------------------------------
    Parser("jobflow_controller.webhook.admission.review_response", _review_of, "json", (ReviewError,)),
    Parser("jobflow_controller.webhook.admission.review_response[request]", _admit_as_request, "json", ()),
    Parser("jobflow_controller.webhook.admission.admit_job_flows[object]", _admit_as_object, "json", ()),
    Parser("jobflow_controller.webhook.admission.admit_job_flows[oldObject]", _admit_as_old_object, "json", ()),
]
