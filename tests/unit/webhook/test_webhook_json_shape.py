"""Bad JSON of any shape gets a 400 and a reason, never a crash: the decoder's side of the limits.

``json_shape_problem`` measures a text before ``json.loads`` sees it (values and depth); the
wrong-typed reviews below are what a client that is not the API server can send, since no CRD schema
stands between it and the webhook.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from webhook_support import flow, job_flow, review

from jobflow_controller.webhook import admission
from jobflow_controller.webhook.admission import ReviewError, decode_review, review_response
from jobflow_controller.webhook.jsonshape import json_shape_problem


def shape(text: str, max_values: int = 10, max_depth: int = 3) -> str | None:
    return json_shape_problem(text, max_values=max_values, max_depth=max_depth)


@pytest.mark.parametrize("text", ['{"a": [1, 2, {"b": null}]}', "[]", "1", '""', "", "[[[1]]]"])
def test_text_within_the_limits_passes(text: str) -> None:
    assert shape(text) is None


def test_depth_is_the_deepest_point_not_the_total() -> None:
    assert shape("[[[1]],[[2]],[[3]]]") is None
    assert shape("[[[[1]]]]") == "the JSON is nested 4 levels deep, more than 3"


def test_unclosed_brackets_count_as_depth() -> None:
    assert shape("[[[[") == "the JSON is nested 4 levels deep, more than 3"


def test_values_are_elements_members_and_containers() -> None:
    assert shape("[1,2,3,4,5,6,7,8,9,10]") is None  # one array, nine commas
    assert shape("[1,2,3,4,5,6,7,8,9,10,11]") == "the JSON has more than 10 values"
    assert shape('{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}') == "the JSON has more than 10 values"


@pytest.mark.parametrize("text", ['"[[[[,,,,::::{{{{"', '["\\"[[[[[[[[", 1]', '"\\\\" '])
def test_brackets_and_commas_inside_strings_are_not_structure(text: str) -> None:
    assert shape(text) is None


def test_non_ascii_outside_strings_is_left_to_the_decoder() -> None:
    assert shape("[ü, 1]") is None


def test_recursion_past_the_depth_check_is_still_a_bad_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission, "MAX_JSON_DEPTH", 10**9)
    monkeypatch.setattr(admission, "MAX_JSON_VALUES", 10**9)
    with pytest.raises(ReviewError) as raised:
        decode_review(b"[" * 100_000 + b"]" * 100_000, "application/json")
    assert (raised.value.code, raised.value.message) == (
        400,
        "Request could not be decoded: the JSON is nested too deeply",
    )


# --- wrong types anywhere in a review ----------------------------------------------------------------

WEIRD: list[Any] = [None, 0, -1, 1.5, 10**30, True, "", "x", "-a", [], {}, [None], [{}], {"name": 1}, [[[]]]]


def full_review() -> dict[str, Any]:
    jf = job_flow(flow("a", "b"), flow("b"))
    jf["metadata"]["annotations"] = {"flow.volcano.sh/retry": "{}"}
    first = jf["spec"]["flows"][0]
    first["dependsOn"]["probe"] = {
        "httpGetList": [{"taskName": "t", "path": "/", "port": 80}],
        "tcpSocketList": [{"taskName": "t", "port": 1}],
        "taskStatusList": [{"taskName": "t", "phase": "Running"}],
    }
    first["patch"] = {"jobSpec": {"tasks": [{"name": "t", "replicas": 1}]}}
    first["retry"] = {"maxRetries": 1, "backoff": "1s"}
    # docs/params.md: the parameters, a condition and a matrix.
    jf["spec"]["params"] = [{"name": "mode", "value": "full"}]
    first["when"] = [{"input": "$(params.mode)", "operator": "in", "values": ["full"]}]
    first["matrix"] = {"params": [{"name": "x", "values": ["1", "2"]}], "maxParallel": 1}
    return review(jf, operation="UPDATE", old=job_flow(flow("a")))


def paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if path:
        yield path
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield from paths(child, (*path, key))


def with_value(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    parent = changed
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return changed


def test_any_wrong_type_anywhere_is_answered_not_raised() -> None:
    base = full_review()
    crashes = []
    for path in paths(base):
        for value in WEIRD:
            body = json.dumps(with_value(base, path, value)).encode()
            try:
                review_response(decode_review(body, "application/json"))
            except ReviewError:
                pass
            except Exception as err:  # noqa: BLE001 - collected to name every crash at once
                crashes.append((path, value, repr(err)))
    assert crashes == []


@pytest.mark.parametrize("metadata", [5, "x", [], True])
def test_metadata_that_is_not_an_object_is_denied_as_not_a_jobflow(metadata: Any) -> None:
    body = full_review()
    body["request"]["object"]["metadata"] = metadata
    assert review_response(body)["response"]["status"]["message"] == "expect request.object to be a JobFlow object"


@pytest.mark.parametrize("operation", [{}, [], 1, None])
def test_operation_that_is_not_a_string_is_denied_as_another_operation(operation: Any) -> None:
    body = full_review()
    body["request"]["operation"] = operation
    message = review_response(body)["response"]["status"]["message"]
    assert message == "expect operation to be 'CREATE' or 'UPDATE'"
