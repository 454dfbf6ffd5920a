"""A `when` item's `cel` (docs/results.md), one behaviour each: its variables, true runs the flow, false
skips it as a false `input` item does, an error or a non-bool fails it with one `InvalidWhen` Warning."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from test_jobflow_results import created, plan, world

from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.input_warnings import InputWarnings
from jobflow_controller.jobflow.when_cel import (
    MESSAGE_INVALID_WHEN,
    REASON_INVALID_WHEN,
    WhenCelFalse,
    WhenInvalid,
    cel_variables,
    judge_cel,
)
from jobflow_controller.jobflow.world import JobFlowSpec, SyncPlan, WarningEvent

TRAINED = {"jobStatusList": [{"name": "f-train", "state": "Completed", "results": {"acc": "0.93"}}]}


def flows(cel: str, **publish: Any) -> list[dict[str, Any]]:
    return [
        {"name": "train", "results": {"names": ["acc"]}},
        {"name": "publish", "dependsOn": {"targets": ["train"]}, "when": [{"cel": cel}], **publish},
        {"name": "after", "dependsOn": {"targets": ["publish"]}},
    ]


def sync(cel: str, **spec: Any) -> SyncPlan:
    return plan(world({}, status=TRAINED, flows=flows(cel, **spec)))


def test_the_variables_are_three_maps_of_strings_and_a_matrix_flows_list() -> None:
    flat = {
        "params.mode": "full",
        "context.jobflow.name": "jf",
        "flows.train.results.acc": "0.9",
        "flows.a.b.results.acc": "1",
        "flows.sweep.results.loss[*]": '["0.5", "0.7"]',
        "matrix.x": "ignored",
    }
    assert cel_variables(flat) == {
        "params": {"mode": "full"},
        "context": {"jobflow.name": "jf"},
        "flows": {
            "train": {"results": {"acc": "0.9"}},
            "a.b": {"results": {"acc": "1"}},
            "sweep": {"results": {"loss": ["0.5", "0.7"]}},
        },
    }


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("double(flows['train'].results['acc']) >= 0.9", None),
        (
            "double(flows['train'].results['acc']) >= 0.95",
            WhenCelFalse("double(flows['train'].results['acc']) >= 0.95"),
        ),
        ("params['mode'] == 'full' && context['jobflow.name'] == 'jf'", None),
        (
            "flows['train'].results['nope'] == ''",
            WhenInvalid(0, "flows['train'].results['nope'] == ''", "no such key: 'nope'"),
        ),
        (
            "flows['train'].results['acc']",
            WhenInvalid(0, "flows['train'].results['acc']", "must return a bool, returned str"),
        ),
        ("int(flows['train'].results['acc']) > 0", "Function 'int' error"),
        ("flows['train'].results['acc'] ==", "Syntax error"),
    ],
)
def test_each_verdict_of_a_cel_item(text: str, verdict: object) -> None:
    variables = {"params.mode": "full", "context.jobflow.name": "jf", "flows.train.results.acc": "0.93"}
    found = judge_cel(0, text, variables)
    if isinstance(verdict, str):
        assert isinstance(found, WhenInvalid) and verdict in found.error
    else:
        assert found == verdict


def test_a_true_cel_reading_a_result_runs_the_flow() -> None:
    assert created(sync("double(flows['train'].results['acc']) >= 0.9")) == ["publish"]


def test_a_false_cel_skips_the_flow_and_its_dependent_quoting_the_expression() -> None:
    p = sync("double(flows['train'].results['acc']) > 0.99")
    assert created(p) == []
    assert p.status is not None and p.status.skipped_jobs == ["f-publish", "f-after"]
    assert (p.notices[0].reason, p.notices[0].message_fmt % p.notices[0].args) == (
        c.REASON_SKIPPED,
        "flow publish skipped: when cel \"double(flows['train'].results['acc']) > 0.99\" is false",
    )
    assert p.once_warnings == []


def test_a_skipped_message_quotes_at_most_200_characters_of_the_expression() -> None:
    text = "false || " * 30 + "false"
    p = sync(text)
    message = p.notices[0].message_fmt % p.notices[0].args
    assert f"... ({len(text)} characters) is false" in message and len(message) < 300


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("flows['train'].results['nope'] == ''", "no such key: 'nope'"),
        ("flows['train'].results['acc']", "must return a bool, returned str"),
    ],
)
def test_a_cel_that_cannot_be_judged_fails_the_flow_with_one_invalid_when(text: str, error: str) -> None:
    p = sync(text)
    assert created(p) == []
    assert p.status is not None and p.status.phase == "Failed"  # FailFast: an unhandled failure
    assert p.status.skipped_jobs == ["f-after"]  # AllCompleted can no longer be met
    ((cause, warning),) = p.once_warnings
    assert (cause, warning.reason, warning.message_fmt) == ("publish/0", REASON_INVALID_WHEN, MESSAGE_INVALID_WHEN)
    assert warning.message_fmt % warning.args == (
        f"Flow publish, when[0].cel {json.dumps(text)}: {error}; the flow counts as Failed"
    )


def test_a_failed_cel_flow_is_handled_as_a_failed_flow_by_run_to_completion_and_rules() -> None:
    cel_flows = flows("flows['train'].results['nope'] == ''")
    cel_flows.append({"name": "cleanup", "dependsOn": {"targets": ["publish"], "rule": "AnyFailed"}})
    w = world({}, status=TRAINED, flows=cel_flows)
    w.job_flow["spec"]["failurePolicy"] = "RunToCompletion"
    p = plan(replace(w, spec=JobFlowSpec.of(w.job_flow)))
    assert created(p) == ["cleanup"]


def test_the_warning_is_given_once_per_cause_and_generation() -> None:
    events: list[str] = []

    class Recorder:
        def eventf(self, obj: Any, kind: str, reason: str, fmt: str, *args: Any) -> None:
            events.append(fmt % args)

    warnings = InputWarnings(Recorder())
    job_flow: dict[str, Any] = {"metadata": {"name": "f", "namespace": "ns", "uid": "u", "generation": 1}}
    for cause in ("publish/0", "publish/0", "other/1", "publish/0"):
        warnings.warn(job_flow, WarningEvent(REASON_INVALID_WHEN, "%s", (cause,)), cause)
    assert events == ["publish/0", "other/1"]
    job_flow["metadata"]["generation"] = 2
    warnings.warn(job_flow, WarningEvent(REASON_INVALID_WHEN, "%s", ("publish/0",)), "publish/0")
    assert events == ["publish/0", "other/1", "publish/0"]


def test_a_verdict_is_evaluated_once_for_the_same_expression_and_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from jobflow_controller.jobflow import when_cel

    calls: list[str] = []
    real = when_cel.evaluate_cel

    def counting(compiled: Any, variables: Any) -> object:
        calls.append(compiled.text)
        return real(compiled, variables)

    monkeypatch.setattr(when_cel, "evaluate_cel", counting)
    text = "params['mode'] == 'once'"
    for _ in range(3):
        assert judge_cel(0, text, {"params.mode": "once"}) is None
    assert isinstance(judge_cel(0, text, {"params.mode": "twice"}), WhenCelFalse)
    assert calls == [text, text]
