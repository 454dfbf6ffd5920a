"""Every registered parser of tenant text, fuzzed (issue 33, docs/hostile-input.md).

For each parser: a fixed corpus of hostile inputs (deep nesting, huge strings, runs of escapes,
invalid UTF-8, wrong types), then hypothesis' own examples for its input kind, derandomized and
with a fixed budget so `make test` is deterministic. Only the parser's documented errors may
escape, and each call must end within its bound.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from registry import INPUT_KINDS, Parser, all_parsers

PARSERS = all_parsers()
#: hypothesis examples per input kind, each run through every parser of that kind.
MAX_EXAMPLES = 200
BUDGET = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,  # the bound is checked per call below, against the parser's own bound_s
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

# -- the fixed hostile corpus -------------------------------------------------------------------------
DEEP = 100_000
HOSTILE_TEXT: list[Any] = [
    "",
    "[" * 5_000,
    "[" * DEEP,
    "{" * DEEP,
    '{"a":' * DEEP,
    "[" * DEEP + "]" * DEEP,
    '{"a":"' + '\\"' * 300_000,  # the webhook's backtracking case: escaped quotes, no closing quote
    '"' + "\\" * 300_001,
    "x" * (1 << 20),
    '{"id": "' + "x" * (1 << 20) + '"}',
    '{"id": "r", "flows": [' + ",".join(['"a"'] * 100_000) + "]}",
    "1" * 5_000,
    "9" * 100 + "e999999",
    "-" + "1" * 4_400,
    "\ud800",
    '"\\ud800"',
    "\x00\x01\x1f",
    "NaN",
    "Infinity",
    "1.5e308",
    "999999999999999999999h",
    "1" + "0" * 70 + "s",
    ".5s" * 30_000,
    "2026-12-05T13:00:00Z" * 1_000,
    "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00-23:59",
    "64:ff9b::a9fe:a9fe",
    "::ffff:" + "1" * 10_000,
    "%" * 1_000,
    "1_000",
    "٣",  # an Arabic-Indic digit: int() reads it, Go does not
    "a" + "-" * 100_000 + "!",  # a name regex's worst case
    "a." * 50_000 + "!",
]
HOSTILE_BYTES: list[Any] = [
    b"",
    b"\xff\xfe\xfd",
    b"\xc3\x28" * 10_000,
    b"\xef\xbb\xbf" + b"[" * DEEP,
    b"HTTP/1.1 200 OK\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 200 + b"\r\n",
    b"HTTP/1.1 200 OK\r\nX: " + b"y" * 100_000 + b"\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nab",
    b"HTTP/1.1 99999999999999 OK\r\n\r\n",
    b"HTTP/9.9 200\r\n\r\n",
    b"\x00" * 70_000,
    b"HTTP/1.1 200 " + b"\xff" * 70_000 + b"\r\n\r\n",
    b"HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/\r\n\r\n",
    b"x" * (1 << 20),
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"f" * 1_000 + b"\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + (b"1;" + b"a=b;" * 250 + b"c\r\nx\r\n") * 1_000,
    b"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
]


def _deep_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _deep_dict(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"spec": value}
    return value


HOSTILE_JSON: list[Any] = [
    None,
    0,
    -1,
    2**64,
    10**400,
    1e308,
    float("nan"),
    float("inf"),
    True,
    "x" * (1 << 20),
    [],
    {},
    _deep_list(500),
    _deep_dict(500),
    {"metadata": None, "spec": None, "status": None},
    {"metadata": [], "spec": [], "status": []},
    {"metadata": {"annotations": None}, "spec": {"flows": None}},
    {"metadata": {"annotations": []}, "spec": {"flows": "abc"}},
    {"metadata": {"annotations": {"flow.volcano.sh/retry-request": "[" * 5_000}}},
    {"metadata": {"annotations": {"flow.volcano.sh/retry": "[" * 5_000}}},
    {"metadata": {"annotations": {"flow.volcano.sh/retry-request": 5}}},
    {"spec": {"flows": [None, 1, "a", [], {"name": None}, {"name": ["a"]}, {"name": {"a": 1}}]}},
    {"spec": {"flows": [{"name": "a", "dependsOn": {"targets": "a"}}]}},
    {"spec": {"flows": [{"name": "a", "dependsOn": {"targets": [None, 1, ["b"], {"c": 1}]}}]}},
    {"spec": {"flows": [{"name": "a", "dependsOn": {"targets": ["a"], "probe": _deep_dict(400)}}]}},
    {"spec": {"flows": [{"name": "a", "patch": {"jobSpec": _deep_dict(400)}}]}},
    {"spec": {"flows": [{"name": "a", "retry": {"maxRetries": 10**400, "backoff": "9" * 5000 + "h"}}]}},
    {"spec": {"flows": [{"name": "a", "activeDeadlineSeconds": 2**63 - 1}], "activeDeadlineSeconds": 2**63}},
    {"spec": {"ttlSecondsAfterFinished": 10**30, "suspend": "yes", "shutdown": ["Stop"]}},
    {"spec": {"flows": [{"name": "x" * 100_000}] * 3, "finally": [{"name": None}, 5]}},
    {"spec": {"flows": [{"name": f"f{i}", "dependsOn": {"targets": [f"f{i - 1}"]}} for i in range(2_000)]}},
    {"metadata": {"name": 5, "namespace": [], "uid": {}, "generation": "1", "resourceVersion": None}},
    {"metadata": {"ownerReferences": [None, 5, {"kind": "JobFlow", "apiVersion": 5, "controller": "yes"}]}},
    {"status": {"state": {"phase": 5}, "jobStatusList": [None, {"runningHistories": 5}]}},
    {"tasks": [{"name": None, "replicas": 10**30}], "taskStatusCount": {"t": {"phase": {"Running": "1"}}}},
    {"jobSpec": {"tasks": [{"name": "worker", "replicas": -1}]}},
    {"jobSpec": {"tasks": None, "minAvailable": "x", "policies": [[]]}},
    {"hostNetwork": "true"},
]

CORPUS: dict[str, list[Any]] = {
    "text": [*HOSTILE_TEXT, None, 5, b"[[", ["x"], {"a": 1}],
    "bytes": [*HOSTILE_BYTES, None, "text", 5],
    "json": HOSTILE_JSON,
}

# -- hypothesis' inputs ------------------------------------------------------------------------------
JSON_PUNCTUATION = '[]{}",:\\ 0123456789.eE-+tfnaulrs/u'
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["a", "b", "", "0s", "30s", "Stop", "Terminate", "Failed", "worker", "10.0.0.1"]),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=30,
)
KEYS = [
    "metadata", "spec", "status", "annotations", "flows", "finally", "name", "dependsOn", "targets", "probe",
    "patch", "jobSpec", "tasks", "replicas", "retry", "maxRetries", "backoff", "rule", "continueOnFailure",
    "failurePolicy", "suspend", "shutdown", "activeDeadlineSeconds", "ttlSecondsAfterFinished", "httpGetList",
    "tcpSocketList", "taskStatusList", "taskName", "port", "path", "httpHeader", "phase", "hostNetwork",
    "generation", "uid", "resourceVersion", "ownerReferences", "flow.volcano.sh/retry",
    "flow.volcano.sh/retry-request", "taskStatusCount", "state", "jobStatusList",
]  # fmt: skip
shaped_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.sampled_from(KEYS), children, max_size=6)
    ),
    max_leaves=40,
)
json_texts = json_values.map(json.dumps)
punctuation_texts = st.text(alphabet=JSON_PUNCTUATION, max_size=200)
nested_texts = st.builds(
    lambda opener, n, tail: opener * n + tail,
    st.sampled_from(["[", "{", '{"a":', '["', "[{"]),
    st.integers(0, 3_000),
    st.text(max_size=10),
)
escaped_texts = st.builds(
    lambda n, head: head + '\\"' * n, st.integers(0, 20_000), st.sampled_from(['{"a":"', '"', '["'])
)
wrong_types = st.one_of(st.none(), st.integers(), st.binary(max_size=10), st.lists(st.text(max_size=3), max_size=2))

STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "text": st.one_of(st.text(), json_texts, punctuation_texts, nested_texts, escaped_texts, wrong_types),
    "bytes": st.one_of(
        st.binary(max_size=300),
        json_texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.builds(
            lambda head, body: b"HTTP/1.1 " + head + b"\r\n" + body, st.binary(max_size=20), st.binary(max_size=200)
        ),
        wrong_types,
    ),
    "json": st.one_of(json_values, shaped_values, st.dictionaries(st.sampled_from(KEYS), shaped_values, max_size=4)),
}


def _check(parser: Parser, value: Any) -> None:
    started = time.perf_counter()
    try:
        parser.call(value)
    except parser.allowed:
        pass
    except BaseException as err:
        shown = repr(value)[:200]
        raise AssertionError(f"{parser.name} raised {type(err).__name__}: {str(err)[:300]} on {shown}") from err
    elapsed = time.perf_counter() - started
    assert elapsed <= parser.bound_s, f"{parser.name} took {elapsed:.2f}s > {parser.bound_s}s on {repr(value)[:200]}"


def test_every_parser_has_a_known_input_kind_and_a_unique_name() -> None:
    assert {p.inputs for p in PARSERS} <= INPUT_KINDS
    names = [p.name for p in PARSERS]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("parser", PARSERS, ids=lambda p: p.name)
def test_the_hostile_corpus_raises_only_documented_errors_within_the_bound(parser: Parser) -> None:
    for value in CORPUS[parser.inputs]:
        _check(parser, value)


@pytest.mark.parametrize("kind", sorted(INPUT_KINDS))
def test_fuzzed_inputs_raise_only_documented_errors_within_the_bound(kind: str) -> None:
    """One generated input goes through every parser of its kind: generating costs more than parsing."""
    parsers = [p for p in PARSERS if p.inputs == kind]

    @BUDGET
    @given(STRATEGIES[kind])
    def fuzz(value: Any) -> None:
        for parser in parsers:
            _check(parser, value)

    fuzz()
