"""The project's admission rules, run locally: the webhook's own functions, never a copy of them.

`job_flow_problems(obj)` is what the validating webhook says about a CREATE of `obj`, one message per
problem, so `"; ".join(...)` is exactly the webhook's denial message; before them, the CRD schema's
problems (`path: message`), which the API server reports before any webhook runs: with a schema
problem the webhook's rules are not asked (they assume the schema's shape, as on the server).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.validation.cronjobflow import cron_job_flow_problems
from jobflow_controller.validation.jobflow import validate_job_flow
from jobflow_controller.validation.lifecycle import lifecycle_problems
from jobflow_controller.validation.patch import flow_patch_field_problems
from jobflow_sdk.schema import schema_problems

#: The namespace the API server would give an object sent without one (the kubeconfig's, usually
#: "default"); the name rules (a Job's labels carry it) need one.
DEFAULT_NAMESPACE = "default"


def _with_namespace(obj: Mapping[str, Any]) -> dict[str, Any]:
    metadata = dict(obj.get("metadata") or {})
    metadata.setdefault("namespace", DEFAULT_NAMESPACE)
    return {**obj, "metadata": metadata}


def admission_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """The webhook's messages for a CREATE of `job_flow` (validation.admission's parts, unjoined)."""
    obj = _with_namespace(job_flow)
    problems = list(validate_job_flow(obj))
    problems.extend(lifecycle_problems(obj, None))
    problems.extend(flow_patch_field_problems(obj, None))
    return problems


def job_flow_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """The schema's problems, or else the webhook's; [] when the API server would take it."""
    return schema_problems(job_flow, "JobFlow") or admission_problems(job_flow)


def cron_job_flow_problems_local(cron_job_flow: Mapping[str, Any]) -> list[str]:
    """The same for a CronJobFlow (its template is checked with the JobFlow rules, as the webhook does)."""
    return schema_problems(cron_job_flow, "CronJobFlow") or cron_job_flow_problems(_with_namespace(cron_job_flow))
