"""The JSON type of a decoded value, in words, for messages that say what was found instead.

Admission and the controller refuse a wrongly shaped field with "must be an object, not a string":
one wording everywhere, so the webhook's review errors, the patch rules and the probe rules read alike.
"""

from __future__ import annotations

from collections.abc import Mapping


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
