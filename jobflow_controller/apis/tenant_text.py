"""Reading text a tenant wrote (an annotation's JSON, a duration) without letting it hurt the reader.

Whoever may `patch jobflows` writes these strings, and the controller reads them in its informer
handlers and its workers. A parser here is bounded before it parses (a length, a nesting depth, so
`json.loads` never recurses into `RecursionError` and never builds a huge tree) and never raises:
it returns the value or one problem, worded as admission words it. The limits are in
docs/hostile-input.md.
"""

from __future__ import annotations

import json
from typing import Any, Final

#: The longest annotation value the controller parses as JSON (`flow.volcano.sh/retry-request`,
#: `flow.volcano.sh/retry`): a request naming 500 flows, or 500 flows' policies, is well under it.
MAX_ANNOTATION_BYTES: Final = 64 * 1024
#: The deepest JSON those annotations may nest: both need two levels.
MAX_JSON_DEPTH: Final = 8
#: The longest piece of tenant text quoted back in a message.
MAX_EXCERPT: Final = 80


def load_json(text: object, where: str, *, max_bytes: int = MAX_ANNOTATION_BYTES) -> tuple[Any, str | None]:
    """(the decoded value, None), or (None, "<where>: <problem>") when `text` cannot be read.

    Never raises: a non-string, a text over `max_bytes` (UTF-8) or nested deeper than
    `MAX_JSON_DEPTH`, and whatever `json.loads` raises (invalid JSON, a number past Python's digit
    limit, memory) is a problem.
    """
    if not isinstance(text, str):
        return None, f"{where}: must be a string, not {type(text).__name__}"
    size = utf8_size(text, max_bytes)
    if size > max_bytes:
        return None, f"{where}: longer than {max_bytes} bytes, got {size} or more"
    if nesting_exceeds(text, MAX_JSON_DEPTH):
        return None, f"{where}: not valid JSON: nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        return json.loads(text), None
    except (ValueError, RecursionError, MemoryError) as err:  # JSONDecodeError, digit limit, ...
        return None, f"{where}: not valid JSON: {excerpt_text(str(err))}"


def utf8_size(text: str, limit: int) -> int:
    """The UTF-8 size of `text`, counted no further than just past `limit` (lone surrogates count 3)."""
    if len(text) > limit:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def nesting_exceeds(text: str, limit: int) -> bool:
    """Whether the JSON `text` opens more than `limit` arrays or objects inside one another.

    Linear, and counts only brackets outside strings; a malformed text is left for `json.loads` to
    refuse. Most texts hold fewer brackets than the limit and are not scanned at all.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def excerpt(value: object) -> str:
    """A decoded JSON value as JSON, cut to `MAX_EXCERPT` characters: what a message quotes back."""
    try:
        text = json.dumps(value)
    except (ValueError, TypeError, RecursionError):
        text = f"<{type(value).__name__}>"
    return excerpt_text(text)


def excerpt_text(text: str, limit: int = MAX_EXCERPT) -> str:
    """`text`, or its first `limit` characters and the mark of the cut: `... (N characters)`."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"
