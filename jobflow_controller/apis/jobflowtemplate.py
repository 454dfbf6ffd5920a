"""Ours, opt-in (docs/templates.md): JobFlowTemplates and the JobFlows run from one, read and merged.

A `JobFlowTemplate` declares `spec.params[]` `{name, default, description}` and holds a JobFlow spec
in `spec.jobFlow`. A run is a JobFlow whose spec has `jobFlowTemplateRef: {name}` and `params` (the
values) instead of `flows`. The effective spec of a run is the template's `spec.jobFlow` with
`params` set to every declared param's value (the run's, else the default), resolved once and kept in
the run's `status.storedJobFlowTemplateSpec`, then overlaid at each sync with the run's own fields
(`suspend`, `shutdown`, a TTL...), so that the lifecycle verbs act on a run as on any JobFlow.

Everything here is a pure function of JSON dicts; it never raises on a bad shape (the validation
package says what is wrong; what is read here is planned only when valid).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.jobflow import REF_FIELD as REF_FIELD
from jobflow_controller.apis.jobflow import STORED_SPEC_FIELD as STORED_SPEC_FIELD
from jobflow_controller.apis.meta import Obj

#: The label every run of a template carries (the controller adds it if the creator did not).
TEMPLATE_LABEL: Final = "flow.volcano.sh/jobflowtemplate"
#: `STORED_SPEC_FIELD` (where a run keeps the spec it was resolved to) and `REF_FIELD` are apis/jobflow.py's.
#: The longest stored spec, in bytes of JSON: half of the status's 1 MiB (jobflow/status_writer.py).
MAX_STORED_SPEC_BYTES: Final = 512 * 1024
#: The run's field giving the template's values (beside `REF_FIELD`); the rest of its spec overrides the template's.
PARAMS_FIELD: Final = "params"
#: The longest template name: it is the value of `TEMPLATE_LABEL`, a label value.
MAX_TEMPLATE_NAME_LENGTH: Final = 63
#: The longest param description (documentation only, never expanded).
MAX_DESCRIPTION_LENGTH: Final = 1024


@dataclass(frozen=True)
class ParamDeclaration:
    """One `spec.params` entry of a template: a name, its default (None: required), a description."""

    name: str
    default: str | None = None
    description: str = ""

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class Merge:
    """The run's params merged with the template's declarations: the `{name, value}` list, or the problems."""

    params: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()

    def as_spec_params(self) -> list[dict[str, str]]:
        return [{"name": name, "value": value} for name, value in self.params]


def template_ref_name(job_flow: Obj) -> str | None:
    """`spec.jobFlowTemplateRef.name` (None when the JobFlow names no template; "" when the name is missing)."""
    ref = jf.spec(job_flow).get(REF_FIELD)
    if ref is None:
        return None
    name = ref.get("name") if isinstance(ref, Mapping) else None
    return name if isinstance(name, str) else ""


def is_template_run(job_flow: Obj) -> bool:
    """Whether the JobFlow is run from a template (`spec.jobFlowTemplateRef` set)."""
    return template_ref_name(job_flow) is not None


def declarations(template: Obj) -> tuple[ParamDeclaration, ...]:
    """The template's `spec.params`, in order (entries that are no object, or have no name, left out)."""
    raw = jf.spec(template).get("params")
    out = []
    for entry in raw if isinstance(raw, list) else ():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"]:
            continue
        default = entry.get("default")
        description = entry.get("description")
        out.append(
            ParamDeclaration(
                entry["name"],
                _text(default) if default is not None else None,
                description if isinstance(description, str) else "",
            )
        )
    return tuple(out)


def template_job_flow_spec(template: Obj) -> Mapping[str, Any]:
    """The template's `spec.jobFlow` (empty when it is no object)."""
    value = jf.spec(template).get("jobFlow")
    return value if isinstance(value, Mapping) else {}


def merge_params(declared: Sequence[ParamDeclaration], values: object, template_name: str = "") -> Merge:
    """The values for each declared param, in declaration order: the run's, else the default.

    Refused (the problems, in this order): a value that is no `{name, value}` object with a string
    value, a name given twice, a name the template does not declare, a required param (no default)
    left out. `values` is the run's raw `spec.params` (any JSON).
    """
    where = f'JobFlowTemplate "{template_name}"' if template_name else "the JobFlowTemplate"
    given: dict[str, str] = {}
    problems: list[str] = []
    for i, entry in enumerate(values if isinstance(values, list) else ()):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        value = entry.get("value") if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or not name or not isinstance(value, str):
            problems.append(f"spec.params[{i}]: must be an object with a name and a string value")
        elif name in given:
            problems.append(f'spec.params[{i}]: param "{_cut(name)}" is given more than once')
        else:
            given[name] = value
    if values is not None and not isinstance(values, list):
        problems.append("spec.params: must be a list of {name, value}")
    known = {d.name for d in declared}
    problems.extend(f'param "{_cut(n)}" is not declared by {where}' for n in given if n not in known)
    merged: list[tuple[str, str]] = []
    for decl in declared:
        if decl.name in given:
            merged.append((decl.name, given[decl.name]))
        elif decl.default is not None:
            merged.append((decl.name, decl.default))
        else:
            problems.append(f'param "{_cut(decl.name)}" is required by {where} and has no value')
    return Merge((), tuple(problems)) if problems else Merge(tuple(merged))


def resolve(template: Obj, run: Obj) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """The spec the run is fixed to (the template's `spec.jobFlow` with the merged `params`), or the problems."""
    merge = merge_params(declarations(template), jf.spec(run).get(PARAMS_FIELD), _name(template))
    if merge.problems:
        return None, merge.problems
    spec = copy.deepcopy(dict(template_job_flow_spec(template)))
    spec.pop(REF_FIELD, None)
    if merge.params:
        spec[PARAMS_FIELD] = merge.as_spec_params()
    else:
        spec.pop(PARAMS_FIELD, None)
    return spec, ()


def stored_spec_text(spec: Mapping[str, Any]) -> str:
    """The stored form of a resolved spec: compact JSON, keys sorted (the same spec, the same text)."""
    return orjson.dumps(spec, option=orjson.OPT_SORT_KEYS).decode()


def is_resolved(job_flow: Obj) -> bool:
    """Whether the run was fixed to a spec already (whatever that text holds)."""
    return isinstance(jf.status(job_flow).get(STORED_SPEC_FIELD), str)


def stored_spec(job_flow: Obj) -> Mapping[str, Any] | None:
    """The spec a run was fixed to at its first sync; None when not resolved yet, or when the text is no
    JSON object within `MAX_STORED_SPEC_BYTES` (orjson refuses nesting past 1,024 levels)."""
    text = jf.status(job_flow).get(STORED_SPEC_FIELD)
    if not isinstance(text, str) or len(text) > MAX_STORED_SPEC_BYTES:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def effective_spec(stored: Mapping[str, Any], run: Obj) -> dict[str, Any]:
    """`stored` overlaid with the run's own fields but the reference, its params and `flows`."""
    own = {k: v for k, v in jf.spec(run).items() if k not in (REF_FIELD, PARAMS_FIELD, "flows")}
    return {**stored, **own}


def effective_job_flow(job_flow: Obj) -> Obj:
    """What the planner, the handlers and the views read of a JobFlow: a run with its stored spec in
    place of its own (a new dict; the cached object is never changed), anything else as it is."""
    if not is_template_run(job_flow):
        return job_flow
    stored = stored_spec(job_flow)
    if stored is None:
        return job_flow
    return {**job_flow, "spec": effective_spec(stored, job_flow)}


def with_stored_spec(body: dict[str, Any], job_flow: Obj) -> dict[str, Any]:
    """A status `body` about to replace `job_flow`'s, keeping the spec the run was fixed to: a PUT
    of the status replaces it whole, and the stored spec must outlive every write."""
    stored = jf.status(job_flow).get(STORED_SPEC_FIELD)
    if stored is None or STORED_SPEC_FIELD in body:
        return body
    return {**body, STORED_SPEC_FIELD: stored}


def _name(obj: Obj) -> str:
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) else ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _cut(text: str, limit: int = 80) -> str:
    """Tenant text quoted in a message, cut to a bound."""
    return text if len(text) <= limit else text[:limit] + "..."
