"""The JSON type of a decoded value, in words, for messages that say what was found instead.

Admission and the controller refuse a wrongly shaped field with "must be an object, not a string":
one wording everywhere, so the webhook's review errors, the patch rules and the probe rules read alike.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TypeVar

import orjson

T = TypeVar("T")

#: What orjson would write but a JSON document from the API server cannot hold.
_STRICT = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def json_type(value: object) -> str:
    """`"null"`, `"a boolean"`, `"a number"`, `"a string"`, `"an object"` or `"an array"`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    return "an array"


def json_copy(value: T) -> T:
    """A deep copy of a decoded JSON document: dicts, lists, strings, numbers, booleans, null.

    orjson's round trip takes about a seventh of `copy.deepcopy`'s time for a Job spec. What orjson
    refuses (a datetime, a non-string key, an integer past 64 bits) is copied by `copy.deepcopy`;
    a tuple would come back as a list, so the value must be a document, not any Python object.
    """
    try:
        copied: T = orjson.loads(orjson.dumps(value, option=_STRICT))
    except TypeError:  # orjson.JSONEncodeError is one
        return copy.deepcopy(value)
    return copied
