"""The admission rules of JobFlowTemplates and of the JobFlows run from one (ours, docs/templates.md).

Shared by the webhook (which refuses the object) and the controller (a stored template that breaks
them gives its runs `InvalidJobFlowTemplate` and no Job). Messages name the field:

* a template: `metadata.name` at most 63 characters (it is the runs' label value); `spec.params` a
  list of at most `MAX_PARAMS` `{name, default, description}` (names unique, of the params' shape,
  at most 63 characters; `default` a string of at most 4,096 characters, absent for a required
  param; `description` a string of at most 1,024); `spec.jobFlow` an object, without
  `jobFlowTemplateRef` (no template of templates) or `params` (declared in `spec.params`), that
  passes every JobFlow rule (`job_flow_admission_problems`) with each param at its default;
* a JobFlow: `spec.jobFlowTemplateRef` an object with a `name` (a non-empty string of at most 63
  characters), never together with `spec.flows`; with the template at hand, its `spec.params`
  merged with the template's declarations (`apis.jobflowtemplate.merge_params`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis.jobflowtemplate import (
    MAX_DESCRIPTION_LENGTH,
    MAX_TEMPLATE_NAME_LENGTH,
    PARAMS_FIELD,
    REF_FIELD,
    declarations,
    merge_params,
)
from jobflow_controller.apis.params import MAX_PARAM_NAME_LENGTH, MAX_PARAM_VALUE_LENGTH
from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.validation.admission import job_flow_admission_problems
from jobflow_controller.validation.jobflowtemplate_ref import template_ref_problems
from jobflow_controller.validation.limits import MAX_PARAMS
from jobflow_controller.validation.params import PARAM_NAME

__all__ = ["run_params_problems", "template_problems", "template_ref_problems"]


def run_params_problems(job_flow: Mapping[str, Any], template: Mapping[str, Any]) -> list[str]:
    """The run's `spec.params` against the template's declarations: unknown, repeated, missing."""
    name = _mapping(_mapping(template).get("metadata")).get("name")
    spec = _mapping(_mapping(job_flow).get("spec"))
    merge = merge_params(declarations(template), spec.get(PARAMS_FIELD), name if isinstance(name, str) else "")
    return list(merge.problems)


def template_problems(
    template: Mapping[str, Any],
    old_template: Mapping[str, Any] | None = None,
    patch_fields: PatchFields | None = None,
) -> list[str]:
    """Every problem of a template; an UPDATE that leaves `spec` unchanged always passes (a label, say)."""
    spec = _mapping(_mapping(template).get("spec"))
    if old_template is not None and spec == _mapping(_mapping(old_template).get("spec")):
        return []
    metadata = _mapping(_mapping(template).get("metadata"))
    problems: list[str] = []
    name = metadata.get("name")
    if old_template is None and isinstance(name, str) and len(name) > MAX_TEMPLATE_NAME_LENGTH:
        problems.append(
            f"metadata.name: must be no more than {MAX_TEMPLATE_NAME_LENGTH} characters (it is the runs' label value)"
        )
    problems.extend(_declaration_problems(spec.get("params")))
    job_flow = spec.get("jobFlow")
    if not isinstance(job_flow, Mapping):
        problems.append("spec.jobFlow: required, an object: the JobFlow spec each run is made from")
        return problems
    for field, why in ((REF_FIELD, "a template cannot run another"), (PARAMS_FIELD, "declare them in spec.params")):
        if job_flow.get(field) is not None:
            problems.append(f"spec.jobFlow.{field}: not allowed in a template ({why})")
    problems.extend(f"spec.jobFlow: {p}" for p in job_flow_admission_problems(_as_run(template), None, patch_fields))
    return problems


def _as_run(template: Mapping[str, Any]) -> dict[str, Any]:
    """The JobFlow a run with every param at its default would be (a required one at ""), unnamed: the
    rules that need the run's name (its Jobs' names) wait for the run."""
    spec = dict(_mapping(_mapping(template.get("spec")).get("jobFlow")))
    spec.pop(REF_FIELD, None)
    params = [{"name": d.name, "value": d.default or ""} for d in declarations(template)[:MAX_PARAMS]]
    spec[PARAMS_FIELD] = params or None
    if spec[PARAMS_FIELD] is None:
        del spec[PARAMS_FIELD]
    namespace = _mapping(template.get("metadata")).get("namespace")
    return {"metadata": {"namespace": namespace if isinstance(namespace, str) else ""}, "spec": spec}


def _declaration_problems(raw: object) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [f"spec.params: must be a list of {{name, default, description}}, got {_json(raw)}"]
    problems = []
    if len(raw) > MAX_PARAMS:
        problems.append(f"spec.params: has {len(raw)} params, more than the {MAX_PARAMS} allowed")
    seen: set[str] = set()
    for i, entry in enumerate(raw[:MAX_PARAMS]):
        where = f"spec.params[{i}]"
        if not isinstance(entry, Mapping):
            problems.append(f"{where}: must be an object with a name, got {_json(entry)}")
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            problems.append(f"{where}.name: required")
        elif len(name) > MAX_PARAM_NAME_LENGTH or not PARAM_NAME.fullmatch(name):
            problems.append(
                f"{where}.name: must match [A-Za-z_][A-Za-z0-9_-]* and be at most {MAX_PARAM_NAME_LENGTH} characters"
            )
        elif name in seen:
            problems.append(f'{where}.name: "{name}" is declared more than once')
        else:
            seen.add(name)
        default = entry.get("default")
        if default is not None and (not isinstance(default, str) or len(default) > MAX_PARAM_VALUE_LENGTH):
            problems.append(f"{where}.default: must be a string of at most {MAX_PARAM_VALUE_LENGTH} characters")
        description = entry.get("description")
        if description is not None and (not isinstance(description, str) or len(description) > MAX_DESCRIPTION_LENGTH):
            problems.append(f"{where}.description: must be a string of at most {MAX_DESCRIPTION_LENGTH} characters")
    return problems


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _json(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:80] + "..."
