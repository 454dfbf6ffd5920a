"""Ours, opt-in (docs/params.md): `$(params.NAME)`, `$(matrix.NAME)` and `$(context.*)` in a flow's Job.

The rule is Kubernetes' own for `$(VAR)` in a container's `command`, `args` and `env` (its
`third_party/forked/golang/expansion`), so a user who knows one knows the other:

* `$(NAME)` is replaced by the variable's value when there is one, and left exactly as written when
  there is none (so `$(HOME)` still reaches Kubernetes, which expands it from the container's env);
* `$$` writes one `$`: `$$(params.x)` is the literal text `$(params.x)`;
* a `$` before anything else, and a `$(` never closed, are kept as written;
* one pass: a value put in is never expanded again.

`expand_values` applies it to every string of a JSON value; a map's keys are never expanded. Pure:
nothing given is modified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from jobflow_controller.apis import meta
from jobflow_controller.apis.meta import Obj

_OPERATOR: Final = "$"
_OPENER: Final = "("
_CLOSER: Final = ")"

#: The context variables (each `$(context.<name>)`).
CONTEXT_JOBFLOW_NAME: Final = "context.jobflow.name"
CONTEXT_JOBFLOW_NAMESPACE: Final = "context.jobflow.namespace"
CONTEXT_JOBFLOW_UID: Final = "context.jobflow.uid"
CONTEXT_FLOW_NAME: Final = "context.flow.name"
CONTEXT_MATRIX_INDEX: Final = "context.matrix.index"


def expand(text: str, variables: Mapping[str, str]) -> str:
    """`text` with every `$(NAME)` of `variables` replaced, by Kubernetes' rule (the module docstring)."""
    if _OPERATOR not in text:
        return text
    out: list[str] = []
    checkpoint = 0
    cursor = 0
    while cursor < len(text):
        if text[cursor] == _OPERATOR and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            written, advance = _read_reference(text, cursor + 1, variables)
            out.append(written)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    out.append(text[checkpoint:])
    return "".join(out)


def _read_reference(text: str, start: int, variables: Mapping[str, str]) -> tuple[str, int]:
    """What the `$` before `text[start]` writes, and how many characters after it were read."""
    char = text[start]
    if char == _OPERATOR:
        return _OPERATOR, 1  # `$$`: an escaped operator
    if char == _OPENER:
        end = text.find(_CLOSER, start + 1)
        if end == -1:
            return _OPERATOR + _OPENER, 1  # never closed: kept as written
        name = text[start + 1 : end]
        value = variables.get(name)
        return (f"$({name})" if value is None else value), end - start + 1
    return _OPERATOR + char, 1  # `$` before anything else: kept


def expand_values(value: Any, variables: Mapping[str, str]) -> Any:
    """A copy of the JSON `value` with every string expanded; a map's keys are kept as they are."""
    if isinstance(value, str):
        return expand(value, variables)
    if isinstance(value, Mapping):
        return {key: expand_values(item, variables) for key, item in value.items()}
    if isinstance(value, list):
        return [expand_values(item, variables) for item in value]
    return value


def expand_job(job: Mapping[str, Any], variables: Mapping[str, str]) -> dict[str, Any]:
    """A copy of a Job body with its spec, labels and annotations expanded (the rest as it is)."""
    out = dict(job)
    metadata = dict(job.get("metadata") or {})
    for key in ("labels", "annotations"):
        metadata[key] = expand_values(metadata.get(key) or {}, variables)
    out["metadata"] = metadata
    out["spec"] = expand_values(job.get("spec") or {}, variables)
    return out


def context_variables(job_flow: Obj, flow_name: str, matrix_index: int | None = None) -> dict[str, str]:
    """`$(context.*)` for a flow's Job (`context.matrix.index` only for a matrix flow's)."""
    out = {
        CONTEXT_JOBFLOW_NAME: meta.name(job_flow),
        CONTEXT_JOBFLOW_NAMESPACE: meta.namespace(job_flow),
        CONTEXT_JOBFLOW_UID: meta.uid(job_flow),
        CONTEXT_FLOW_NAME: flow_name,
    }
    if matrix_index is not None:
        out[CONTEXT_MATRIX_INDEX] = str(matrix_index)
    return out


def job_variables(
    job_flow: Obj,
    flow_name: str,
    params: Sequence[tuple[str, str]],
    combination: Sequence[tuple[str, str]] = (),
    matrix_index: int | None = None,
) -> dict[str, str]:
    """Every variable of a flow's Job: `params.*`, `matrix.*` (its combination) and `context.*`."""
    out = {f"params.{name}": value for name, value in params}
    out.update((f"matrix.{name}", value) for name, value in combination)
    out.update(context_variables(job_flow, flow_name, matrix_index))
    return out
