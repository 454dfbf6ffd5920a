"""What a request to the UI says, read by pure, bounded functions (issue 33).

Everything here reads text a browser tab, a script or anything on the machine sends: the request
target (path and query), the Content-Length and Cookie headers, the JSON body of an action. Each
function bounds its input before any work that grows with it and raises only `RequestError` (a
`ValueError` carrying the HTTP status and the one sentence the server answers with); anything else
it could raise (a `RecursionError` from deeply nested JSON, a `UnicodeDecodeError`) is caught and
turned into one. tests/unit/fuzz/parsers_ui.py lists them for the fuzzing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

#: The longest request target (path and query) served; a longer one is 414.
MAX_TARGET = 4096
#: Query parameters read at most (the UI uses two: `token` and `key`).
MAX_QUERY_FIELDS = 8
#: An action's JSON body at most (a retry of 600 flows of 253 characters fits in 160 KiB).
MAX_BODY = 64 * 1024
#: A JobFlow's key: a namespace (63) "/" a name (253).
MAX_KEY = 317
#: Flows named by one action (500 flows and 100 finally entries, the CRD's caps) and their length.
MAX_FLOWS = 600
MAX_FLOW_NAME = 253
MAX_ACTION = 32
#: The Cookie header at most, and the cookies read from it.
MAX_COOKIE_HEADER = 8192
MAX_COOKIES = 64

ACTION_SHAPE = 'expected {"key": "<ns>/<name>", "action": "...", "flows": [...]}'
_DIGITS = re.compile(r"[0-9]{1,9}")


class RequestError(ValueError):
    """A request refused: the HTTP status and the sentence the server answers with."""

    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Target:
    """The request target: its path, and the first value of each query parameter."""

    path: str
    query: Mapping[str, str]


@dataclass(frozen=True)
class ActionRequest:
    key: str
    action: str
    flows: tuple[str, ...]


def parse_target(raw: str) -> Target:
    """The path and query of a request line's target (`/api/jobflow?key=ns%2Fp`)."""
    if not isinstance(raw, str):
        raise RequestError("malformed request target")
    if len(raw) > MAX_TARGET:
        raise RequestError(f"the request target is longer than {MAX_TARGET} characters", 414)
    try:
        parts = urlsplit(raw)
        fields = parse_qs(parts.query, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS)
    except ValueError as err:  # an invalid "[...]" host part, too many fields
        raise RequestError(f"malformed request target: {err}") from None
    return Target(parts.path, {name: values[0] for name, values in fields.items()})


def parse_key(value: str) -> str:
    """A JobFlow key from the query (`key=`): any text up to `MAX_KEY` characters (the cache says
    whether such a JobFlow exists)."""
    if not isinstance(value, str):
        raise RequestError("the key is not text")
    if len(value) > MAX_KEY:
        raise RequestError(f"the key is longer than {MAX_KEY} characters")
    return value


def parse_content_length(value: str | None) -> int:
    """The body's length: plain ASCII digits only (no sign, space, underscore or other digits),
    at most `MAX_BODY`; a missing header is 0."""
    if value is None or value == "":
        return 0
    if not isinstance(value, str) or not _DIGITS.fullmatch(value.strip(" \t")):
        raise RequestError("the Content-Length header is not a number")
    length = int(value.strip(" \t"))
    if length > MAX_BODY:
        raise RequestError(f"the body is larger than {MAX_BODY} bytes", 413)
    return length


def parse_cookies(header: str | None) -> dict[str, str]:
    """`name=value` pairs of a Cookie header (the first of each name); pieces that are not a pair
    are skipped, as browsers do. An oversized header is refused."""
    if not header:
        return {}
    if not isinstance(header, str) or len(header) > MAX_COOKIE_HEADER:
        raise RequestError(f"the Cookie header is longer than {MAX_COOKIE_HEADER} characters", 431)
    cookies: dict[str, str] = {}
    for piece in header.split(";", MAX_COOKIES)[:MAX_COOKIES]:
        name, sep, value = piece.partition("=")
        name, value = name.strip(), value.strip()
        if sep and name:
            cookies.setdefault(name, value.removeprefix('"').removesuffix('"'))
    return cookies


def _text(value: object, limit: int, what: str) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise RequestError(f"{ACTION_SHAPE}: {what} must be a string of at most {limit} characters")
    return value


def parse_action(body: bytes) -> ActionRequest:
    """An action's body: `{"key": "<ns>/<name>", "action": "...", "flows": ["...", ...]}`."""
    if not isinstance(body, bytes | bytearray) or not 0 < len(body) <= MAX_BODY:
        raise RequestError(f"a JSON body of 1 to {MAX_BODY} bytes is required")
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser's depth
        raise RequestError("the body is not JSON") from None
    if not isinstance(doc, dict):
        raise RequestError(ACTION_SHAPE)
    flows = doc.get("flows")
    flows = [] if flows is None else flows
    if not isinstance(flows, list) or len(flows) > MAX_FLOWS:
        raise RequestError(f"{ACTION_SHAPE}: flows must be a list of at most {MAX_FLOWS} names")
    return ActionRequest(
        _text(doc.get("key", ""), MAX_KEY, "key"),
        _text(doc.get("action", ""), MAX_ACTION, "action"),
        tuple(_text(flow, MAX_FLOW_NAME, "each flow") for flow in flows),
    )
