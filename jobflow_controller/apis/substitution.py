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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from jobflow_controller.apis import meta
from jobflow_controller.apis.meta import Obj

_OPERATOR: Final = "$"
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
    head, tail = _split(text)

    def write(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return _OPERATOR  # `$$`
        value = variables.get(name)
        return match.group(0) if value is None else value

    return _DOLLAR.sub(write, head) + tail.replace(_ESCAPE, _OPERATOR)


@dataclass(frozen=True)
class References:
    """What expanding one string would do, read without expanding it: its length, the names it
    references (with how many times), and its `$$` escapes (each writes one character fewer)."""

    length: int
    names: tuple[tuple[str, int], ...]
    escapes: int

    def expanded_length(self, variables: Mapping[str, str]) -> int:
        """The length `expand(text, variables)` would have, computed without building it."""
        size = self.length - self.escapes
        for name, count in self.names:
            value = variables.get(name)
            if value is not None:
                size += count * (len(value) - len(name) - 3)
        return size


def references(text: str) -> References:
    """The references and escapes of `text`, read by `expand`'s own scan."""
    if _OPERATOR not in text:
        return References(len(text), (), 0)
    head, tail = _split(text)
    names: dict[str, int] = {}
    escapes = tail.count(_ESCAPE)
    for match in _DOLLAR.finditer(head):
        name = match.group(1)
        if name is None:
            escapes += 1
        else:
            names[name] = names.get(name, 0) + 1
    return References(len(text), tuple(names.items()), escapes)


#: `$$` (no group), or `$(NAME)` (group 1). A `$` before anything else needs no match: the character
#: after it is never a `$` (that is `$$`) and so can start no match of its own.
_DOLLAR: Final = re.compile(r"\$(?:\$|\(([^)]*)\))")
_ESCAPE: Final = "$$"


def _split(text: str) -> tuple[str, str]:
    """`text` up to its last `)`, and the rest.

    A `$(` is a reference exactly when a `)` follows it somewhere, so after the last `)` only `$$`
    escapes apply; matching only the head keeps the scan linear, where looking for a closer after
    every unclosed `$(` was quadratic (400 KB of `$(` took 0.76 s).
    """
    last = text.rfind(_CLOSER)
    return text[: last + 1], text[last + 1 :]


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
