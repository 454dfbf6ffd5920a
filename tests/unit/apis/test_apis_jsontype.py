"""`json_type`: the words every "must be X, not Y" message uses for what it found; `json_copy`: a fast deep copy."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from jobflow_controller.apis.jsontype import json_copy, json_type


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


@pytest.mark.parametrize(
    "document",
    [
        {"tasks": [{"name": "main", "replicas": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}]},
        {"n": 1.5, "big": 2**63 - 1, "none": None, "flag": False, "text": "é ü", "empty": {}, "list": []},
        # orjson refuses these; copy.deepcopy copies them.
        {"at": datetime.datetime(2026, 1, 2, 3, 4, 5)},
        {1: "a non-string key"},
        {"huge": 2**70},
    ],
)
def test_json_copy_is_an_equal_document_sharing_nothing(document: dict[Any, Any]) -> None:
    copied = json_copy(document)
    assert copied == document
    assert type(copied) is dict
    for key, value in document.items():
        assert type(copied[key]) is type(value)
        if isinstance(value, dict | list):
            assert copied[key] is not value
