"""The page's buttons: which of suspend, resume, stop, terminate and retry apply to a JobFlow now,
and the merge patch each one sends, the same patches as the plugin's verbs (issue 23).

Pure: the server asks the API server whether the user may patch (a SelfSubjectAccessReview) and
hands the answer in; the API server stays the judge, this only keeps a button from promising what
would be refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.constants import Phase
from jobflow_controller.apis.lifecycle_fields import (
    SHUTDOWN,
    Shutdown,
    shutdown_change_allowed,
)
from jobflow_controller.apis.lifecycle_fields import (
    SUSPEND as SUSPEND_FIELD,
)
from kubectl_jobflow.verbs import new_request_id, verb_patch

SUSPEND, RESUME, STOP, TERMINATE, RETRY = "suspend", "resume", "stop", "terminate", "retry"
ACTIONS = (SUSPEND, RESUME, STOP, TERMINATE, RETRY)
#: The status lists whose flows a retry re-runs (issue 23: every Failed and Skipped flow).
RETRIED_LISTS = ("failedJobs", "terminatedJobs", "skippedJobs")

FINISHED_REASON = "the JobFlow has finished"


def _finished(job_flow: Mapping[str, Any]) -> bool:
    return jf.phase(job_flow) in (Phase.SUCCEED, Phase.FAILED)


def retryable(job_flow: Mapping[str, Any]) -> bool:
    status = jf.status(job_flow)
    return any(isinstance(status.get(n), list) and status.get(n) for n in RETRIED_LISTS)


def _reason(job_flow: Mapping[str, Any], action: str) -> str | None:
    """Why `action` does not apply to the JobFlow as it is, or None when it does."""
    spec = jf.spec(job_flow)
    shutdown = str(spec.get(SHUTDOWN) or "")
    if action == RETRY:
        return None if retryable(job_flow) else "no flow has Failed or been Skipped"
    if action == RESUME:
        return None if spec.get(SUSPEND_FIELD) else "the JobFlow is not suspended"
    if _finished(job_flow):
        return FINISHED_REASON
    if action == SUSPEND:
        if spec.get(SUSPEND_FIELD):
            return "the JobFlow is already suspended"
        return f"the JobFlow is shutting down ({shutdown})" if shutdown else None
    # stop and terminate: spec.shutdown only moves forward ("" -> Stop -> Terminate).
    wanted = Shutdown.STOP if action == STOP else Shutdown.TERMINATE
    if shutdown == wanted or not shutdown_change_allowed(shutdown, wanted):
        return f"spec.shutdown is already {shutdown}"
    return None


def availability(job_flow: Mapping[str, Any], denied: str | None) -> dict[str, dict[str, Any]]:
    """Each action: enabled, or disabled with the reason shown on the button. `denied` is why RBAC
    refuses the user `patch` on jobflows in the JobFlow's namespace (None: allowed)."""
    out: dict[str, dict[str, Any]] = {}
    for action in ACTIONS:
        reason = denied or _reason(job_flow, action)
        out[action] = {"enabled": reason is None, "reason": reason or ""}
    return out


def patch_for(action: str, flows: Sequence[str] = (), request_id: str | None = None) -> dict[str, Any]:
    """The JSON merge patch of `action`: the plugin verb's (`ValueError` for an unknown one)."""
    return verb_patch(action, request_id or new_request_id(), flows)


def access_review(namespace: str) -> dict[str, Any]:
    """May the user `patch` jobflows in `namespace`? (every action is a patch of the JobFlow)"""
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {
            "resourceAttributes": {
                "namespace": namespace,
                "verb": "patch",
                "group": "flow.volcano.sh",
                "resource": "jobflows",
            }
        },
    }


def denied_reason(review: Mapping[str, Any], namespace: str) -> str | None:
    """None when the review allows; otherwise the sentence the buttons show."""
    status = review.get("status")
    status = status if isinstance(status, Mapping) else {}
    if status.get("allowed"):
        return None
    why = str(status.get("reason") or status.get("evaluationError") or "").strip()
    message = f'your RBAC does not allow patch on jobflows in namespace "{namespace}"'
    return f"{message} ({why})" if why else message
