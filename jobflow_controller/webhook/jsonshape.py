"""How big and how deep a JSON text would be once decoded, measured before ``json.loads`` runs.

``json.loads`` recurses once per nesting level (a deep enough text raises ``RecursionError``) and
turns ``[{},{},...]`` into 24 times its size in Python objects. Both are bounded here on the text,
at the cost of a few passes in C: the strings are cut out, and what is left (brackets, commas,
colons, numbers and literals) is counted.

Why cutting the strings out is safe even for a text that is not JSON: a string is matched exactly
where the decoder's grammar has one, up to the first place the text breaks that grammar (a bad
escape or a control character in a string), and the decoder stops with an error there, so
whatever the count misreads after that point is never decoded.

Why it takes time linear in the text, whatever the text: a string is cut by one regular expression
anchored at its opening quote, with possessive quantifiers (``*+``), so matching it never
backtracks. Only a quote whose string never closes could cost more, because a search retried at
every later quote would scan the rest of the text again each time (``{"a":"`` and a MiB of ``\\"``
took hours that way, holding the GIL). But no string can close after one that does not: every
quote after an unclosed one is escaped, and a string started there reads the same characters in
the same state and runs off the end too. So the text is read once up to the first unclosed quote
(``_CLOSED_PREFIX``), the strings are cut out of that prefix, and the rest is kept as it is.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Final

__all__ = ["json_shape_problem", "skeleton"]

#: One string, closed: a quote, then characters other than quotes and backslashes, or a backslash
#: and any one character, then a quote. Possessive: the split of a string into these is unique.
_STRING: Final = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_CLOSED_STRING: Final = re.compile(_STRING, re.DOTALL)
#: Text outside strings and closed strings, as far as they go: it stops at the first quote whose
#: string runs off the end of the text (or at the end).
_CLOSED_PREFIX: Final = re.compile(rf'(?:[^"]++|{_STRING})*+', re.DOTALL)
_NOT_BRACKETS: Final = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


def skeleton(text: str) -> str:
    """``text`` without its strings: every closed string cut out, from an unclosed one on kept as is."""
    closed = _CLOSED_PREFIX.match(text)
    end = closed.end() if closed is not None else 0  # it always matches, if only the empty prefix
    return _CLOSED_STRING.sub("", text[:end]) + text[end:]


def json_shape_problem(text: str, *, max_values: int, max_depth: int) -> str | None:
    """Why decoding ``text`` would cost too much; ``None`` when it may be decoded.

    Values are counted as arrays and objects opened plus commas and colons: one per element or
    member and per key, so within one or two of every Python object the decoder would build.
    """
    outside = skeleton(text)
    values = sum(outside.count(mark) for mark in "[{,:")
    if values > max_values:
        return f"the JSON has more than {max_values} values"
    # At most max_values brackets open here; closing ones are walked in C, a few ns each.
    brackets = _NOT_BRACKETS.sub("", outside)
    depth = max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)
    if depth > max_depth:
        return f"the JSON is nested {depth} levels deep, more than {max_depth}"
    return None
