"""New objects the controllers write: the Job made from a JobTemplate, and its owner reference."""

from __future__ import annotations

from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import (
    BATCH_GROUP_VERSION,
    CREATED_BY_JOB_FLOW,
    CREATED_BY_JOB_TEMPLATE,
    FLOW_GROUP_VERSION,
    JOB_FLOW_KIND,
    JOB_KIND,
)
from jobflow_controller.apis.meta import Obj
from jobflow_controller.apis.patch_fields import PatchFields, apply_allowed_patch


def controller_reference(job_flow: Obj) -> dict[str, Any]:
    """What controllerutil.SetControllerReference writes: a controlling, deletion-blocking owner."""
    return {
        "apiVersion": FLOW_GROUP_VERSION,
        "kind": JOB_FLOW_KIND,
        "name": meta.name(job_flow),
        "uid": meta.uid(job_flow),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def new_job(
    job_flow: Obj,
    flow_name: str,
    job_name: str,
    job_template: Obj,
    patch: object = None,
    patch_fields: PatchFields | None = None,
) -> dict[str, Any]:
    """`loadJobTemplateAndSetJob`: the template's spec, the createdBy keys, the owner.

    The spec is the template's with the flow's `patch.jobSpec` merged in (`apis.patch`, ours:
    upstream ignores the patch); without a patch it is the template's verbatim, as upstream's.
    Raises `PatchError` when the patch cannot apply, or sets a field outside `patch_fields`
    (`--jobflow-patch-allowed-fields`; None allows every field). The spec is a new object because the template
    comes from the informer cache and the Job body is handed to the HTTP layer; nothing else of the
    template's metadata is carried over, and the patch changes nothing but the spec. `patch` is
    the flow's raw `patch` (`Flow.patch`).
    """
    ns = meta.namespace(job_flow)
    keys = {
        CREATED_BY_JOB_TEMPLATE: meta.generate_object_string(ns, flow_name),
        CREATED_BY_JOB_FLOW: meta.generate_object_string(ns, meta.name(job_flow)),
    }
    return {
        "apiVersion": BATCH_GROUP_VERSION,
        "kind": JOB_KIND,
        "metadata": {
            "name": job_name,
            "namespace": ns,
            "labels": dict(keys),
            "annotations": dict(keys),
            "ownerReferences": [controller_reference(job_flow)],
        },
        "spec": apply_allowed_patch(jf.spec(job_template), patch, patch_fields),
    }
