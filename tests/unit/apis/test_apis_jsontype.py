"""`json_type`: the words every "must be X, not Y" message uses for what it found."""

from __future__ import annotations

import pytest

from jobflow_controller.apis.jsontype import json_type


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (None, "null"),
        (True, "a boolean"),
        (3, "a number"),
        (2.5, "a number"),
        ("x", "a string"),
        ({"a": 1}, "an object"),
        ([1], "an array"),
    ],
)
def test_each_json_type_has_its_words(value: object, words: str) -> None:
    assert json_type(value) == words
