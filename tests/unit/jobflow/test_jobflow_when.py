"""A flow's `when` expressions: which hold, and the exact Skipped message naming the one that failed."""

from __future__ import annotations

import pytest

from jobflow_controller.apis.params import WhenExpression, when_expressions
from jobflow_controller.jobflow.when import judge_when

VARS = {"params.mode": "dry", "params.region": "eu", "context.flow.name": "prepare"}


def expr(input: str, operator: str, *values: str) -> WhenExpression:
    return WhenExpression(input, operator, values)


WHEN: list[tuple[str, list[WhenExpression], str | None]] = [
    # (id, expressions, message when skipped or None when every expression holds)
    ("no-expression-holds", [], None),
    ("in-holds", [expr("$(params.mode)", "in", "dry", "full")], None),
    (
        "in-fails",
        [expr("$(params.mode)", "in", "full", "incremental")],
        'flow prepare skipped: when "$(params.mode)" (= "dry") in [full, incremental] is false',
    ),
    ("notin-holds", [expr("$(params.mode)", "notin", "full")], None),
    (
        "notin-fails",
        [expr("$(params.mode)", "notin", "dry")],
        'flow prepare skipped: when "$(params.mode)" (= "dry") notin [dry] is false',
    ),
    ("literal-input", [expr("yes", "in", "yes")], None),
    ("context-input", [expr("$(context.flow.name)", "in", "prepare")], None),
    (
        "unknown-reference-stays-as-written",
        [expr("$(params.nope)", "in", "x")],
        'flow prepare skipped: when "$(params.nope)" (= "$(params.nope)") in [x] is false',
    ),
    (
        "escaped-input",
        [expr("$$(params.mode)", "in", "dry")],
        'flow prepare skipped: when "$$(params.mode)" (= "$(params.mode)") in [dry] is false',
    ),
    ("all-hold", [expr("$(params.mode)", "in", "dry"), expr("$(params.region)", "notin", "us")], None),
    (
        "first-failing-is-named",
        [
            expr("$(params.mode)", "in", "dry"),
            expr("$(params.region)", "in", "us", "apac"),
            expr("$(params.mode)", "in", "full"),
        ],
        'flow prepare skipped: when "$(params.region)" (= "eu") in [us, apac] is false',
    ),
    (
        "empty-value-quoted",
        [expr("", "in", "x")],
        'flow prepare skipped: when "" (= "") in [x] is false',
    ),
    (
        "unknown-operator-never-holds",
        [expr("a", "In", "a")],
        'flow prepare skipped: when "a" (= "a") In [a] is false',
    ),
]


@pytest.mark.parametrize(("expressions", "message"), [(e, m) for _, e, m in WHEN], ids=[i for i, _, _ in WHEN])
def test_when(expressions: list[WhenExpression], message: str | None) -> None:
    verdict = judge_when(expressions, VARS)
    assert (None if verdict is None else verdict.message("prepare")) == message


def test_when_expressions_read_from_the_spec() -> None:
    raw = [{"input": "$(params.mode)", "operator": "in", "values": ["full", "incremental"]}]
    assert when_expressions(raw) == (WhenExpression("$(params.mode)", "in", ("full", "incremental")),)
    assert when_expressions(None) == ()


def test_a_skipped_message_quotes_at_most_200_characters_of_each_part_and_marks_the_cut() -> None:
    """A 1,000,000-character value read by 200 `when` conditions stored ten 1 MB Events before."""
    value = "v" * 1_000_000
    verdict = judge_when([WhenExpression("$(params.big)", "in", ("x",) * 500)], {"params.big": value})
    assert verdict is not None
    message = verdict.message("f")
    assert len(message) < 1000
    assert f'"{"v" * 200}"... (1000000 characters)' in message
    assert message.endswith(" characters)] is false")
