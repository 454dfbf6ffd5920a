"""The admission rules on `spec.params`, `spec.flows[].when` and `spec.flows[].matrix` (ours, docs/params.md).

Shared by the webhook (which refuses the JobFlow) and the controller (a stored one gets
`InvalidJobFlow` and no Job). Each message names the field and what it may hold:

* `spec.params`: a list of `{name, value}` objects, each name unique, `[A-Za-z_][A-Za-z0-9_-]*` and
  at most `MAX_PARAM_NAME_LENGTH` characters, each value a string;
* a flow's `when`: a list of at most `MAX_WHEN_EXPRESSIONS` `{input, operator, values}`, the
  operator `in` or `notin`, `values` a non-empty list of at most `MAX_WHEN_VALUES` strings, or
  `{cel}` (validation/when_cel.py);
* a flow's `matrix`: `params` a non-empty list of `{name, values}` (names as above, unique;
  `values` a non-empty list of strings), at most `MAX_MATRIX_COMBINATIONS` combinations,
  `maxParallel` at least 1, and its last Job's name `<jobflow>-<flow>-<N-1>` a valid Job name;
* every param value, matrix value, `when` input and `when` value at most `MAX_PARAM_VALUE_LENGTH`
  characters (the expansion budget's per-string bound; the CRD's `maxLength` says the same);
* the JobFlow: at most `MAX_FLOWS` Jobs counting every matrix index (the flows' cap, limits.py),
  at most `MAX_PARAMS` params and `MAX_MATRIX_PARAMS` lists in a matrix.

The checks stay cheap whatever is stored: a length is compared, never quoted (`_json` quotes at most
80 characters), and past a list's cap only its first cap entries are looked at (the count is the
problem reported).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from jobflow_controller.apis.params import (
    MAX_MATRIX_COMBINATIONS,
    MAX_PARAM_NAME_LENGTH,
    MAX_PARAM_VALUE_LENGTH,
    MAX_WHEN_EXPRESSIONS,
    MAX_WHEN_VALUES,
    Operator,
)
from jobflow_controller.validation.limits import MAX_FLOWS, MAX_MATRIX_PARAMS, MAX_PARAMS
from jobflow_controller.validation.names import MAX_JOB_NAME_LENGTH, is_subdomain, job_name
from jobflow_controller.validation.rawflows import raw_flows
from jobflow_controller.validation.when_cel import cel_count_problem, cel_item_problems, neither_problem

__all__ = ["OPERATORS", "PARAM_NAME", "flow_params_problems", "params_problems", "params_spec"]

#: A parameter's name (a JobFlow's or a matrix list's).
PARAM_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
#: The `when` operators, in the order messages list them.
OPERATORS: Final = tuple(op.value for op in Operator)


def params_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """Every problem of the three fields: `spec.params`, then each flow's `when` and `matrix`, then the Job cap.
    Any JSON value is taken (a reader of tenant text: docs/hostile-input.md)."""
    job_flow = _mapping(job_flow)
    spec = _mapping(job_flow.get("spec"))
    raw_params = spec.get("params")
    problems = []
    if isinstance(raw_params, list) and len(raw_params) > MAX_PARAMS:
        problems.append(f"jobflow has {len(raw_params)} params, more than the {MAX_PARAMS} allowed")
    problems.extend(_param_list_problems("jobflow params", raw_params, "value", MAX_PARAMS))
    metadata = _mapping(job_flow.get("metadata"))
    name = metadata.get("name") if isinstance(metadata.get("name"), str) else ""
    jobs = 0
    any_matrix = False
    too_many_cel = cel_count_problem(flow for _, flow in raw_flows(job_flow))
    if too_many_cel is not None:
        problems.append(too_many_cel)
    for prefix, flow in raw_flows(job_flow):
        flow_problems, size = flow_params_problems(prefix, flow, str(name), compile_cel=too_many_cel is None)
        problems.extend(flow_problems)
        any_matrix = any_matrix or flow.get("matrix") is not None
        jobs += size
    problems.extend(_matrix_clash_problems(job_flow))
    flows = spec.get("flows")
    if any_matrix and jobs > MAX_FLOWS and not (isinstance(flows, list) and len(flows) > MAX_FLOWS):
        problems.append(f"jobflow has {jobs} Jobs counting every matrix index, more than the {MAX_FLOWS} allowed")
    return problems


def params_spec(job_flow: Mapping[str, Any]) -> Any:
    """`spec.params`: an UPDATE that changes it is checked in full."""
    return _mapping(_mapping(job_flow).get("spec")).get("params") or None


def flow_params_problems(
    prefix: str, flow: Mapping[str, Any], job_flow_name: str, *, compile_cel: bool = True
) -> tuple[list[str], int]:
    """One flow's `when` and `matrix` problems, and how many Jobs it makes (1 without a valid matrix).
    `compile_cel` False: a `when` item's `cel` is not compiled (the JobFlow has too many)."""
    problems = _when_problems(prefix, flow.get("when"), compile_cel)
    raw = flow.get("matrix")
    if raw is None:
        return problems, 1
    if not isinstance(raw, Mapping):
        return [*problems, f"{prefix}: matrix: must be an object with params, got {_json(raw)}"], 1
    lists = raw.get("params")
    if lists is None or lists == []:
        problems.append(f"{prefix}: matrix.params: must list at least one parameter")
        lists = []
    if isinstance(lists, list) and len(lists) > MAX_MATRIX_PARAMS:
        problems.append(f"{prefix}: matrix.params: has {len(lists)} lists, more than the {MAX_MATRIX_PARAMS} allowed")
    list_problems = _param_list_problems(f"{prefix}: matrix.params", lists, "values", MAX_MATRIX_PARAMS)
    problems.extend(list_problems)
    size = 1
    for entry in lists if isinstance(lists, list) else ():
        values = entry.get("values") if isinstance(entry, Mapping) else None
        size *= len(values) if isinstance(values, list) else 0
    if size > MAX_MATRIX_COMBINATIONS:
        problems.append(f"{prefix}: matrix: has {size} combinations, more than the {MAX_MATRIX_COMBINATIONS} allowed")
    max_parallel = raw.get("maxParallel")
    if max_parallel is not None and (not _is_int(max_parallel) or max_parallel < 1):
        problems.append(f"{prefix}: matrix.maxParallel: must be an integer of at least 1, got {_json(max_parallel)}")
    flow_name = flow.get("name")
    if job_flow_name and isinstance(flow_name, str) and size >= 1 and not list_problems:
        base = job_name(job_flow_name, flow_name)
        last = f"{base}-{size - 1}"
        if is_subdomain(base) and len(base) <= MAX_JOB_NAME_LENGTH and len(last) > MAX_JOB_NAME_LENGTH:
            problems.append(
                f"{prefix}: matrix: Job name {_json(last)} is {len(last)} characters long,"
                f" it must be at most {MAX_JOB_NAME_LENGTH}"
            )
    return problems, max(size, 1)


def _matrix_clash_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """A matrix Job that would be another flow's Job, and a probe that waits on a matrix flow.

    `<jobflow>-<flow>-<i>` is also the Job of a flow named `<flow>-<i>`; a `dependsOn.probe` checks
    one Job per target, which a matrix flow does not have.
    """
    flows = [(prefix, flow) for prefix, flow in raw_flows(job_flow)]
    finals = _mapping(job_flow.get("spec")).get("finally")
    entries = [flow for _prefix, flow in flows] + (
        [e for e in finals if isinstance(e, Mapping)] if isinstance(finals, list) else []
    )
    names = {e.get("name") for e in entries if isinstance(e.get("name"), str)}
    matrices: dict[str, int] = {}
    problems: list[str] = []
    for prefix, flow in flows:
        name, raw = flow.get("name"), flow.get("matrix")
        if not isinstance(name, str) or not isinstance(raw, Mapping) or not isinstance(raw.get("params"), list):
            continue
        size = 1
        for entry in raw["params"]:
            values = entry.get("values") if isinstance(entry, Mapping) else None
            size *= len(values) if isinstance(values, list) else 0
        matrices[name] = size
        clash = next((f"{name}-{i}" for i in range(min(size, MAX_MATRIX_COMBINATIONS)) if f"{name}-{i}" in names), None)
        if clash is not None:
            problems.append(
                f"{prefix}: matrix: its Job {_json(f'<jobflow>-{clash}')} would be the Job"
                f" of the flow or finally entry {_json(clash)}"
            )
    for prefix, flow in flows:
        depends_on = _mapping(flow.get("dependsOn"))
        targets = depends_on.get("targets")
        if depends_on.get("probe") is None or not isinstance(targets, list):
            continue
        for target in targets:
            if isinstance(target, str) and target in matrices:
                problems.append(
                    f"{prefix}: dependsOn.probe: cannot wait on the matrix flow {_json(target)}"
                    " (a probe checks one Job per target)"
                )
    return problems


def _when_problems(prefix: str, raw: object, compile_cel: bool = True) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [f"{prefix}: when: must be a list of {{input, operator, values}} expressions, got {_json(raw)}"]
    problems: list[str] = []
    if len(raw) > MAX_WHEN_EXPRESSIONS:
        problems.append(f"{prefix}: when: has {len(raw)} expressions, more than the {MAX_WHEN_EXPRESSIONS} allowed")
    for index, entry in enumerate(raw[:MAX_WHEN_EXPRESSIONS]):
        where = f"{prefix}: when[{index}]"
        if not isinstance(entry, Mapping):
            problems.append(f"{where}: must be an object with input, operator and values, got {_json(entry)}")
            continue
        if "cel" in entry:  # docs/results.md
            problems.extend(cel_item_problems(where, entry, compile_cel=compile_cel))
            continue
        if (neither := neither_problem(where, entry)) is not None:
            problems.append(neither)
            continue
        problems.extend(_string_problems(f"{where}.input", entry.get("input")))
        operator = entry.get("operator")
        if operator not in OPERATORS:
            problems.append(f"{where}.operator: must be one of {', '.join(OPERATORS)}, got {_json(operator)}")
        values = entry.get("values")
        if isinstance(values, list) and len(values) > MAX_WHEN_VALUES:
            problems.append(f"{where}.values: has {len(values)} values, more than the {MAX_WHEN_VALUES} allowed")
        problems.extend(_values_problems(f"{where}.values", values, MAX_WHEN_VALUES))
    return problems


def _param_list_problems(where: str, raw: object, value_field: str, cap: int) -> list[str]:
    """A list of named entries (`spec.params`, a matrix's `params`): each an object, names valid and unique.
    Only the first `cap` entries are looked at (the caller reports a longer list)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [f"{where}: must be a list of {{name, {value_field}}} entries, got {_json(raw)}"]
    problems: list[str] = []
    seen: dict[str, int] = {}
    base = where.rsplit(": ", 1)[-1].removeprefix("jobflow ")
    for index, entry in enumerate(raw[:cap]):
        at = f"{where}[{index}]"
        if not isinstance(entry, Mapping):
            problems.append(f"{at}: must be an object with a name and {value_field}, got {_json(entry)}")
            continue
        name = entry.get("name")
        if isinstance(name, str) and len(name) > MAX_PARAM_NAME_LENGTH:
            problems.append(f"{at}.name: {_too_long(name, MAX_PARAM_NAME_LENGTH)}")
        elif not isinstance(name, str) or not PARAM_NAME.fullmatch(name):
            problems.append(f"{at}.name: must match [A-Za-z_][A-Za-z0-9_-]*, got {_json(name)}")
        elif name in seen:
            problems.append(f"{at}.name: {_json(name)} is already used by {base}[{seen[name]}]")
        else:
            seen[name] = index
        if value_field == "values":
            problems.extend(_values_problems(f"{at}.values", entry.get("values"), MAX_MATRIX_COMBINATIONS))
        else:
            problems.extend(_string_problems(f"{at}.value", entry.get("value")))
    return problems


def _values_problems(where: str, values: object, cap: int) -> list[str]:
    """A non-empty list of strings, each within the per-string bound; only its first `cap` values are looked at."""
    if not isinstance(values, list) or not values:
        return [f"{where}: must be a non-empty list of strings, got {_json(values)}"]
    return [p for i, v in enumerate(values[:cap]) for p in _string_problems(f"{where}[{i}]", v)]


def _string_problems(where: str, value: object) -> list[str]:
    """A param value, matrix value, `when` input or `when` value: a string of at most `MAX_PARAM_VALUE_LENGTH`."""
    if not isinstance(value, str):
        return [f"{where}: must be a string, got {_json(value)}"]
    if len(value) > MAX_PARAM_VALUE_LENGTH:
        return [f"{where}: {_too_long(value, MAX_PARAM_VALUE_LENGTH)}"]
    return []


def _too_long(value: str, limit: int) -> str:
    """`is 5000 characters long, more than the 4096 allowed`: the size, never the text."""
    return f"is {len(value)} characters long, more than the {limit} allowed"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else f"{text[:77]}..."


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
