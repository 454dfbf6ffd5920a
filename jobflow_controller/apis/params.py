"""Ours, opt-in (docs/params.md): `spec.params`, `spec.flows[].when` and `spec.flows[].matrix`, read.

A JobFlow that sets none of them is upstream's: no substitution, no condition, one Job per flow
(`uses_params` is the switch). Values admission would refuse (stored while the webhook was off) make
the JobFlow invalid in the controller too (validation/params.py), so what is read here is only ever
planned when valid; the readers still never raise on a bad shape (they skip it).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.meta import Obj

#: The label on each Job of a matrix flow: its index in product order ("0", "1", ...).
MATRIX_INDEX_LABEL: Final = "flow.volcano.sh/matrix-index"
#: The annotation on each Job of a matrix flow: its values, compact JSON, keys in declaration order.
MATRIX_PARAMS_ANNOTATION: Final = "flow.volcano.sh/matrix-params"
#: The most combinations one matrix may have.
MAX_MATRIX_COMBINATIONS: Final = 256
#: The expansion budget's per-string bound (docs/hostile-input.md): the longest param value, matrix
#: value, `when` input and `when` value, in characters. The CRD's `maxLength`, the webhook's and the
#: controller's check (validation/params.py) say the same number.
MAX_PARAM_VALUE_LENGTH: Final = 4096
#: The most `when` expressions one flow may have, and values one expression may list.
MAX_WHEN_EXPRESSIONS: Final = 16
MAX_WHEN_VALUES: Final = 64
#: The longest parameter name (a JobFlow's or a matrix list's): `$(params.<name>)` stays readable.
MAX_PARAM_NAME_LENGTH: Final = 63


class Operator(StrEnum):
    """A `when` expression's operator."""

    IN = "in"
    NOT_IN = "notin"


@dataclass(frozen=True)
class Param:
    """One `spec.params` entry: a named string."""

    name: str
    value: str


@dataclass(frozen=True)
class WhenExpression:
    """One entry of a flow's `when`: `input` (expanded first) `operator` `values`, or a `cel` expression
    (docs/results.md; `input`, `operator` and `values` then empty)."""

    input: str
    operator: str
    values: tuple[str, ...]
    cel: str | None = None


@dataclass(frozen=True)
class MatrixParam:
    """One list of a matrix: a name and its values."""

    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Matrix:
    """A flow's `matrix`: the cartesian product of its lists, run at most `max_parallel` at a time."""

    params: tuple[MatrixParam, ...]
    #: None: all at once.
    max_parallel: int | None = None

    @property
    def size(self) -> int:
        """N, the number of combinations (the product of the lists' lengths)."""
        size = 1
        for param in self.params:
            size *= len(param.values)
        return size

    @property
    def oversized(self) -> bool:
        """More combinations than allowed (admission refuses it; a stored one is invalid): nothing
        proportional to its size, its Jobs' names or its combinations, is ever listed."""
        return self.size > MAX_MATRIX_COMBINATIONS

    @property
    def parallel(self) -> int:
        """How many of its Jobs may be unfinished at once."""
        return self.size if self.max_parallel is None else max(1, self.max_parallel)

    def combinations(self) -> list[tuple[tuple[str, str], ...]]:
        """Every combination, in product order (the first list varying slowest), as (name, value) pairs;
        none for an oversized matrix."""
        if self.oversized:
            return []
        names = [p.name for p in self.params]
        return [
            tuple(zip(names, values, strict=True)) for values in itertools.product(*(p.values for p in self.params))
        ]


def matrix_job_name(job_flow_name: str, flow_name: str, index: int) -> str:
    """The Job of combination `index` of a matrix flow: `<jobflow>-<flow>-<index>`."""
    return f"{job_flow_name}-{flow_name}-{index}"


def matrix_job_names(job_flow_name: str, flow_name: str, found: Matrix) -> list[str]:
    """A matrix flow's Jobs in index order; none for an oversized matrix (it is invalid: listing
    256^16 names would take the reader down, controller or plugin alike)."""
    if found.oversized:
        return []
    return [matrix_job_name(job_flow_name, flow_name, i) for i in range(found.size)]


def matrix_params_json(combination: Sequence[tuple[str, str]]) -> str:
    """The `flow.volcano.sh/matrix-params` value: `{"lr":"0.1","seed":"1"}` (declaration order)."""
    return json.dumps(dict(combination), separators=(",", ":"), ensure_ascii=False)


def params(job_flow: Obj) -> tuple[Param, ...]:
    """`spec.params`, in spec order (entries that are no object, or have no name, are left out)."""
    raw = jf.spec(job_flow).get("params")
    if not isinstance(raw, list):
        return ()
    return tuple(Param(str(p["name"]), _text(p.get("value"))) for p in raw if isinstance(p, Mapping) and p.get("name"))


def when_expressions(raw: object) -> tuple[WhenExpression, ...]:
    """A flow's raw `when` value, read (None or a bad shape: no expressions)."""
    if not isinstance(raw, list):
        return ()
    out = []
    for entry in raw:
        if not isinstance(entry, Mapping):
            continue
        values = entry.get("values")
        out.append(
            WhenExpression(
                input=_text(entry.get("input")),
                operator=_text(entry.get("operator")),
                values=tuple(_text(v) for v in values) if isinstance(values, list) else (),
                cel=_text(entry["cel"]) if "cel" in entry else None,
            )
        )
    return tuple(out)


def matrix(raw: object) -> Matrix | None:
    """A flow's raw `matrix` value, read; None when the flow has none."""
    if not isinstance(raw, Mapping):
        return None
    lists = raw.get("params")
    entries = []
    for entry in lists if isinstance(lists, list) else ():
        if isinstance(entry, Mapping):
            values = entry.get("values")
            entries.append(
                MatrixParam(
                    _text(entry.get("name")), tuple(_text(v) for v in values) if isinstance(values, list) else ()
                )
            )
    max_parallel = raw.get("maxParallel")
    limit = max_parallel if isinstance(max_parallel, int) and not isinstance(max_parallel, bool) else None
    return Matrix(tuple(entries), limit)


def uses_params(job_flow: Obj, flows: Sequence[jf.Flow] | None = None) -> bool:
    """Whether the JobFlow sets `spec.params`, or a flow sets `when` or `matrix`.

    `flows`: its `jf.flows`, when the caller has them parsed already.
    """
    if jf.spec(job_flow).get("params"):
        return True
    return any(f.when is not None or f.matrix is not None for f in (jf.flows(job_flow) if flows is None else flows))


def _text(value: Any) -> str:
    """A string as written; anything else (admission refuses it) as its JSON text."""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value)


@dataclass(frozen=True)
class ParamsSpec:
    """What a sync reads of the three fields: the params, each flow's `when` and `matrix` (by flow name)."""

    params: tuple[Param, ...] = ()
    when: Mapping[str, tuple[WhenExpression, ...]] = field(default_factory=dict)
    matrices: Mapping[str, Matrix] = field(default_factory=dict)

    @classmethod
    def of(cls, job_flow: Obj, flows: Sequence[jf.Flow]) -> ParamsSpec | None:
        """None for a JobFlow that sets none of the fields (`uses_params`): it is upstream's."""
        if not uses_params(job_flow, flows):
            return None
        matrices = {f.name: m for f in flows if (m := matrix(f.matrix)) is not None}
        when = {f.name: when_expressions(f.when) for f in flows if f.when is not None}
        return cls(params(job_flow), when, matrices)

    def job_names(self, job_flow_name: str, flow_name: str) -> list[str]:
        """The flow's Jobs, in index order: `<jobflow>-<flow>`, or one `<jobflow>-<flow>-<i>` per combination."""
        found = self.matrices.get(flow_name)
        if found is None:
            return [jf.job_name(job_flow_name, flow_name)]
        return matrix_job_names(job_flow_name, flow_name, found)


def flow_job_names(params: ParamsSpec | None, job_flow_name: str, flow_name: str) -> list[str]:
    """The one answer to "which Jobs does this flow have": `<jobflow>-<flow>` (upstream's), or a matrix
    flow's `<jobflow>-<flow>-<i>`, one per combination, in index order (docs/params.md)."""
    if params is None:
        return [jf.job_name(job_flow_name, flow_name)]
    return params.job_names(job_flow_name, flow_name)
