"""``job_flow_admission_problems``: every rule the webhook applies to a JobFlow, in one place.

The webhook's JobFlow admission and the CronJobFlow's template check (``validation.cronjobflow``)
both call it, so a rule added here covers a JobFlow and every CronJobFlow's ``jobFlowTemplate.spec``
alike. The parts, in order: ``validation_message`` (sizes, DAG, names, failure-aware fields, patches,
probes, retries), the lifecycle fields (``lifecycle_problems``), the patch field allow-list
(``--jobflow-patch-allowed-fields``). On UPDATE each part ratchets as its docstring says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.validation.jobflow import flows_changed, validation_message
from jobflow_controller.validation.lifecycle import lifecycle_problems
from jobflow_controller.validation.patch import flow_patch_field_problems

__all__ = ["job_flow_admission_problems"]


def job_flow_admission_problems(
    job_flow: Mapping[str, Any],
    old_job_flow: Mapping[str, Any] | None = None,
    patch_fields: PatchFields | None = None,
) -> list[str]:
    """The problems that refuse a CREATE (``old_job_flow`` None) or an UPDATE of ``job_flow``."""
    message = validation_message(job_flow, old_job_flow)
    problems = [message.strip()] if message is not None else []
    problems.extend(lifecycle_problems(job_flow, old_job_flow))  # docs/lifecycle.md
    if old_job_flow is None or flows_changed(job_flow, old_job_flow):
        problems.extend(flow_patch_field_problems(job_flow, patch_fields))
    return problems
