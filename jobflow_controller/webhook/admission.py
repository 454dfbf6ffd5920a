"""``AdmitJobFlows``: the answer to one ``admission.k8s.io/v1`` AdmissionReview about a JobFlow.

Upstream (``pkg/webhooks/admission/jobflows/validate`` and ``pkg/webhooks/util``) splits the work in
two, and so does this module:

* ``decode_review`` is the HTTP half (``util.ServeAdmission``): a body that is not JSON, not an
  ``admission.k8s.io/v1`` AdmissionReview, or has no request is not a review at all, and is answered
  with an HTTP error (``ReviewError``), as upstream answers it, never with ``allowed``;
* ``admit_job_flows`` is the admission half: a well-formed review always gets an AdmissionResponse,
  denying a wrong resource or operation with upstream's messages, and a JobFlow whose flows break a
  rule of ``jobflow_controller.validation`` with that package's message (on an UPDATE, the rules
  stricter than upstream's only if it changes ``spec.flows``).

Everything here is a pure function of the request's JSON, so the tests can feed it real reviews.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jobflow_controller.apis.jobflowtemplate import template_ref_name
from jobflow_controller.apis.jsontype import json_type
from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.validation.admission import job_flow_admission_problems
from jobflow_controller.validation.cronjobflow import cron_job_flow_problems
from jobflow_controller.validation.jobflowtemplate import run_params_problems, template_problems
from jobflow_controller.validation.jobflowtrigger import job_flow_trigger_problems
from jobflow_controller.webhook.jsonshape import json_shape_problem
from jobflow_controller.webhook.limits import MAX_BODY_BYTES, MAX_JSON_DEPTH, MAX_JSON_VALUES

__all__ = [
    "ADMISSION_API_VERSION",
    "ADMISSION_REVIEW_KIND",
    "CRON_JOB_FLOW_RESOURCE",
    "JOB_FLOW_RESOURCE",
    "JOB_FLOW_TEMPLATE_RESOURCE",
    "OPERATION_NOT_CREATE_OR_UPDATE",
    "RESOURCE_NOT_JOB_FLOWS",
    "GroupVersionResource",
    "ReviewError",
    "TemplateGetter",
    "admit_cron_job_flows",
    "admit_job_flow_templates",
    "admit_job_flows",
    "check_content_type",
    "decode_review",
    "review_response",
]

ADMISSION_API_VERSION: Final = "admission.k8s.io/v1"
ADMISSION_REVIEW_KIND: Final = "AdmissionReview"
#: The media type the API server sends and upstream insists on (``expect application/json``).
JSON_MEDIA_TYPE: Final = "application/json"


@dataclass(frozen=True)
class GroupVersionResource:
    """``metav1.GroupVersionResource``; ``str()`` is how Go's ``%s`` prints the struct value."""

    group: str
    version: str
    resource: str

    def __str__(self) -> str:
        # Go's String() has a pointer receiver, so upstream's ``fmt.Errorf("%s", gvr)`` on a value
        # prints the struct's fields: ``{flow.volcano.sh v1alpha1 jobflows}``.
        return f"{{{self.group} {self.version} {self.resource}}}"


JOB_FLOW_RESOURCE: Final = GroupVersionResource("flow.volcano.sh", "v1alpha1", "jobflows")
#: Ours (docs/cron.md): CronJobFlows are admitted on the same path, told apart by the request's resource.
CRON_JOB_FLOW_RESOURCE: Final = GroupVersionResource("flow.volcano.sh", "v1alpha1", "cronjobflows")
#: Ours (docs/templates.md): JobFlowTemplates too.
JOB_FLOW_TEMPLATE_RESOURCE: Final = GroupVersionResource("flow.volcano.sh", "v1alpha1", "jobflowtemplates")
OBJECT_NOT_JOB_FLOW_TEMPLATE: Final = "expect request.object to be a JobFlowTemplate object"

#: How the webhook reads the template a run names: the template, or None when it does not exist or
#: cannot be read now (then the run is admitted, and the controller checks its params).
TemplateGetter = Callable[[str, str], Mapping[str, Any] | None]

#: Upstream's ``OperationNotCreateOrUpdate``.
OPERATION_NOT_CREATE_OR_UPDATE: Final = "expect operation to be 'CREATE' or 'UPDATE'"
#: Upstream's ``fmt.Errorf("expect resource to be %s", jobFlowResource)``.
RESOURCE_NOT_JOB_FLOWS: Final = f"expect resource to be {JOB_FLOW_RESOURCE}"
#: Upstream passes the JobFlow decoder's error through; ours names what was expected.
OBJECT_NOT_JOB_FLOW: Final = "expect request.object to be a JobFlow object"
OBJECT_NOT_CRON_JOB_FLOW: Final = "expect request.object to be a CronJobFlow object"
#: Ours (docs/triggers.md): JobFlowTriggers are admitted on the same path too.
JOB_FLOW_TRIGGER_RESOURCE: Final = GroupVersionResource("flow.volcano.sh", "v1alpha1", "jobflowtriggers")
OBJECT_NOT_JOB_FLOW_TRIGGER: Final = "expect request.object to be a JobFlowTrigger object"

_VALIDATED_OPERATIONS: Final = frozenset({"CREATE", "UPDATE"})
#: The HTTP code put in a denial's status: what the API server makes of upstream's code-less denial
#: (it raises anything below 400 to 400 and fills ``status: Failure``), so clients see the same
#: status either way. No ``reason`` is set, as upstream, so kubectl prints the refusal exactly as
#: for upstream's webhook: ``Error from server: error when creating "<file>": admission webhook
#: "validatejobflow.volcano.sh" denied the request: <message>`` (with ``reason: Invalid`` it would
#: begin "The request is invalid:", with ``BadRequest`` "Error from server (BadRequest):").
DENIED_CODE: Final = 400


#: Go's net/http refuses a Content-Length that does not fit an int64 (19 digits) as malformed.
_INT64_DIGITS: Final = 19


class ReviewError(Exception):
    """A request body that is not an AdmissionReview: answered with ``code`` and ``message`` as text."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def check_content_type(content_type: str | None) -> None:
    """``ReviewError`` (415) unless ``content_type`` is JSON; a parameter such as ``; charset=utf-8`` is fine.

    The server calls it on the headers, before reading the body; ``decode_review`` again.
    """
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if media_type != JSON_MEDIA_TYPE:
        raise ReviewError(415, f"contentType={content_type or ''}, expect {JSON_MEDIA_TYPE}")


def body_length(content_length: str | None) -> int:
    """The body's length from its ``Content-Length`` header, or ``ReviewError``: 411 without one,
    400 unless it is ASCII digits (as Go's ``net/http`` reads it: ``int()`` would also take ``+1``,
    ``1_000`` and other scripts' digits), 413 over ``MAX_BODY_BYTES``. The server calls it on the
    headers, before reading the body."""
    if content_length is None:
        raise ReviewError(411, "a Content-Length is required")
    digits = content_length.strip(" \t")
    if not (digits.isascii() and digits.isdigit()) or len(digits) > _INT64_DIGITS:
        raise ReviewError(400, f"invalid Content-Length {content_length[:64]!r}")
    length = int(digits)
    if length > MAX_BODY_BYTES:
        raise ReviewError(413, f"request body of {length} bytes is over the limit of {MAX_BODY_BYTES}")
    return length


def decode_review(body: bytes | bytearray, content_type: str | None) -> Mapping[str, Any]:
    """The AdmissionReview in ``body``, or ``ReviewError`` saying why the body is not one.

    The messages are upstream's (``contentType=..., expect application/json``, ``Request could not
    be decoded: ...``, ``Unsupported group version kind: ...``) with Python's reasons after the colon.
    The body must be UTF-8 (RFC 8259; the API server sends nothing else), and its shape is bounded
    (``limits.MAX_JSON_VALUES``, ``limits.MAX_JSON_DEPTH``) before it is decoded, so no JSON text,
    however built, costs more than a bounded amount of memory or recurses without limit.
    """
    check_content_type(content_type)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ReviewError(400, f"Request could not be decoded: {err}") from None
    problem = json_shape_problem(text, max_values=MAX_JSON_VALUES, max_depth=MAX_JSON_DEPTH)
    if problem is not None:
        raise ReviewError(400, f"Request could not be decoded: {problem}")
    try:
        review = json.loads(text)
    except json.JSONDecodeError as err:
        raise ReviewError(400, f"Request could not be decoded: {err}") from None
    except ValueError:  # an integer past Python's 4,300 digits (sys.int_info.default_max_str_digits)
        raise ReviewError(400, "Request could not be decoded: a number has too many digits") from None
    except RecursionError:  # not reached within MAX_JSON_DEPTH; kept so no text can escape as a crash
        raise ReviewError(400, "Request could not be decoded: the JSON is nested too deeply") from None
    return _checked_review(review)


def _checked_review(review: object) -> Mapping[str, Any]:
    if not isinstance(review, dict):
        raise ReviewError(400, f"Request could not be decoded: expected a JSON object, got {json_type(review)}")
    api_version, kind = review.get("apiVersion"), review.get("kind")
    if api_version != ADMISSION_API_VERSION or kind != ADMISSION_REVIEW_KIND:
        raise ReviewError(400, f"Unsupported group version kind: {_group_version_kind(api_version, kind)}")
    request = review.get("request")
    if not isinstance(request, dict):
        raise ReviewError(400, "Request could not be decoded: the AdmissionReview has no request")
    if not isinstance(request.get("uid"), str) or not request["uid"]:
        raise ReviewError(400, "Request could not be decoded: the AdmissionReview's request has no uid")
    return review


def admit_job_flows(
    request: Mapping[str, Any], patch_fields: PatchFields | None = None, templates: TemplateGetter | None = None
) -> dict[str, Any]:
    """The AdmissionResponse (without ``uid``) for one AdmissionRequest about a JobFlow.

    Upstream's order: the resource first, then the operation, then the flows. (Upstream decodes the
    object before looking at the operation, so a DELETE, which has no object, would get a decode
    error; here it gets the operation message. The registered rules never send one.)

    Upstream validates an UPDATE exactly like a CREATE and never reads the old object. Here an
    UPDATE with an ``oldObject`` ratchets: the rules upstream lacks (repeated names, the name and
    label rules) apply only if it changes ``spec.flows``, while upstream's own (undefined targets,
    cycles) apply as upstream applies them (``validate_job_flow_update``). So a JobFlow stored
    while the webhook was off can still be labelled or annotated, and one that upstream would
    refuse is refused as upstream refuses it.

    With ``patch_fields`` (``--jobflow-patch-allowed-fields``), a patch that sets a field outside
    them is refused too (after the other messages), under the same ratchet: on CREATE, and on an
    UPDATE that changes ``spec.flows``.
    """
    if _resource(request.get("resource")) != JOB_FLOW_RESOURCE:
        return denied(RESOURCE_NOT_JOB_FLOWS)
    operation = request.get("operation")
    if not isinstance(operation, str) or operation not in _VALIDATED_OPERATIONS:
        return denied(OPERATION_NOT_CREATE_OR_UPDATE)
    job_flow = request.get("object")
    if not isinstance(job_flow, Mapping) or not isinstance(job_flow.get("metadata", {}), Mapping | None):
        return denied(OBJECT_NOT_JOB_FLOW)
    old_job_flow = request.get("oldObject") if operation == "UPDATE" else None
    old_job_flow = old_job_flow if isinstance(old_job_flow, Mapping) else None
    problems = job_flow_admission_problems(_with_request_identity(job_flow, request), old_job_flow, patch_fields)
    if not problems and templates is not None and old_job_flow is None:
        problems = _run_problems(job_flow, request, templates)
    if problems:
        return denied("; ".join(problems))
    return {"allowed": True}


def _run_problems(job_flow: Mapping[str, Any], request: Mapping[str, Any], templates: TemplateGetter) -> list[str]:
    """Ours (docs/templates.md): a run's params against its template, on CREATE, when the template
    exists (a missing one is waited for: admitted)."""
    name = template_ref_name(job_flow)
    namespace = request.get("namespace")
    if not name or not isinstance(namespace, str):
        return []
    template = templates(namespace, name)
    return run_params_problems(job_flow, template) if template is not None else []


def admit_job_flow_templates(request: Mapping[str, Any], patch_fields: PatchFields | None = None) -> dict[str, Any]:
    """The AdmissionResponse (without ``uid``) for one AdmissionRequest about a JobFlowTemplate
    (docs/templates.md): its params' declarations and every JobFlow rule on ``spec.jobFlow``; an UPDATE
    that leaves ``spec`` unchanged always passes."""
    operation = request.get("operation")
    if not isinstance(operation, str) or operation not in _VALIDATED_OPERATIONS:
        return denied(OPERATION_NOT_CREATE_OR_UPDATE)
    template = request.get("object")
    if not isinstance(template, Mapping) or not isinstance(template.get("metadata", {}), Mapping | None):
        return denied(OBJECT_NOT_JOB_FLOW_TEMPLATE)
    old = request.get("oldObject") if operation == "UPDATE" else None
    old = old if isinstance(old, Mapping) else None
    problems = template_problems(_with_request_identity(template, request), old, patch_fields)
    return denied("; ".join(problems)) if problems else {"allowed": True}


def admit_cron_job_flows(request: Mapping[str, Any], patch_fields: PatchFields | None = None) -> dict[str, Any]:
    """The AdmissionResponse (without ``uid``) for one AdmissionRequest about a CronJobFlow (docs/cron.md).

    The same order as for a JobFlow: the operation, then the object (``validation.cronjobflow``,
    which checks ``jobFlowTemplate.spec`` with the JobFlow rules); an UPDATE that leaves ``spec``
    unchanged always passes.
    """
    operation = request.get("operation")
    if not isinstance(operation, str) or operation not in _VALIDATED_OPERATIONS:
        return denied(OPERATION_NOT_CREATE_OR_UPDATE)
    cron_job_flow = request.get("object")
    if not isinstance(cron_job_flow, Mapping) or not isinstance(cron_job_flow.get("metadata", {}), Mapping | None):
        return denied(OBJECT_NOT_CRON_JOB_FLOW)
    old = request.get("oldObject") if operation == "UPDATE" else None
    old = old if isinstance(old, Mapping) else None
    problems = cron_job_flow_problems(_with_request_identity(cron_job_flow, request), old, patch_fields)
    return denied("; ".join(problems)) if problems else {"allowed": True}


def admit_job_flow_triggers(request: Mapping[str, Any], patch_fields: PatchFields | None = None) -> dict[str, Any]:
    """The AdmissionResponse (without ``uid``) for one AdmissionRequest about a JobFlowTrigger
    (``validation.jobflowtrigger``; an UPDATE that leaves ``spec`` unchanged always passes)."""
    operation = request.get("operation")
    if not isinstance(operation, str) or operation not in _VALIDATED_OPERATIONS:
        return denied(OPERATION_NOT_CREATE_OR_UPDATE)
    trigger = request.get("object")
    if not isinstance(trigger, Mapping) or not isinstance(trigger.get("metadata", {}), Mapping | None):
        return denied(OBJECT_NOT_JOB_FLOW_TRIGGER)
    old = request.get("oldObject") if operation == "UPDATE" else None
    problems = job_flow_trigger_problems(
        _with_request_identity(trigger, request), old if isinstance(old, Mapping) else None
    )
    return denied("; ".join(problems)) if problems else {"allowed": True}


def denied(message: str) -> dict[str, Any]:
    """A refusal carrying ``message``, as ``util.ToAdmissionResponse`` builds it."""
    return {"allowed": False, "status": {"status": "Failure", "message": message, "code": DENIED_CODE}}


def review_response(
    review: Mapping[str, Any], patch_fields: PatchFields | None = None, templates: TemplateGetter | None = None
) -> dict[str, Any]:
    """The AdmissionReview sent back for a decoded ``review``: same version, the request's ``uid``."""
    request: Mapping[str, Any] = review["request"]
    resource = _resource(request.get("resource"))
    if resource == CRON_JOB_FLOW_RESOURCE:
        answer = admit_cron_job_flows(request, patch_fields)
    elif resource == JOB_FLOW_TEMPLATE_RESOURCE:
        answer = admit_job_flow_templates(request, patch_fields)
    elif resource == JOB_FLOW_TRIGGER_RESOURCE:
        answer = admit_job_flow_triggers(request, patch_fields)
    else:
        answer = admit_job_flows(request, patch_fields, templates)
    response = {"uid": request["uid"], **answer}
    return {"apiVersion": ADMISSION_API_VERSION, "kind": ADMISSION_REVIEW_KIND, "response": response}


def _with_request_identity(job_flow: Mapping[str, Any], request: Mapping[str, Any]) -> Mapping[str, Any]:
    """``job_flow`` with the request's name and namespace where its metadata lacks them.

    The API server sets both before validating admission runs (a generated name included), so this
    only matters for hand-made reviews; it keeps the name rules from being skipped silently.
    """
    metadata = job_flow.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    filled = dict(metadata)
    for key in ("name", "namespace"):
        value = request.get(key)
        if not filled.get(key) and isinstance(value, str) and value:
            filled[key] = value
    if filled == metadata:
        return job_flow
    return {**job_flow, "metadata": filled}


def _resource(value: object) -> GroupVersionResource | None:
    if not isinstance(value, Mapping):
        return None
    group, version, resource = value.get("group", ""), value.get("version", ""), value.get("resource", "")
    if not all(isinstance(part, str) for part in (group, version, resource)):
        return None
    return GroupVersionResource(group, version, resource)


def _group_version_kind(api_version: object, kind: object) -> str:
    # Go's GroupVersionKind.String(): "group/version, Kind=kind" ("/v1, Kind=..." for the core group).
    version = api_version if isinstance(api_version, str) else ""
    group, _, version = version.rpartition("/")
    return f"{group}/{version}, Kind={kind if isinstance(kind, str) else ''}"
