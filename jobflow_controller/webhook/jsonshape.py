"""How big and how deep a JSON text would be once decoded, measured before ``json.loads`` runs.

``json.loads`` recurses once per nesting level (a deep enough text raises ``RecursionError``) and
turns ``[{},{},...]`` into 24 times its size in Python objects. Both are bounded here on the text,
at the cost of a few passes in C: the strings are cut out with one regular expression, and what is
left (brackets, commas, colons, numbers and literals) is counted.

Why cutting the strings out is safe even for a text that is not JSON: the expression matches a
string exactly where the decoder's grammar does, up to the first place the text breaks that
grammar (a bad escape or a control character in a string), and the decoder stops with an error
there, so whatever the count misreads after that point is never decoded.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Final

__all__ = ["json_shape_problem"]

_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS: Final = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_shape_problem(text: str, *, max_values: int, max_depth: int) -> str | None:
    """Why decoding ``text`` would cost too much; ``None`` when it may be decoded.

    Values are counted as arrays and objects opened plus commas and colons: one per element or
    member and per key, so within one or two of every Python object the decoder would build.
    """
    skeleton = _STRING.sub("", text)
    values = sum(skeleton.count(mark) for mark in "[{,:")
    if values > max_values:
        return f"the JSON has more than {max_values} values"
    # At most 2 * max_values brackets remain here, so the walk below is bounded too.
    brackets = _NOT_BRACKETS.sub("", skeleton)
    depth = max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)
    if depth > max_depth:
        return f"the JSON is nested {depth} levels deep, more than {max_depth}"
    return None
