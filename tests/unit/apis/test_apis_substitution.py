"""`$(params.*)`, `$(matrix.*)` and `$(context.*)`: Kubernetes' `$(VAR)` rule, as tables (docs/params.md)."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobflow_controller.apis.substitution import context_variables, expand, expand_values, job_variables, references

VARS = {"params.mode": "full", "params.empty": "", "matrix.lr": "0.1", "context.flow.name": "train"}

EXPANSIONS: list[tuple[str, str, str]] = [
    # (id, input, output)
    ("no-reference", "python train.py", "python train.py"),
    ("one-param", "$(params.mode)", "full"),
    ("inside-text", "--mode=$(params.mode) --lr=$(matrix.lr)", "--mode=full --lr=0.1"),
    ("adjacent", "$(params.mode)$(matrix.lr)", "full0.1"),
    ("empty-value", "[$(params.empty)]", "[]"),
    ("unknown-param-left-as-is", "$(params.nope)", "$(params.nope)"),
    ("unknown-variable-left-as-is", "$(HOME)/data", "$(HOME)/data"),
    ("unknown-then-known", "$(HOME)-$(params.mode)", "$(HOME)-full"),
    ("escaped-reference", "$$(params.mode)", "$(params.mode)"),
    ("escaped-then-known", "$$(params.mode)=$(params.mode)", "$(params.mode)=full"),
    ("escaped-dollar-alone", "cost: $$5", "cost: $5"),
    ("triple-dollar", "$$$(params.mode)", "$full"),
    ("four-dollars", "$$$$(params.mode)", "$$(params.mode)"),
    ("dollar-before-other", "$HOME and $1", "$HOME and $1"),
    ("trailing-dollar", "price$", "price$"),
    ("unclosed-reference", "$(params.mode", "$(params.mode"),
    ("unclosed-then-known", "$(a $(params.mode)", "$(a $(params.mode)"),
    ("empty-name", "$()", "$()"),
    ("spaces-are-part-of-the-name", "$( params.mode )", "$( params.mode )"),
    ("one-pass-only", "$(params.self)", "$(params.mode)"),
    ("nested-parentheses-end-at-first-closer", "$(params.mode))", "full)"),
]


@pytest.mark.parametrize(("text", "expected"), [(t, e) for _, t, e in EXPANSIONS], ids=[i for i, _, _ in EXPANSIONS])
def test_expand_follows_kubernetes_rule(text: str, expected: str) -> None:
    assert expand(text, {**VARS, "params.self": "$(params.mode)"}) == expected


def test_map_keys_are_never_expanded_and_the_input_is_kept() -> None:
    value: dict[str, Any] = {
        "$(params.mode)": "$(params.mode)",
        "env": [{"name": "LR", "value": "$(matrix.lr)"}, {"name": "N", "value": 3}],
        "args": ["--lr", "$(matrix.lr)", True, None],
        "nested": {"$(matrix.lr)": {"x": "$$(matrix.lr)"}},
    }
    before = copy.deepcopy(value)
    assert expand_values(value, VARS) == {
        "$(params.mode)": "full",
        "env": [{"name": "LR", "value": "0.1"}, {"name": "N", "value": 3}],
        "args": ["--lr", "0.1", True, None],
        "nested": {"$(matrix.lr)": {"x": "$(matrix.lr)"}},
    }
    assert value == before


JOB_FLOW = {"metadata": {"name": "tune", "namespace": "ml", "uid": "1234-abcd"}}

CONTEXT: list[tuple[str, str]] = [
    ("$(context.jobflow.name)", "tune"),
    ("$(context.jobflow.namespace)", "ml"),
    ("$(context.jobflow.uid)", "1234-abcd"),
    ("$(context.flow.name)", "train"),
    ("$(context.matrix.index)", "4"),
    ("$(params.dataset)", "s3://b"),
    ("$(matrix.lr)", "0.01"),
    ("$(matrix.seed)", "2"),
]


@pytest.mark.parametrize(("text", "expected"), CONTEXT, ids=[t for t, _ in CONTEXT])
def test_every_variable_of_a_matrix_job(text: str, expected: str) -> None:
    variables = job_variables(JOB_FLOW, "train", [("dataset", "s3://b")], [("lr", "0.01"), ("seed", "2")], 4)
    assert expand(text, variables) == expected


def test_a_flow_without_matrix_has_no_matrix_index() -> None:
    variables = context_variables(JOB_FLOW, "prepare")
    assert expand("$(context.matrix.index)", variables) == "$(context.matrix.index)"
    assert expand("$(context.flow.name)", variables) == "prepare"


def test_a_job_has_its_spec_labels_and_annotations_expanded_and_nothing_else() -> None:
    from jobflow_controller.apis.substitution import expand_job

    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "metadata": {
            "name": "$(params.mode)",
            "labels": {"mode": "$(params.mode)"},
            "annotations": {"$(params.mode)": "lr=$(matrix.lr)"},
            "ownerReferences": [{"name": "$(params.mode)"}],
        },
        "spec": {"queue": "$(params.mode)"},
    }
    before = copy.deepcopy(job)
    assert expand_job(job, VARS) == {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "metadata": {
            "name": "$(params.mode)",
            "labels": {"mode": "full"},
            "annotations": {"$(params.mode)": "lr=0.1"},
            "ownerReferences": [{"name": "$(params.mode)"}],
        },
        "spec": {"queue": "full"},
    }
    assert job == before


def kubernetes_expand(text: str, variables: dict[str, str]) -> str:
    """The reference model: Kubernetes' expansion as its Go code reads, one `$` at a time (quadratic on
    unclosed `$(`, which is why the product does not use it)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = text.find(")", i + 2)
                if end != -1:
                    name = text[i + 2 : end]
                    out.append(variables.get(name, f"$({name})"))
                    i = end + 1
                    continue
            out.append(text[i : i + 2])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="$()ab.\n", max_size=40))
def test_expand_and_its_measure_agree_with_kubernetes_rule(text: str) -> None:
    variables = {"a": "X", "a.b": "YYY", "": "E", "b": "$(a)"}
    expected = kubernetes_expand(text, variables)
    assert expand(text, variables) == expected
    assert references(text).expanded_length(variables) == len(expected)


@pytest.mark.parametrize(
    "text",
    ["$(" * 500_000, "$(a)" * 250_000, "$$" * 500_000 + ")", "$)" * 500_000, "$(a" + "$$" * 500_000],
    ids=["unclosed", "references", "escapes-before-a-closer", "dollar-closer", "one-unclosed-then-escapes"],
)
def test_expansion_is_linear_on_a_megabyte(text: str) -> None:
    """An unclosed `$(` made the scan look for its closer again each time: 400 KB took 0.76 s, 1 MB
    about 5 s. Linear, a megabyte takes well under a second; the bound leaves room for a loaded machine."""
    started = time.process_time()
    expand(text, {"a": "x"})
    references(text)
    assert time.process_time() - started < 2.0
