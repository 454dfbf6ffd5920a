"""The lifecycle fields' values and the re-run request annotation (docs/lifecycle.md), as pure functions."""

from __future__ import annotations

import json

import pytest

from jobflow_controller.apis.lifecycle_fields import (
    RETRY_REQUEST_ANNOTATION,
    SHUTDOWN_VALUES,
    RetryRequest,
    read_retry_request,
    retry_request_value,
    shutdown_change_allowed,
)

FLOWS = {"prep", "train"}


def annotated(value: str) -> dict[str, object]:
    return {"metadata": {"annotations": {RETRY_REQUEST_ANNOTATION: value}}}


def test_the_shutdown_values_are_argos_with_the_empty_default() -> None:
    assert SHUTDOWN_VALUES == ("", "Stop", "Terminate")


@pytest.mark.parametrize(
    ("old", "new", "allowed"),
    [
        ("", "Stop", True),
        ("", "Terminate", True),
        ("Stop", "Terminate", True),
        ("Stop", "Stop", True),
        ("Stop", "", False),
        ("Terminate", "Stop", False),
        ("Terminate", "", False),
    ],
)
def test_shutdown_goes_one_way(old: str, new: str, allowed: bool) -> None:
    assert shutdown_change_allowed(old, new) is allowed


def test_a_request_value_is_compact_json_without_empty_flows() -> None:
    assert retry_request_value("r1") == '{"id":"r1"}'
    assert json.loads(retry_request_value("r2", ["train"])) == {"id": "r2", "flows": ["train"]}


def test_a_written_request_reads_back() -> None:
    assert read_retry_request(annotated(retry_request_value("r2", ["train", "prep"])), FLOWS) == RetryRequest(
        "r2", ("train", "prep")
    )
    assert read_retry_request(annotated('{"id": "r3", "flows": []}'), FLOWS) == RetryRequest("r3", ())


@pytest.mark.parametrize("value", ["nope", '{"flows": ["train"]}', '{"id": "r1", "flows": ["x"]}', '["r1"]'])
def test_a_malformed_request_reads_as_none(value: str) -> None:
    assert read_retry_request(annotated(value), FLOWS) is None


def test_no_annotation_is_no_request() -> None:
    assert read_retry_request({"metadata": {}}, FLOWS) is None
