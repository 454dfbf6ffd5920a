"""The admission rules on `spec.flows[].results` (ours, docs/results.md).

Shared by the webhook (which refuses the JobFlow) and the controller (a stored one gets
`InvalidJobFlow` and no Job). A flow's `results` is an object with `names`, one to
`MAX_RESULT_NAMES` unique names of the shape `[a-z0-9]([-a-z0-9_]*[a-z0-9])?` and at most
`MAX_RESULT_NAME_LENGTH` characters, and an optional `from: {task}` naming a task of at most
`MAX_TASK_NAME_LENGTH` characters. Cheap whatever is stored: past the cap only the first names are
looked at, and a name is quoted cut.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis.results import (
    MAX_RESULT_NAME_LENGTH,
    MAX_RESULT_NAMES,
    MAX_TASK_NAME_LENGTH,
    RESULT_NAME,
    is_name,
)
from jobflow_controller.apis.tenant_text import excerpt_text
from jobflow_controller.validation.rawflows import raw_flows

__all__ = ["results_problems"]


def results_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """Every problem of each flow's `results`, in spec order."""
    problems: list[str] = []
    for prefix, flow in raw_flows(job_flow):
        raw = flow.get("results")
        if raw is not None:
            problems.extend(_flow_results_problems(f"{prefix}: results", raw))
    return problems


def _flow_results_problems(where: str, raw: object) -> list[str]:
    if not isinstance(raw, Mapping):
        return [f"{where}: must be an object with names, got {_quoted(raw)}"]
    problems = []
    names = raw.get("names")
    if not isinstance(names, list) or not names:
        problems.append(f"{where}.names: must list at least one name")
        names = []
    if len(names) > MAX_RESULT_NAMES:
        problems.append(f"{where}.names: has {len(names)} names, more than the {MAX_RESULT_NAMES} allowed")
    seen: set[str] = set()
    for i, name in enumerate(names[:MAX_RESULT_NAMES]):
        if not isinstance(name, str) or not is_name(name):
            problems.append(
                f"{where}.names[{i}]: must match {RESULT_NAME.pattern} and be at most {MAX_RESULT_NAME_LENGTH}"
                f" characters, got {_quoted(name)}"
            )
        elif name in seen:
            problems.append(f"{where}.names[{i}]: {_quoted(name)} is repeated")
        else:
            seen.add(name)
    source = raw.get("from")
    if source is not None:
        task = source.get("task") if isinstance(source, Mapping) else None
        if not isinstance(task, str) or not task or len(task) > MAX_TASK_NAME_LENGTH:
            problems.append(
                f"{where}.from.task: must name a task in 1 to {MAX_TASK_NAME_LENGTH} characters, got {_quoted(task)}"
            )
    return problems


def _quoted(value: object) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = f"<{type(value).__name__}>"
    return excerpt_text(text)
