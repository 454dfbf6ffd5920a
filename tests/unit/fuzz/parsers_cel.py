"""CEL readers (docs/results.md, apis/cel_expression.py), for the fuzzer: our static limits, the
library's compiler, an evaluation with variables at the limits, the variables' check, the controller's
`when` judge and the admission rule. Each raises only `CelError` (a ValueError) or nothing, within
its bound: the limits make the worst evaluation a few hundred milliseconds."""

from __future__ import annotations

from typing import Any

from registry import Parser, as_text

from jobflow_controller.apis import cel_expression
from jobflow_controller.jobflow import when_cel
from jobflow_controller.validation.when_cel import cel_item_problems

#: Variables near the limits: 60 params of 1 KiB, a matrix flow's 256 values, a context.
FLAT = {
    **{f"params.p{i}": "v" * 1024 for i in range(60)},
    "flows.m.results.r[*]": '["' + '", "'.join(["x" * 100] * 256) + '"]',
    "flows.t.results.acc": "0.93",
    "context.jobflow.name": "jf",
}
VARIABLES = when_cel.cel_variables(FLAT)
# The library is imported on the first compile (~0.15 s, more on a busy machine): not a call's cost.
cel_expression.compile_cel("true")


def _evaluate(value: Any) -> object:
    return cel_expression.evaluate_cel(cel_expression.compile_cel(as_text(value)), VARIABLES)


def _check_input(value: Any) -> object:
    cel_expression.check_input({"body": value})
    return None


PARSERS: list[Parser] = [
    Parser(
        "jobflow_controller.apis.cel_expression.compile_cel",
        lambda v: cel_expression.compile_cel(as_text(v)),
        "text",
        (cel_expression.CelError,),
    ),
    Parser(
        "jobflow_controller.apis.cel_expression.check_shape",
        lambda v: cel_expression.check_shape(as_text(v)),
        "text",
        (cel_expression.CelError,),
    ),
    Parser("jobflow_controller.apis.cel_expression.evaluate_cel", _evaluate, "text", (cel_expression.CelError,)),
    Parser("jobflow_controller.apis.cel_expression.check_input", _check_input, "json", (cel_expression.CelError,)),
    Parser(
        "jobflow_controller.jobflow.when_cel.judge_cel", lambda v: when_cel.judge_cel(0, as_text(v), FLAT), "text", ()
    ),
    Parser("jobflow_controller.jobflow.when_cel._array", lambda v: when_cel._array(as_text(v)), "text", ()),
    Parser(
        "jobflow_controller.jobflow.when_cel.cel_variables",
        lambda v: when_cel.cel_variables({str(k): as_text(x) for k, x in v.items()} if isinstance(v, dict) else {}),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.validation.when_cel.cel_item_problems",
        lambda v: cel_item_problems("w", v if isinstance(v, dict) else {"cel": v}),
        "json",
        (),
    ),
]
