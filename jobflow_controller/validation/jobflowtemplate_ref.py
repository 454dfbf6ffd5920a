"""`spec.jobFlowTemplateRef` of a JobFlow (ours, docs/templates.md): its shape, and never with `spec.flows`.

Apart from validation/jobflowtemplate.py because `validate_job_flow` calls it, and the template's
rules call `validate_job_flow` in turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from jobflow_controller.apis.jobflowtemplate import MAX_TEMPLATE_NAME_LENGTH, REF_FIELD

__all__ = ["REFUSE_BOTH", "template_ref_problems"]

REFUSE_BOTH: Final = (
    "spec.flows and spec.jobFlowTemplateRef are mutually exclusive: a run takes its flows from the template"
)


def template_ref_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """A JobFlow's `spec.jobFlowTemplateRef` (none: no problem)."""
    spec = _mapping(_mapping(job_flow).get("spec"))
    if REF_FIELD not in spec or spec.get(REF_FIELD) is None:
        return []
    ref = spec[REF_FIELD]
    problems: list[str] = []
    name = ref.get("name") if isinstance(ref, Mapping) else None
    if not isinstance(ref, Mapping):
        problems.append(f"spec.jobFlowTemplateRef: must be an object with a name, got {_json(ref)}")
    elif not isinstance(name, str) or not name:
        problems.append("spec.jobFlowTemplateRef.name: required, the JobFlowTemplate to run")
    elif len(name) > MAX_TEMPLATE_NAME_LENGTH:
        problems.append(f"spec.jobFlowTemplateRef.name: must be at most {MAX_TEMPLATE_NAME_LENGTH} characters")
    if spec.get("flows"):
        problems.append(REFUSE_BOTH)
    return problems


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _json(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:80] + "..."
