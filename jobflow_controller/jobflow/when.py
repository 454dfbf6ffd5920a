"""Ours, opt-in (docs/params.md): a flow's `when` expressions, judged as a pure function.

Each expression's `input` is expanded (params and context only, apis/substitution.py) and compared
with its `values`: `in` holds when it equals one of them, `notin` when it equals none. Every
expression must hold; the first that does not is named in the `Skipped` event's message, e.g.
`flow prepare skipped: when "$(params.mode)" (= "dry") in [full, incremental] is false`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from jobflow_controller.apis.params import Operator, WhenExpression
from jobflow_controller.apis.substitution import expand

#: The Normal `Skipped` event's message for a flow skipped by `when` (the reason is docs/rules.md's).
#: Arguments: the flow, the input as written, its value, the operator, the values.
MESSAGE_SKIPPED_WHEN: Final = "flow %s skipped: when %s (= %s) %s [%s] is false"


@dataclass(frozen=True)
class WhenFalse:
    """The first expression of a flow that does not hold, with its input's expanded value."""

    expression: WhenExpression
    value: str

    def message_args(self, flow_name: str) -> tuple[str, str, str, str, str]:
        """The arguments of `MESSAGE_SKIPPED_WHEN` for `flow_name`."""
        expr = self.expression
        return (flow_name, _quote(expr.input), _quote(self.value), expr.operator, ", ".join(expr.values))

    def message(self, flow_name: str) -> str:
        return MESSAGE_SKIPPED_WHEN % self.message_args(flow_name)


def holds(expression: WhenExpression, value: str) -> bool:
    """Whether one expression holds for its input's expanded `value` (an unknown operator never does)."""
    if expression.operator == Operator.IN:
        return value in expression.values
    if expression.operator == Operator.NOT_IN:
        return value not in expression.values
    return False


def judge_when(expressions: Sequence[WhenExpression], variables: Mapping[str, str]) -> WhenFalse | None:
    """None when every expression holds (no expression: it holds), else the first that does not."""
    for expression in expressions:
        value = expand(expression.input, variables)
        if not holds(expression, value):
            return WhenFalse(expression, value)
    return None


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
