"""Ours, opt-in (docs/params.md): a flow's `when` expressions, judged as a pure function.

Each expression's `input` is expanded (params and context only, apis/substitution.py) and compared
with its `values`: `in` holds when it equals one of them, `notin` when it equals none. Every
expression must hold; the first that does not is named in the `Skipped` event's message, e.g.
`flow prepare skipped: when "$(params.mode)" (= "dry") in [full, incremental] is false`.
A `cel` item is judged by when_cel.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from jobflow_controller.apis.params import Operator, WhenExpression
from jobflow_controller.apis.substitution import expand
from jobflow_controller.apis.tenant_text import excerpt_text
from jobflow_controller.jobflow.when_cel import WhenCelFalse, WhenInvalid, judge_cel

#: The Normal `Skipped` event's message for a flow skipped by `when` (the reason is docs/rules.md's).
#: Arguments: the flow, the input as written, its value, the operator, the values; the input, its
#: value and the values are each cut to `MAX_QUOTED` characters, the cut marked (a value may be 64 KiB).
MESSAGE_SKIPPED_WHEN: Final = "flow %s skipped: when %s (= %s) %s [%s] is false"
MAX_QUOTED: Final = 200


@dataclass(frozen=True)
class WhenFalse:
    """The first expression of a flow that does not hold, with its input's expanded value quoted
    (cut to `MAX_QUOTED` characters: a sync keeps one per skipped flow)."""

    expression: WhenExpression
    quoted_value: str
    message_fmt: str = MESSAGE_SKIPPED_WHEN

    def message_args(self, flow_name: str) -> tuple[str, str, str, str, str]:
        """The arguments of `MESSAGE_SKIPPED_WHEN` for `flow_name`."""
        expr = self.expression
        values = excerpt_text(", ".join(expr.values), MAX_QUOTED)
        return (flow_name, _quote(expr.input), self.quoted_value, expr.operator, values)

    def message(self, flow_name: str) -> str:
        return MESSAGE_SKIPPED_WHEN % self.message_args(flow_name)


def holds(expression: WhenExpression, value: str) -> bool:
    """Whether one expression holds for its input's expanded `value` (an unknown operator never does)."""
    if expression.operator == Operator.IN:
        return value in expression.values
    if expression.operator == Operator.NOT_IN:
        return value not in expression.values
    return False


def judge_when(
    expressions: Sequence[WhenExpression], variables: Mapping[str, str]
) -> WhenFalse | WhenCelFalse | WhenInvalid | None:
    """None when every expression holds (no expression: it holds), else the first that does not (a
    `cel` one, when_cel.py, may also be one that cannot be judged)."""
    for index, expression in enumerate(expressions):
        if expression.cel is not None:
            verdict = judge_cel(index, expression.cel, variables)
            if verdict is not None:
                return verdict
            continue
        value = expand(expression.input, variables)
        if not holds(expression, value):
            return WhenFalse(expression, _quote(value))
    return None


def _quote(text: str) -> str:
    """`text` as a JSON string, its first `MAX_QUOTED` characters only, the cut marked."""
    quoted = json.dumps(text[:MAX_QUOTED], ensure_ascii=False)
    return quoted if len(text) <= MAX_QUOTED else f"{quoted}... ({len(text)} characters)"
