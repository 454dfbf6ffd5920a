"""``job_flow_trigger_problems``: what the webhook refuses in a JobFlowTrigger, and the controller again.

The default install has no webhook, so the controller calls the same function before it spends
anything on a trigger (docs/triggers.md, "Admission"), and a trigger with problems gets the Warning
``TriggerFailed`` and never fires. Each message names its field; the numbers are the CRD's bounds
(``hack/crdgen/trigger.py`` reads them from here), so the three gatekeepers say the same thing.
Pure: reads the object's JSON, never mutates it. A ``cel`` binding is compiled here, so a binding
that does not parse is refused at admission rather than on the first event.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from jobflow_controller.apis.cel_expression import MAX_CEL_LENGTH, CelError, compile_cel
from jobflow_controller.apis.jobflowtrigger import EVENTS, RUN_SUFFIX_CHARS
from jobflow_controller.apis.params import MAX_PARAM_NAME_LENGTH, MAX_PARAM_VALUE_LENGTH
from jobflow_controller.validation.names import MAX_JOB_NAME_LENGTH, MAX_LABEL_VALUE_LENGTH, is_subdomain

__all__ = [
    "CONCURRENCY_POLICIES",
    "MAX_API_VERSION_LENGTH",
    "MAX_CEL_LENGTH",
    "MAX_HISTORY_LIMIT",
    "MAX_KIND_LENGTH",
    "MAX_MATCH_EXPRESSIONS",
    "MAX_MATCH_LABELS",
    "MAX_NAME_LENGTH",
    "MAX_SELECTOR_VALUES",
    "MAX_TRIGGER_PARAMS",
    "SELECTOR_OPERATORS",
    "job_flow_trigger_problems",
]

#: A run is `<trigger>-<5 letters>` and stays a Job-name-sized JobFlow name.
MAX_NAME_LENGTH: Final = MAX_JOB_NAME_LENGTH - RUN_SUFFIX_CHARS - 1
#: The most params one trigger binds (the longest `cel` expression is the CEL seam's MAX_CEL_LENGTH).
MAX_TRIGGER_PARAMS: Final = 64
#: `spec.resource`: an API version is `[group/]version` (a group is a DNS subdomain); a kind a Go identifier.
MAX_API_VERSION_LENGTH: Final = 253 + 1 + 63
MAX_KIND_LENGTH: Final = 63
#: `spec.resource.labelSelector`: entries of matchLabels, expressions, values of one expression.
MAX_MATCH_LABELS: Final = 32
MAX_MATCH_EXPRESSIONS: Final = 16
MAX_SELECTOR_VALUES: Final = 64
MAX_LABEL_KEY_LENGTH: Final = 253 + 1 + 63
SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")
CONCURRENCY_POLICIES: Final = ("Allow", "Forbid", "Replace")
#: CronJob's int32, as the CronJobFlow's history limits.
MAX_HISTORY_LIMIT: Final = 2**31 - 1

_PARAM_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_API_VERSION: Final = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?v[0-9]+((alpha|beta)[0-9]+)?")
_KIND: Final = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, (dict, Mapping)) else {}


def _quote(value: object, limit: int = 64) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)[:limit]
    return json.dumps(text[:limit] + ("..." if len(text) > limit else ""))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _name_problems(obj: Mapping[str, Any]) -> list[str]:
    name = _mapping(obj.get("metadata")).get("name")
    if isinstance(name, str) and len(name) > MAX_NAME_LENGTH:
        return [f"metadata.name: must be no more than {MAX_NAME_LENGTH} characters (a run adds -<5 letters>)"]
    return []


def _template_problems(spec: Mapping[str, Any]) -> list[str]:
    name = _mapping(spec.get("jobFlowTemplateRef")).get("name")
    if not isinstance(name, str) or not name:
        return ["spec.jobFlowTemplateRef.name: required"]
    # The name is also the value of the runs' label: a subdomain that is a label value.
    if len(name) > MAX_LABEL_VALUE_LENGTH or not is_subdomain(name):
        return [
            f"spec.jobFlowTemplateRef.name: {_quote(name)} must be a DNS-1123 subdomain of at most "
            f"{MAX_LABEL_VALUE_LENGTH} characters"
        ]
    return []


def _binding_problems(index: int, entry: object, seen: set[str]) -> list[str]:
    where = f"spec.params[{index}]"
    if not isinstance(entry, Mapping):
        return [f"{where}: must be an object with name and one of value or cel"]
    problems: list[str] = []
    name = entry.get("name")
    if not isinstance(name, str) or len(name) > MAX_PARAM_NAME_LENGTH or not _PARAM_NAME.fullmatch(name):
        problems.append(f"{where}.name: {_quote(name)} must match [A-Za-z_][A-Za-z0-9_-]* (at most 63 characters)")
    elif name in seen:
        problems.append(f"{where}.name: {_quote(name)} is bound twice")
    else:
        seen.add(name)
    value, cel = entry.get("value"), entry.get("cel")
    if (value is None) == (cel is None):
        problems.append(f"{where}: exactly one of value and cel must be set")
    elif value is not None and (not isinstance(value, str) or len(value) > MAX_PARAM_VALUE_LENGTH):
        problems.append(f"{where}.value: must be a string of at most {MAX_PARAM_VALUE_LENGTH} characters")
    elif cel is not None:
        if not isinstance(cel, str) or not cel or len(cel) > MAX_CEL_LENGTH:
            problems.append(f"{where}.cel: must be an expression of 1 to {MAX_CEL_LENGTH} characters")
        else:
            try:
                compile_cel(cel)
            except CelError as err:
                problems.append(f"{where}.cel: does not compile: {str(err)[:200]}")
    return problems


def _params_problems(spec: Mapping[str, Any]) -> list[str]:
    params = spec.get("params", [])
    if params is None:
        return []
    if not isinstance(params, list):
        return ["spec.params: must be a list"]
    if len(params) > MAX_TRIGGER_PARAMS:
        return [f"spec.params: has {len(params)} entries, more than the {MAX_TRIGGER_PARAMS} allowed"]
    seen: set[str] = set()
    return [p for index, entry in enumerate(params) for p in _binding_problems(index, entry, seen)]


def _selector_problems(selector: object) -> list[str]:
    where = "spec.resource.labelSelector"
    if selector is None:
        return []
    if not isinstance(selector, Mapping):
        return [f"{where}: must be an object"]
    problems: list[str] = []
    labels = selector.get("matchLabels") or {}
    if not isinstance(labels, Mapping) or len(labels) > MAX_MATCH_LABELS:
        problems.append(f"{where}.matchLabels: at most {MAX_MATCH_LABELS} entries")
    elif any(
        not isinstance(v, str) or len(v) > MAX_LABEL_VALUE_LENGTH or len(str(k)) > MAX_LABEL_KEY_LENGTH
        for k, v in labels.items()
    ):
        problems.append(f"{where}.matchLabels: keys and values must be label keys and values")
    expressions = selector.get("matchExpressions") or []
    if not isinstance(expressions, list) or len(expressions) > MAX_MATCH_EXPRESSIONS:
        return [*problems, f"{where}.matchExpressions: at most {MAX_MATCH_EXPRESSIONS} entries"]
    for index, expr in enumerate(expressions):
        expr = _mapping(expr)
        values = expr.get("values") or []
        if (
            not isinstance(expr.get("key"), str)
            or expr.get("operator") not in SELECTOR_OPERATORS
            or not isinstance(values, list)
            or len(values) > MAX_SELECTOR_VALUES
            or (expr.get("operator") in ("In", "NotIn")) != bool(values)
        ):
            problems.append(
                f"{where}.matchExpressions[{index}]: a key, an operator of {', '.join(SELECTOR_OPERATORS)}, and "
                f"1 to {MAX_SELECTOR_VALUES} values for In and NotIn only"
            )
    return problems


def _resource_problems(resource: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    api_version, kind = resource.get("apiVersion"), resource.get("kind")
    if (
        not isinstance(api_version, str)
        or len(api_version) > MAX_API_VERSION_LENGTH
        or not _API_VERSION.fullmatch(api_version)
    ):
        problems.append(f"spec.resource.apiVersion: {_quote(api_version)} must be [group/]version, such as v1")
    if not isinstance(kind, str) or len(kind) > MAX_KIND_LENGTH or not _KIND.fullmatch(kind):
        problems.append(f"spec.resource.kind: {_quote(kind)} must be a kind, such as ConfigMap")
    events = resource.get("events", list(EVENTS))
    if (
        not isinstance(events, list)
        or not events
        or any(e not in EVENTS for e in events)
        or len(set(map(str, events))) != len(events)
    ):
        problems.append(f"spec.resource.events: 1 to 3 distinct values of {', '.join(EVENTS)}")
    return problems + _selector_problems(resource.get("labelSelector"))


def _source_problems(spec: Mapping[str, Any]) -> list[str]:
    http, resource = spec.get("http"), spec.get("resource")
    if (http is None) == (resource is None):
        return ["spec: exactly one of http and resource must be set"]
    if http is not None:
        return [] if isinstance(http, Mapping) else ["spec.http: must be an object"]
    return _resource_problems(resource) if isinstance(resource, Mapping) else ["spec.resource: must be an object"]


def _policy_problems(spec: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    policy = spec.get("concurrencyPolicy")
    if policy is not None and policy not in CONCURRENCY_POLICIES:
        problems.append(f"spec.concurrencyPolicy: {_quote(policy)} must be one of {', '.join(CONCURRENCY_POLICIES)}")
    for field in ("successfulJobFlowsHistoryLimit", "failedJobFlowsHistoryLimit"):
        value = spec.get(field)
        if value is not None and (not _is_int(value) or not 0 <= value <= MAX_HISTORY_LIMIT):
            problems.append(f"spec.{field}: must be an integer from 0 to {MAX_HISTORY_LIMIT}")
    return problems


def job_flow_trigger_problems(trigger: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[str]:
    """Every problem of ``trigger`` (empty: admitted). On UPDATE (``old`` given) an unchanged spec passes."""
    spec = trigger.get("spec")
    if old is not None and spec == old.get("spec"):
        return []
    if not isinstance(spec, Mapping):
        return ["spec: required"]
    return [
        *_name_problems(trigger),
        *_template_problems(spec),
        *_params_problems(spec),
        *_source_problems(spec),
        *_policy_problems(spec),
    ]
