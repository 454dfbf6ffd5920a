"""`kubectl jobflow ui`'s request parsers (issue 33): bounded, and raising only RequestError.

The table tests pin what each accepts and refuses; the property test runs every entry of
tests/unit/fuzz/parsers_ui.py (the UI's part of the fuzzing registry) through hypothesis, with deep
nesting, huge strings, escapes, invalid UTF-8 and wrong types, asserting that only the documented
errors escape and that each call stays under its time bound.
"""

from __future__ import annotations

import contextlib
import json
import string
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_jobflow.ui.request import (
    MAX_BODY,
    MAX_TARGET,
    ActionRequest,
    RequestError,
    parse_action,
    parse_content_length,
    parse_cookies,
    parse_target,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))

from parsers_ui import PARSERS, TOKEN, serve_raw


# -- tables ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "path", "query"),
    [
        ("/", "/", {}),
        ("/api/jobflow?key=ns%2Fp", "/api/jobflow", {"key": "ns/p"}),
        ("/?token=a&token=b", "/", {"token": "a"}),
        ("/api/jobflow?key=", "/api/jobflow", {"key": ""}),
        ("/x?%ff=%fe", "/x", {"\ufffd": "\ufffd"}),
    ],
)
def test_a_target_is_its_path_and_the_first_value_of_each_parameter(raw: str, path: str, query: dict[str, str]) -> None:
    assert parse_target(raw) == parse_target(raw)
    target = parse_target(raw)
    assert (target.path, dict(target.query)) == (path, query)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("/" + "a" * MAX_TARGET, 414),
        ("/?" + "&".join(f"p{i}=1" for i in range(20)), 400),
        ("//[::1/", 400),
    ],
)
def test_a_target_too_long_with_too_many_fields_or_malformed_is_refused(raw: str, code: int) -> None:
    with pytest.raises(RequestError) as refused:
        parse_target(raw)
    assert refused.value.code == code


@pytest.mark.parametrize(
    ("value", "length"), [(None, 0), ("", 0), ("0", 0), ("12", 12), (" 12 ", 12), (str(MAX_BODY), MAX_BODY)]
)
def test_a_content_length_is_plain_digits(value: str | None, length: int) -> None:
    assert parse_content_length(value) == length


@pytest.mark.parametrize("value", ["-1", "+5", "1_000", "0x10", "1e3", "\u0661\u0662", "12a", "9" * 40])
def test_anything_else_is_not_a_content_length(value: str) -> None:
    with pytest.raises(RequestError):
        parse_content_length(value)


def test_a_content_length_over_the_cap_is_413() -> None:
    with pytest.raises(RequestError) as refused:
        parse_content_length(str(MAX_BODY + 1))
    assert refused.value.code == 413


@pytest.mark.parametrize(
    ("header", "cookies"),
    [
        ("a=1; b=2", {"a": "1", "b": "2"}),
        ("a=1; a=2", {"a": "1"}),
        ('a="q"; junk; =x; b', {"a": "q"}),
        ("", {}),
        (None, {}),
    ],
)
def test_cookies_are_name_value_pairs_and_the_rest_is_skipped(header: str | None, cookies: dict[str, str]) -> None:
    assert parse_cookies(header) == cookies


def test_an_oversized_cookie_header_is_refused() -> None:
    with pytest.raises(RequestError):
        parse_cookies("a=" + "x" * 9000)


@pytest.mark.parametrize(
    ("body", "parsed"),
    [
        (b'{"key": "ns/p", "action": "stop"}', ActionRequest("ns/p", "stop", ())),
        (b'{"key": "ns/p", "action": "retry", "flows": ["b"]}', ActionRequest("ns/p", "retry", ("b",))),
        (b'{"key": "ns/p", "action": "retry", "flows": null}', ActionRequest("ns/p", "retry", ())),
    ],
)
def test_an_action_body_is_a_key_an_action_and_flows(body: bytes, parsed: ActionRequest) -> None:
    assert parse_action(body) == parsed


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b'{"key": "ns/p", "flows": "b"}',
        b'{"key": 7, "action": "stop"}',
        b'{"key": "ns/p", "action": "stop", "flows": [1]}',
        b"[" * 5000,  # a RecursionError inside json.loads
        b'{"key": "\xff"}',
        json.dumps({"key": "ns/p", "action": "retry", "flows": ["f"] * 601}).encode(),
        b" " * (MAX_BODY + 1),
    ],
)
def test_a_malformed_action_body_is_a_request_error(body: bytes) -> None:
    with pytest.raises(RequestError):
        parse_action(body)


def test_the_handler_answers_a_request_it_cannot_parse_and_raises_nothing() -> None:
    assert serve_raw(b"GET /" + b"[" * 5000 + b" HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 414")
    assert b"400 - Bad request syntax" in serve_raw(b"\x00\xff garbage\r\n\r\n")  # an HTTP/0.9 answer
    assert serve_raw(b"") == b""


# -- the fuzzing registry's entries ------------------------------------------------------------
NASTY_TEXT = [
    "[" * 5000,
    "{" * 5000,
    '"' + "\\" * 10_000,
    "\\u0000" * 1000,
    "a" * 200_000,
    "%" * 5000,
    "=;" * 5000,
    "\udcff\ud800",
    "\x00\r\n",
]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.sampled_from(["key", "action", "flows", "x"]), inner)
    ),
    max_leaves=30,
)
HEADS = st.builds(
    lambda method, target, headers, body: (
        (f"{method} {target} HTTP/1.1\r\n{headers}\r\n").encode("utf-8", "replace") + body
    ),
    st.sampled_from(["GET", "POST", "HEAD", "PUT", "G\x00T"]),
    st.text(string.printable, max_size=80).map(lambda t: "/" + t.replace(" ", "")),
    st.lists(
        st.sampled_from(
            [
                "Host: 127.0.0.1:1",
                f"X-JobFlow-Token: {TOKEN[:-1]}",
                "Content-Type: application/json",
                "Content-Length: 5",
                "Content-Length: -1",
                "Content-Length: 99999999999",
                "Cookie: jobflow-ui-1=x",
                "Origin: null",
            ]
        ),
        max_size=6,
    ).map(lambda lines: "".join(line + "\r\n" for line in lines)),
    st.binary(max_size=200),
)
STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "text": st.one_of(st.text(), st.sampled_from(NASTY_TEXT)),
    "bytes": st.one_of(st.binary(), HEADS, st.sampled_from([t.encode("utf-8", "surrogatepass") for t in NASTY_TEXT])),
    "json": st.one_of(JSON, st.just({"key": "ns/p", "action": "retry", "flows": ["b"]})),
}


@pytest.mark.parametrize("parser", PARSERS, ids=lambda p: p.name)
def test_every_parser_of_the_ui_raises_only_its_documented_errors_within_its_bound(parser: Any) -> None:
    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(STRATEGIES[parser.inputs])
    def check(value: Any) -> None:
        started = time.perf_counter()
        with contextlib.suppress(*parser.allowed):
            parser.call(value)
        assert time.perf_counter() - started < parser.bound_s * 5  # a loaded machine: the registry's own run is strict

    check()
