"""The API layer's readers of tenant text and JSON (jobflow_controller/apis), for the fuzzer.

A "json" parser gets a whole JobFlow (or Job) as the API server would hand it, or anything else;
each reader of a JobFlow must never raise, whatever it holds (the webhook may be off, the CRD may
be upstream's). The text parsers get the annotation's value itself.
"""

from __future__ import annotations

from typing import Any

from registry import Parser

from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import (
    lifecycle,
    lifecycle_fields,
    meta,
    patch,
    patch_fields,
    probe,
    retry,
    rules,
    tenant_text,
)
from jobflow_controller.apis.jsontype import json_copy

#: A JobTemplate's spec the patches are applied to.
TEMPLATE_SPEC: dict[str, Any] = {
    "minAvailable": 1,
    "tasks": [{"name": "worker", "replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}],
}
FIELDS = patch_fields.parse_patch_fields(["tasks.replicas", "priorityClassName"])


def _with_annotation(key: str, text: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "f", "namespace": "default", "uid": "u", "annotations": {key: text}},
        "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
    }


def _patch(value: Any) -> object:
    """`apply_patch` documents PatchError for what `patch_problems` refuses: asked first, as callers do."""
    if patch.patch_problems(value):
        return None
    return patch.apply_patch(TEMPLATE_SPEC, value)


PARSERS: list[Parser] = [
    # -- the annotations' text ------------------------------------------------------------------
    Parser(
        "jobflow_controller.apis.tenant_text.load_json", lambda t: tenant_text.load_json(t, "annotation x"), "text", ()
    ),
    Parser(
        "jobflow_controller.apis.lifecycle_fields.retry_request_problems",
        lambda t: lifecycle_fields.retry_request_problems(t, {"a", "b"}),
        "text",
        (),
    ),
    Parser(
        "jobflow_controller.apis.lifecycle_fields.read_retry_request",
        lambda t: lifecycle_fields.read_retry_request(
            _with_annotation(lifecycle_fields.RETRY_REQUEST_ANNOTATION, t), {"a"}
        ),
        "text",
        (),
    ),
    Parser(
        "jobflow_controller.apis.retry._annotation_value",
        lambda t: retry.retry_policies(_with_annotation(retry.RETRY_ANNOTATION, t)),
        "text",
        (),
    ),
    Parser(
        "jobflow_controller.apis.retry.job_attempt",
        lambda t: retry.job_attempt({"metadata": {"annotations": {retry.ATTEMPT_ANNOTATION: t}}}),
        "text",
        (),
    ),
    Parser("jobflow_controller.apis.meta.parse_duration_ns", meta.parse_duration_ns, "text", (ValueError,)),
    Parser("jobflow_controller.apis.meta.parse_time", meta.parse_time, "text", (ValueError,)),
    # -- readers of a whole JobFlow ---------------------------------------------------------------
    Parser("jobflow_controller.apis.lifecycle.pending_retry_request", lifecycle.pending_retry_request, "json", ()),
    Parser("jobflow_controller.apis.lifecycle.malformed_retry_request", lifecycle.malformed_retry_request, "json", ()),
    Parser(
        "jobflow_controller.apis.lifecycle.retry_request_to_sync",
        lambda v: lifecycle.retry_request_to_sync(v, {}),
        "json",
        (),
    ),
    Parser("jobflow_controller.apis.lifecycle.Lifecycle.of", lifecycle.Lifecycle.of, "json", ()),
    Parser("jobflow_controller.apis.retry.retry_policies", retry.retry_policies, "json", ()),
    Parser("jobflow_controller.apis.retry.retry_problems", retry.retry_problems, "json", ()),
    Parser("jobflow_controller.apis.jobflow.flows", jf.flows, "json", ()),
    Parser("jobflow_controller.apis.jobflow.has_probes", jf.has_probes, "json", ()),
    Parser("jobflow_controller.apis.jobflow.flow_patch", lambda v: jf.flow_patch(v, "a"), "json", ()),
    Parser("jobflow_controller.apis.rules.failure_policy", rules.failure_policy, "json", ()),
    Parser("jobflow_controller.apis.rules.failure_aware", rules.failure_aware, "json", ()),
    Parser("jobflow_controller.apis.rules.template_names", rules.template_names, "json", ()),
    # Documented: past orjson's 254 levels it falls back to copy.deepcopy, which recurses; what the API
    # server holds is at most the CRD schema's depth (no preserve-unknown-fields).
    Parser("jobflow_controller.apis.jsontype.json_copy", json_copy, "json", (RecursionError,)),
    # -- a Job's status (Volcano's, or whoever may write jobs/status) ---------------------------------
    Parser("jobflow_controller.apis.job.running_duration", lambda v: vcjob.running_duration({"status": v}), "json", ()),
    Parser("jobflow_controller.apis.job.retry_count", lambda v: vcjob.retry_count({"status": v}), "json", ()),
    Parser(
        "jobflow_controller.apis.job.running_duration[text]",
        lambda t: vcjob.running_duration({"status": {"runningDuration": t}}),
        "text",
        (),
    ),
    # -- one flow's fields ------------------------------------------------------------------------
    Parser("jobflow_controller.apis.probe.probe_problems", probe.probe_problems, "json", ()),
    Parser("jobflow_controller.apis.probe.parse_probe", probe.parse_probe, "json", ()),
    Parser("jobflow_controller.apis.patch.patch_problems", patch.patch_problems, "json", ()),
    Parser("jobflow_controller.apis.patch.apply_patch", _patch, "json", ()),
    Parser(
        "jobflow_controller.apis.patch_fields.patch_field_problems",
        lambda v: patch_fields.patch_field_problems(v, FIELDS),
        "json",
        (),
    ),
]
