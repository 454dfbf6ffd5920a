"""Issue 22: admission of the failure-aware fields (docs/rules.md), as the webhook and the controller see them.

Every refused value has its own message naming the field and what it may hold; a JobFlow that sets
none of the fields is judged exactly as before; an UPDATE ratchets as for ``spec.flows``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobflow_controller.validation import (
    FAILURE_POLICIES,
    MAX_FINALLY,
    RULES,
    flows_changed,
    validate_job_flow,
    validate_job_flow_update,
    validation_message,
)

ALLOWED_RULES = "AllCompleted, AnyCompleted, AllFailed, AnyFailed, AllDone, NoneFailed"


def flow(name: str, *targets: str, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, **fields}
    if targets:
        out["dependsOn"] = {"targets": list(targets)}
    return out


def ruled(name: str, rule: Any, *targets: str, **depends_on: Any) -> dict[str, Any]:
    """A flow with ``dependsOn.rule`` (and ``targets`` when given)."""
    spec: dict[str, Any] = {"rule": rule, **depends_on}
    if targets:
        spec["targets"] = list(targets)
    return {"name": name, "dependsOn": spec}


def job_flow(*flows: dict[str, Any], name: str = "jf", namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"jobRetainPolicy": "retain", "flows": list(flows), **spec},
    }


def test_the_values_are_the_apis() -> None:
    assert RULES == ("AllCompleted", "AnyCompleted", "AllFailed", "AnyFailed", "AllDone", "NoneFailed")
    assert FAILURE_POLICIES == ("FailFast", "RunToCompletion")
    assert MAX_FINALLY == 100


# --- admitted ---------------------------------------------------------------------------------------

ADMITTED: dict[str, dict[str, Any]] = {
    **{
        f"rule {rule}": job_flow(flow("a"), flow("b"), ruled("c", rule, "a", "b"))
        for rule in ("AllCompleted", "AnyCompleted", "AllFailed", "AnyFailed", "AllDone", "NoneFailed")
    },
    "rule null, as if absent": job_flow(flow("a"), ruled("b", None, "a")),
    "continueOnFailure true": job_flow(flow("a", continueOnFailure=True), flow("b", "a")),
    "continueOnFailure false": job_flow(flow("a", continueOnFailure=False)),
    "failurePolicy FailFast": job_flow(flow("a"), failurePolicy="FailFast"),
    "failurePolicy RunToCompletion": job_flow(flow("a"), failurePolicy="RunToCompletion"),
    "a probe with the rule AllCompleted": job_flow(
        flow("a"), ruled("b", "AllCompleted", "a", probe={"tcpSocketList": [{"taskName": "t", "port": 22}]})
    ),
    "finally entries with and without a patch": job_flow(
        flow("a"),
        **{"finally": [{"name": "notify"}, {"name": "cleanup", "patch": {"jobSpec": {"tasks": [{"name": "t"}]}}}]},
    ),
    "finally empty": job_flow(flow("a"), **{"finally": []}),
    f"{MAX_FINALLY} finally entries": job_flow(
        flow("a"), **{"finally": [{"name": f"n{i}"} for i in range(MAX_FINALLY)]}
    ),
    "every field together": job_flow(
        flow("train", continueOnFailure=True),
        ruled("alert", "AnyFailed", "train"),
        failurePolicy="RunToCompletion",
        **{"finally": [{"name": "notify"}]},
    ),
}


@pytest.mark.parametrize("obj", list(ADMITTED.values()), ids=list(ADMITTED))
def test_admitted(obj: dict[str, Any]) -> None:
    assert validate_job_flow(obj) == []


# --- refused, one message each ----------------------------------------------------------------------

REFUSED: dict[str, tuple[dict[str, Any], list[str]]] = {
    "an unknown rule": (
        job_flow(flow("a"), ruled("b", "OnFailure", "a")),
        [f'jobflow Flow "b": dependsOn.rule: must be one of {ALLOWED_RULES}, got "OnFailure"'],
    ),
    "a rule in the wrong case": (
        job_flow(flow("a"), ruled("b", "anyFailed", "a")),
        [f'jobflow Flow "b": dependsOn.rule: must be one of {ALLOWED_RULES}, got "anyFailed"'],
    ),
    "a rule that is not a string": (
        job_flow(flow("a"), ruled("b", 3, "a")),
        [f'jobflow Flow "b": dependsOn.rule: must be one of {ALLOWED_RULES}, got 3'],
    ),
    "a rule without targets": (
        job_flow(ruled("b", "AnyFailed")),
        [
            'jobflow Flow "b": dependsOn.rule: "AnyFailed" needs dependsOn.targets'
            " (a rule decides over the targets' outcomes; this flow has none)"
        ],
    ),
    "the default rule spelled out without targets": (
        job_flow(ruled("b", "AllCompleted")),
        [
            'jobflow Flow "b": dependsOn.rule: "AllCompleted" needs dependsOn.targets'
            " (a rule decides over the targets' outcomes; this flow has none)"
        ],
    ),
    "a rule with empty targets": (
        job_flow({"name": "b", "dependsOn": {"targets": [], "rule": "AllDone"}}),
        [
            'jobflow Flow "b": dependsOn.rule: "AllDone" needs dependsOn.targets'
            " (a rule decides over the targets' outcomes; this flow has none)"
        ],
    ),
    "an unknown rule without targets": (
        job_flow(ruled("b", "Sometimes")),
        [
            f'jobflow Flow "b": dependsOn.rule: must be one of {ALLOWED_RULES}, got "Sometimes"',
            'jobflow Flow "b": dependsOn.rule: "Sometimes" needs dependsOn.targets'
            " (a rule decides over the targets' outcomes; this flow has none)",
        ],
    ),
    "a probe with another rule": (
        job_flow(flow("a"), ruled("b", "AnyFailed", "a", probe={"tcpSocketList": [{"taskName": "t", "port": 22}]})),
        [
            'jobflow Flow "b": dependsOn.probe: only allowed with the rule AllCompleted, not "AnyFailed"'
            " (a probe checks the targets' running Jobs, which only that rule waits for)"
        ],
    ),
    "continueOnFailure a string": (
        job_flow(flow("a", continueOnFailure="yes")),
        ['jobflow Flow "a": continueOnFailure: must be true or false, got "yes"'],
    ),
    "continueOnFailure a number": (
        job_flow(flow("a", continueOnFailure=1)),
        ['jobflow Flow "a": continueOnFailure: must be true or false, got 1'],
    ),
    "an unknown failurePolicy": (
        job_flow(flow("a"), failurePolicy="ContinueOnError"),
        ['jobflow failurePolicy: must be one of FailFast, RunToCompletion, got "ContinueOnError"'],
    ),
    "finally an object": (
        job_flow(flow("a"), **{"finally": {"name": "notify"}}),
        ['jobflow finally: must be a list of {name, patch} entries, got {"name": "notify"}'],
    ),
    "finally too long": (
        job_flow(flow("a"), **{"finally": [{"name": f"n{i}"} for i in range(MAX_FINALLY + 1)]}),
        [f"jobflow has {MAX_FINALLY + 1} finally entries, more than the {MAX_FINALLY} allowed"],
    ),
    "a finally entry that is a string": (
        job_flow(flow("a"), **{"finally": ["notify"]}),
        ['jobflow finally[0]: must be an object with a name, got "notify"'],
    ),
    "a finally entry without a name": (
        job_flow(flow("a"), **{"finally": [{"name": "notify"}, {"patch": {}}]}),
        ["jobflow finally[1]: has no name (the JobTemplate it runs)"],
    ),
    "a finally entry with an empty name": (
        job_flow(flow("a"), **{"finally": [{"name": ""}]}),
        ["jobflow finally[0]: has no name (the JobTemplate it runs)"],
    ),
    "a finally name that is a number": (
        job_flow(flow("a"), **{"finally": [{"name": 7}]}),
        ["jobflow finally[0].name: must be a string, got 7"],
    ),
    "a finally name that repeats a flow": (
        job_flow(flow("train"), **{"finally": [{"name": "train"}]}),
        ['jobflow Finally "train": repeats the name of a flow (both would be the Job "jf-train")'],
    ),
    "a finally name that repeats another finally": (
        job_flow(flow("a"), **{"finally": [{"name": "notify"}, {"name": "notify"}, {"name": "notify"}]}),
        ['jobflow Finally names must be unique: "notify"', 'jobflow Finally names must be unique: "notify"'],
    ),
    "a finally name that is not a valid Job name": (
        job_flow(flow("a"), **{"finally": [{"name": "Notify"}]}),
        [
            'jobflow Finally "Notify": Job name "jf-Notify" must be a lowercase RFC 1123 subdomain: lowercase'
            " letters, digits, '-' and '.', with every '.'-separated part starting and ending with a letter or digit"
        ],
    ),
    "a finally name whose Job name is too long": (
        job_flow(flow("a"), namespace="n", **{"finally": [{"name": "n" * 61}]}),
        [f'jobflow Finally "{"n" * 61}": Job name "jf-{"n" * 61}" is 64 characters long, it must be at most 63'],
    ),
    "a finally name that is no JobTemplate name": (
        job_flow(flow("a"), **{"finally": [{"name": "-notify"}]}),
        [
            'jobflow Finally "-notify": JobTemplate name "-notify" must be a lowercase RFC 1123 subdomain:'
            " lowercase letters, digits, '-' and '.', with every '.'-separated part starting and ending with a"
            " letter or digit"
        ],
    ),
    "a finally name whose label value is too long": (
        job_flow(flow("a"), namespace="n" * 40, **{"finally": [{"name": "x" * 30}]}),
        [
            f'jobflow Finally "{"x" * 30}": label value "{"n" * 40}.{"x" * 30}" for volcano.sh/createdByJobTemplate'
            " is 71 characters long, it must be at most 63"
        ],
    ),
    "a finally patch task without a name": (
        job_flow(flow("a"), **{"finally": [{"name": "notify", "patch": {"jobSpec": {"tasks": [{"replicas": 2}]}}}]}),
        [
            'jobflow Finally "notify": patch.jobSpec.tasks[0]: has no name'
            " (patch entries are matched to the template's by name)"
        ],
    ),
}


@pytest.mark.parametrize(("obj", "problems"), list(REFUSED.values()), ids=list(REFUSED))
def test_refused_with_its_message(obj: dict[str, Any], problems: list[str]) -> None:
    assert validate_job_flow(obj) == problems
    assert validation_message(obj) == "; ".join(problems)


def test_the_controller_leaves_a_finally_patch_to_its_own_check_as_a_flows() -> None:
    # patches=False (the controller): a bad patch stops only its own Job there, not the JobFlow.
    obj = job_flow(flow("a"), **{"finally": [{"name": "notify", "patch": {"jobSpec": {"tasks": [{}]}}}]})
    assert validate_job_flow(obj, patches=False) == []
    assert validate_job_flow(obj) != []


def test_the_controller_refuses_an_unknown_rule_as_admission_does() -> None:
    obj = job_flow(flow("a"), ruled("b", "Whenever", "a"))
    assert validate_job_flow(obj, patches=False, retries=False) == validate_job_flow(obj)


def test_the_new_problems_come_after_the_dag_and_name_problems() -> None:
    obj = job_flow(flow("a"), flow("a"), ruled("b", "Whenever", "a"), failurePolicy="Never")
    assert validate_job_flow(obj) == [
        'jobflow Flow names must be unique: "a"',
        f'jobflow Flow "b": dependsOn.rule: must be one of {ALLOWED_RULES}, got "Whenever"',
        'jobflow failurePolicy: must be one of FailFast, RunToCompletion, got "Never"',
    ]


def test_a_long_value_is_cut_short_in_the_message() -> None:
    (problem,) = validate_job_flow(job_flow(flow("a"), failurePolicy="x" * 200))
    assert problem == f'jobflow failurePolicy: must be one of FailFast, RunToCompletion, got "{"x" * 76}...'


# --- the UPDATE ratchet -----------------------------------------------------------------------------


def stored_without_the_webhook() -> dict[str, Any]:
    """A JobFlow with a bad finally name, as stored while the webhook was off."""
    return job_flow(flow("train"), **{"finally": [{"name": "train"}]})


def test_an_update_leaving_the_spec_alone_is_not_refused_for_the_new_rules() -> None:
    old = stored_without_the_webhook()
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"team": "ml"}
    assert not flows_changed(new, old)
    assert validate_job_flow_update(new, old) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [("finally", [{"name": "train"}, {"name": "notify"}]), ("failurePolicy", "RunToCompletion")],
)
def test_an_update_of_finally_or_the_policy_is_checked_in_full(field: str, value: Any) -> None:
    old = stored_without_the_webhook()
    new = copy.deepcopy(old)
    new["spec"][field] = value
    assert flows_changed(new, old)
    assert validate_job_flow_update(new, old) == [
        'jobflow Finally "train": repeats the name of a flow (both would be the Job "jf-train")'
    ]


def test_an_update_adding_a_flow_named_as_a_finally_entry_is_refused() -> None:
    old = job_flow(flow("a"), **{"finally": [{"name": "notify"}]})
    new = job_flow(flow("a"), flow("notify", "a"), **{"finally": [{"name": "notify"}]})
    assert validate_job_flow_update(new, old) == [
        'jobflow Finally "notify": repeats the name of a flow (both would be the Job "jf-notify")'
    ]


@pytest.mark.parametrize("empty", [None, []])
def test_an_absent_null_or_empty_finally_is_no_change(empty: Any) -> None:
    old = job_flow(flow("a"))
    new = job_flow(flow("a"), **{"finally": empty})
    assert not flows_changed(new, old)
