"""The bindings and the body's parser (jobflowtrigger/bindings.py): every rule a row."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.apis.jobflowtrigger import Binding
from jobflow_controller.jobflowtrigger.bindings import MAX_BODY_BYTES, BindingError, bind, parse_body


@pytest.mark.parametrize(
    ("binding", "variables", "value"),
    [
        (Binding("a", value="x"), {}, "x"),
        (Binding("a", value=""), {}, ""),
        (Binding("a", cel="body.dataset"), {"body": {"dataset": "daily"}}, "daily"),
        (Binding("a", cel="body.n"), {"body": {"n": 3}}, "3"),
        (Binding("a", cel="body.n + 1"), {"body": {"n": 3}}, "4"),
        (Binding("a", cel="body.f"), {"body": {"f": 2.5}}, "2.5"),
        (Binding("a", cel="body.f"), {"body": {"f": 2.0}}, "2"),
        (Binding("a", cel="body.ok"), {"body": {"ok": True}}, "true"),
        (Binding("a", cel="body.ok"), {"body": {"ok": False}}, "false"),
        (Binding("a", cel="'v-' + body.x"), {"body": {"x": "1"}}, "v-1"),
        (Binding("a", cel="object.metadata.name"), {"object": {"metadata": {"name": "cm"}}, "type": "create"}, "cm"),
        (Binding("a", cel="type"), {"object": {}, "oldObject": None, "type": "update"}, "update"),
    ],
)
def test_a_binding_gives_its_string(binding: Binding, variables: dict[str, Any], value: str) -> None:
    assert bind([binding], variables) == [{"name": "a", "value": value}]


@pytest.mark.parametrize(
    ("expression", "body", "why"),
    [
        ("body.missing", {}, "param a"),
        ("body.list", {"list": [1, 2]}, "not a string, number or boolean"),
        ("body.obj", {"obj": {"k": "v"}}, "not a string, number or boolean"),
        ("body.none", {"none": None}, "null"),
        ("body.s", {"s": "x" * 5000}, "over 4096 characters"),
        ("body.s + 1", {"s": "x"}, "param a"),
    ],
)
def test_a_binding_without_a_usable_value_is_refused(expression: str, body: object, why: str) -> None:
    with pytest.raises(BindingError, match=why):
        bind([Binding("a", cel=expression)], {"body": body})


def test_bindings_keep_their_order() -> None:
    params = bind([Binding("b", value="1"), Binding("a", cel="body.x")], {"body": {"x": "2"}})
    assert params == [{"name": "b", "value": "1"}, {"name": "a", "value": "2"}]


@pytest.mark.parametrize(
    ("data", "parsed"),
    [(b"", {}), (b"  \n", {}), (b'{"a": 1}', {"a": 1}), (b"[1, 2]", [1, 2]), (b'"s"', "s")],
)
def test_a_body_is_json(data: bytes, parsed: object) -> None:
    assert parse_body(data) == parsed


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"{", "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"NaN", "not JSON"),
        (b'{"a": Infinity}', "not JSON"),
        (b"[" * 40 + b"]" * 40, "nested 40 levels"),
        (b"[" + b"0," * 20_000 + b"0]", "more than 10000 values"),
        (b" " * (MAX_BODY_BYTES + 1), "over 65536 bytes"),
    ],
)
def test_a_body_that_is_not_acceptable_json_is_refused(data: bytes, why: str) -> None:
    with pytest.raises(BindingError, match=why):
        parse_body(data)
