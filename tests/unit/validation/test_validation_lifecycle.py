"""Admission of the lifecycle fields (docs/lifecycle.md#what-admission-says): one row per rule.

``lifecycle_problems(new, old=None)``: deadlines and TTL whole and not negative, ``suspend`` a boolean,
``shutdown`` one of "", Stop, Terminate and one way on UPDATE, and a well-formed
``flow.volcano.sh/retry-request`` naming only flows of the JobFlow. On UPDATE a rule applies only when
the UPDATE changes what it checks.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from jobflow_controller.validation.lifecycle import lifecycle_problems

REQUEST = "flow.volcano.sh/retry-request"


def job_flow(spec: dict[str, Any] | None = None, request: Any = None, **flow_fields: Any) -> dict[str, Any]:
    flows = [{"name": "prep"}, {"name": "train", "dependsOn": {"targets": ["prep"]}, **flow_fields}]
    obj: dict[str, Any] = {
        "metadata": {"name": "pipe", "namespace": "ml"},
        "spec": {"jobRetainPolicy": "retain", "flows": flows, **(spec or {})},
    }
    if request is not None:
        obj["metadata"]["annotations"] = {REQUEST: request if isinstance(request, str) else json.dumps(request)}
    return obj


ADMITTED: dict[str, dict[str, Any]] = {
    "none of the fields": job_flow(),
    "every field at its most": job_flow(
        {"suspend": True, "shutdown": "Terminate", "activeDeadlineSeconds": 7200, "ttlSecondsAfterFinished": 600},
        activeDeadlineSeconds=3600,
    ),
    "zero deadlines and TTL": job_flow(
        {"activeDeadlineSeconds": 0, "ttlSecondsAfterFinished": 0}, activeDeadlineSeconds=0
    ),
    "suspend false, shutdown empty": job_flow({"suspend": False, "shutdown": ""}),
    "nulls": job_flow({"suspend": None, "shutdown": None, "activeDeadlineSeconds": None}, activeDeadlineSeconds=None),
    "a request for every failed flow": job_flow(request={"id": "r1"}),
    "a request with an empty list": job_flow(request={"id": "r1", "flows": []}),
    "a request naming flows": job_flow(request={"id": "2026-01-01T00:00:00Z-x7k2q", "flows": ["train", "prep"]}),
}


@pytest.mark.parametrize("obj", ADMITTED.values(), ids=ADMITTED.keys())
def test_admitted_on_create(obj: dict[str, Any]) -> None:
    assert lifecycle_problems(obj) == []


W = f"annotation {REQUEST}"
REFUSED: dict[str, tuple[dict[str, Any], list[str]]] = {
    "a negative JobFlow deadline": (
        job_flow({"activeDeadlineSeconds": -1}),
        ["spec.activeDeadlineSeconds: must not be negative, got -1"],
    ),
    "a negative TTL": (
        job_flow({"ttlSecondsAfterFinished": -600}),
        ["spec.ttlSecondsAfterFinished: must not be negative, got -600"],
    ),
    "a deadline as a duration string": (
        job_flow({"activeDeadlineSeconds": "2h"}),
        ['spec.activeDeadlineSeconds: must be a whole number of seconds, got "2h"'],
    ),
    "a fractional TTL": (
        job_flow({"ttlSecondsAfterFinished": 1.5}),
        ["spec.ttlSecondsAfterFinished: must be a whole number of seconds, got 1.5"],
    ),
    "a boolean deadline": (
        job_flow({"activeDeadlineSeconds": True}),
        ["spec.activeDeadlineSeconds: must be a whole number of seconds, got true"],
    ),
    "a negative flow deadline": (
        job_flow(activeDeadlineSeconds=-5),
        ['jobflow Flow "train": activeDeadlineSeconds: must not be negative, got -5'],
    ),
    "a flow deadline as a string": (
        job_flow(activeDeadlineSeconds="1h"),
        ['jobflow Flow "train": activeDeadlineSeconds: must be a whole number of seconds, got "1h"'],
    ),
    "suspend as a string": (job_flow({"suspend": "yes"}), ['spec.suspend: must be true or false, got "yes"']),
    "suspend as a number": (job_flow({"suspend": 1}), ["spec.suspend: must be true or false, got 1"]),
    "an unknown shutdown": (
        job_flow({"shutdown": "Pause"}),
        ['spec.shutdown: must be "", Stop or Terminate, got "Pause"'],
    ),
    "a shutdown in lower case": (
        job_flow({"shutdown": "stop"}),
        ['spec.shutdown: must be "", Stop or Terminate, got "stop"'],
    ),
    "a shutdown that is not a string": (
        job_flow({"shutdown": 1}),
        ['spec.shutdown: must be "", Stop or Terminate, got 1'],
    ),
    "a request that is not JSON": (
        job_flow(request="retry please"),
        [f"{W}: not valid JSON: Expecting value: line 1 column 1 (char 0)"],
    ),
    "a request that is a list": (
        job_flow(request=["train"]),
        [f'{W}: must be a JSON object such as {{"id": "r1", "flows": ["train"]}}, got ["train"]'],
    ),
    "a request without an id": (
        job_flow(request={"flows": ["train"]}),
        [f"{W}.id: required, a non-empty string that differs from the last request's"],
    ),
    "a request with an empty id": (job_flow(request={"id": ""}), [f'{W}.id: must be a non-empty string, got ""']),
    "a request with a numeric id": (job_flow(request={"id": 7}), [f"{W}.id: must be a non-empty string, got 7"]),
    "a request whose flows are a string": (
        job_flow(request={"id": "r1", "flows": "train"}),
        [f'{W}.flows: must be a list of flow names, got "train"'],
    ),
    "a request whose flows hold a number": (
        job_flow(request={"id": "r1", "flows": ["train", 3]}),
        [f"{W}.flows[1]: must be a flow name, got 3"],
    ),
    "a request naming an unknown flow": (
        job_flow(request={"id": "r1", "flows": ["prep", "tarin"]}),
        [f'{W}.flows[1]: no flow of this JobFlow is named "tarin"'],
    ),
    "a request with an unknown field": (
        job_flow(request={"id": "r1", "flow": ["train"]}),
        [f'{W}: unknown field "flow" (known: id, flows)'],
    ),
    "every problem, in order": (
        job_flow(
            {"activeDeadlineSeconds": -1, "ttlSecondsAfterFinished": -2, "suspend": "no", "shutdown": "Halt"},
            request={"flows": ["x"]},
            activeDeadlineSeconds=-3,
        ),
        [
            "spec.activeDeadlineSeconds: must not be negative, got -1",
            "spec.ttlSecondsAfterFinished: must not be negative, got -2",
            'jobflow Flow "train": activeDeadlineSeconds: must not be negative, got -3',
            'spec.suspend: must be true or false, got "no"',
            'spec.shutdown: must be "", Stop or Terminate, got "Halt"',
            f"{W}.id: required, a non-empty string that differs from the last request's",
            f'{W}.flows[0]: no flow of this JobFlow is named "x"',
        ],
    ),
}


@pytest.mark.parametrize(("obj", "problems"), REFUSED.values(), ids=REFUSED.keys())
def test_refused_on_create_with_precise_messages(obj: dict[str, Any], problems: list[str]) -> None:
    assert lifecycle_problems(obj) == problems


ONE_WAY = 'it may only go from "" to Stop or Terminate, or from Stop to Terminate'
# (old shutdown, new shutdown) -> the problem; None: allowed. Absent is "".
TRANSITIONS: list[tuple[str | None, str | None, str | None]] = [
    (None, "Stop", None),
    (None, "Terminate", None),
    ("", "Stop", None),
    ("", "Terminate", None),
    ("Stop", "Terminate", None),
    ("Stop", "Stop", None),
    ("Terminate", "Terminate", None),
    (None, "", None),
    ("", None, None),
    ("Stop", "", f'spec.shutdown: cannot change from "Stop" to "": {ONE_WAY}'),
    ("Stop", None, f'spec.shutdown: cannot change from "Stop" to "": {ONE_WAY}'),
    ("Terminate", "", f'spec.shutdown: cannot change from "Terminate" to "": {ONE_WAY}'),
    ("Terminate", "Stop", f'spec.shutdown: cannot change from "Terminate" to "Stop": {ONE_WAY}'),
    ("Terminate", None, f'spec.shutdown: cannot change from "Terminate" to "": {ONE_WAY}'),
]


def with_shutdown(value: str | None) -> dict[str, Any]:
    return job_flow({} if value is None else {"shutdown": value})


@pytest.mark.parametrize(("old", "new", "problem"), TRANSITIONS)
def test_shutdown_is_one_way_on_update(old: str | None, new: str | None, problem: str | None) -> None:
    assert lifecycle_problems(with_shutdown(new), with_shutdown(old)) == ([problem] if problem else [])


def test_an_update_that_leaves_stored_bad_values_alone_is_allowed() -> None:
    stored = job_flow(
        {"activeDeadlineSeconds": -1, "suspend": "yes", "shutdown": "Pause"},
        request="not json",
        activeDeadlineSeconds=-2,
    )
    labelled = copy.deepcopy(stored)
    labelled["metadata"]["labels"] = {"team": "ml"}
    assert lifecycle_problems(labelled, stored) == []


def test_an_update_is_held_to_the_rules_for_what_it_changes() -> None:
    stored = job_flow({"activeDeadlineSeconds": -1}, activeDeadlineSeconds=-2)
    changed = job_flow({"activeDeadlineSeconds": -1, "ttlSecondsAfterFinished": -3}, activeDeadlineSeconds=-4)
    assert lifecycle_problems(changed, stored) == [
        "spec.ttlSecondsAfterFinished: must not be negative, got -3",
        'jobflow Flow "train": activeDeadlineSeconds: must not be negative, got -4',
    ]


def test_a_new_request_is_checked_on_update_an_unchanged_one_is_not() -> None:
    stored = job_flow(request={"id": "r1", "flows": ["gone"]})
    assert lifecycle_problems(copy.deepcopy(stored), stored) == []
    renewed = job_flow(request={"id": "r2", "flows": ["gone"]})
    assert lifecycle_problems(renewed, stored) == [f'{W}.flows[0]: no flow of this JobFlow is named "gone"']


def test_a_stored_unknown_shutdown_may_still_be_set_to_a_known_value() -> None:
    assert lifecycle_problems(with_shutdown("Terminate"), with_shutdown("Pause")) == []
