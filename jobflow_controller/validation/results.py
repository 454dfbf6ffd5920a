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
from collections.abc import Iterator, Mapping
from typing import Any

from jobflow_controller.apis.results import (
    MAX_JOBFLOW_RESULTS,
    MAX_RESULT_BYTES,
    MAX_RESULT_NAME_LENGTH,
    MAX_RESULT_NAMES,
    MAX_TASK_NAME_LENGTH,
    RESULT_NAME,
    ResultReference,
    is_name,
    result_reference,
)
from jobflow_controller.apis.substitution import references
from jobflow_controller.apis.tenant_text import excerpt_text
from jobflow_controller.validation.rawflows import raw_finally, raw_flows

__all__ = ["own_results_problems", "reference_problems", "results_problems", "strings_of"]


def results_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """Every problem of each flow's `results`, in spec order, then of the references to results."""
    problems: list[str] = []
    for prefix, flow in raw_flows(job_flow):
        raw = flow.get("results")
        if raw is not None:
            problems.extend(_flow_results_problems(f"{prefix}: results", raw))
    problems.extend(reference_problems(job_flow))
    problems.extend(own_results_problems(job_flow))
    return problems


def own_results_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """`spec.results`: at most `MAX_JOBFLOW_RESULTS` entries `{name, value}`, names as a flow result's and
    unique, values strings of at most `MAX_RESULT_BYTES` characters whose `$(flows.F.results.N)` name a
    flow F of the JobFlow and one of its declared names (`[*]` exactly for a matrix F)."""
    spec = job_flow.get("spec") if isinstance(job_flow, Mapping) else None
    raw = spec.get("results") if isinstance(spec, Mapping) else None
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [f"spec.results: must be a list of {{name, value}}, got {_quoted(raw)}"]
    problems = []
    if len(raw) > MAX_JOBFLOW_RESULTS:
        problems.append(f"spec.results: has {len(raw)} entries, more than the {MAX_JOBFLOW_RESULTS} allowed")
    flows = list(raw_flows(job_flow))
    declared = {str(f.get("name")): set(_names(f.get("results"))) for _p, f in flows}
    matrices = {str(f.get("name")) for _p, f in flows if f.get("matrix") is not None}
    seen: set[str] = set()
    for i, entry in enumerate(raw[:MAX_JOBFLOW_RESULTS]):
        problems.extend(_own_entry_problems(f"spec.results[{i}]", entry, seen, declared, matrices))
    return problems


def _own_entry_problems(
    where: str, entry: object, seen: set[str], declared: Mapping[str, set[str]], matrices: set[str]
) -> list[str]:
    if not isinstance(entry, Mapping):
        return [f"{where}: must be an object with name and value, got {_quoted(entry)}"]
    name, value = entry.get("name"), entry.get("value")
    problems = []
    if not isinstance(name, str) or not is_name(name):
        problems.append(
            f"{where}.name: must match {RESULT_NAME.pattern} and be at most {MAX_RESULT_NAME_LENGTH}"
            f" characters, got {_quoted(name)}"
        )
    elif name in seen:
        problems.append(f"{where}.name: {_quoted(name)} is repeated")
    else:
        seen.add(name)
    if not isinstance(value, str) or len(value) > MAX_RESULT_BYTES:
        size = f"{len(value)} characters" if isinstance(value, str) else _quoted(value)
        return [*problems, f"{where}.value: must be a string of at most {MAX_RESULT_BYTES} characters, got {size}"]
    for variable, _count in references(value).names:
        ref = result_reference(variable)
        if ref is None:
            continue
        problem = (
            f"flow {_quoted(ref.flow)} is not a flow of the JobFlow"
            if ref.flow not in declared
            else _reference_problem(ref, set(declared), declared, matrices)
        )
        if problem is not None:
            problems.append(f"{where}.value: $({excerpt_text(variable)}): {problem}")
    return problems


def reference_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """`$(flows.F.results.N)` in a flow's `patch` or `when` inputs (or a finally entry's `patch`): F must be
    one of the flow's (indirect) dependencies (any flow, for a finally entry), N one of F's declared names,
    and `[*]` written exactly when F is a matrix flow."""
    flows = list(raw_flows(job_flow))
    targets = {str(f.get("name")): _targets(f) for _p, f in flows}
    declared = {str(f.get("name")): set(_names(f.get("results"))) for _p, f in flows}
    matrices = {str(f.get("name")) for _p, f in flows if f.get("matrix") is not None}
    problems: list[str] = []
    entries = [(p, f, False) for p, f in flows] + [(p, f, True) for p, f in raw_finally(job_flow)]
    for prefix, flow, is_final in entries:
        texts: list[object] = list(strings_of(flow.get("patch")))
        when = flow.get("when")
        texts += [e.get("input") for e in when if isinstance(e, Mapping)] if isinstance(when, list) else []
        upstream: set[str] | None = set(targets) if is_final else None
        for text in texts:
            for variable, _count in references(text).names if isinstance(text, str) else ():
                ref = result_reference(variable)
                if ref is None:
                    continue
                if upstream is None:
                    upstream = _ancestors(str(flow.get("name")), targets)
                problem = _reference_problem(ref, upstream, declared, matrices)
                if problem is not None:
                    problems.append(f"{prefix}: $({excerpt_text(variable)}): {problem}")
    return problems


def _reference_problem(
    ref: ResultReference, upstream: set[str], declared: Mapping[str, set[str]], matrices: set[str]
) -> str | None:
    if ref.flow not in upstream:
        return f"flow {_quoted(ref.flow)} is not one of its dependencies"
    if ref.name not in declared.get(ref.flow, ()):
        return f"flow {_quoted(ref.flow)} declares no result {_quoted(ref.name)}"
    if ref.array and ref.flow not in matrices:
        return f"[*] reads a matrix flow's values, and {_quoted(ref.flow)} has no matrix"
    if not ref.array and ref.flow in matrices:
        return f"flow {_quoted(ref.flow)} has a matrix: its values are read as an array, with [*]"
    return None


def _targets(flow: Mapping[str, Any]) -> list[str]:
    depends_on = flow.get("dependsOn")
    found = depends_on.get("targets") if isinstance(depends_on, Mapping) else None
    return [t for t in found if isinstance(t, str)] if isinstance(found, list) else []


def _names(raw: object) -> list[str]:
    names = raw.get("names") if isinstance(raw, Mapping) else None
    return [n for n in names[:MAX_RESULT_NAMES] if isinstance(n, str)] if isinstance(names, list) else []


def _ancestors(flow: str, targets: Mapping[str, list[str]]) -> set[str]:
    """The flows `flow` depends on, directly or not (a cycle, refused elsewhere, ends the walk)."""
    seen: set[str] = set()
    stack = list(targets.get(flow, ()))
    while stack:
        name = stack.pop()
        if name not in seen and name != flow:
            seen.add(name)
            stack.extend(targets.get(name, ()))
    return seen


def strings_of(value: object) -> Iterator[str]:
    """Every string inside a JSON value (a map's values, not its keys), depth first, without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


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
