"""A small ``fmt.Sprintf`` for event messages.

Controllers ported from Go keep their Go format strings (``"create a job named %s!"``,
``"%v JobFlow failed for %v"``), so ``eventf`` accepts them. Each verb is rendered with Python's
``%`` operator after mapping Go's verbs onto Python's (``%v`` → ``%s`` with Go's rendering of
``nil``, booleans, slices and maps). Like Go, and unlike a bare ``fmt % args``, a mismatch between
verbs and arguments never raises: it is written into the message (``%!v(MISSING)``,
``%!(EXTRA …)``, ``%!d(string=x)``), because a recorder must never crash its caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["go_string", "sprintf"]

_DIRECTIVE = re.compile(r"%(?P<flags>[-+# 0]*)(?P<width>\d*)(?:\.(?P<prec>\d*))?(?P<verb>[a-zA-Z%])")

_GO_TYPE_NAMES = {str: "string", int: "int", float: "float64", bool: "bool", bytes: "[]uint8"}


def go_string(value: Any) -> str:
    """How Go's ``%v`` renders a value: ``<nil>``, ``true``, ``[a b]``, ``map[k:v]``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_string(item) for item in value) + "]"
    if isinstance(value, Mapping):
        items = sorted((go_string(k), go_string(v)) for k, v in value.items())
        return "map[" + " ".join(f"{k}:{v}" for k, v in items) + "]"
    return str(value)


def _go_type(value: Any) -> str:
    if value is None:
        return "<nil>"
    return _GO_TYPE_NAMES.get(type(value), type(value).__name__)


def _bad_verb(verb: str, value: Any) -> str:
    return f"%!{verb}({_go_type(value)}={go_string(value)})"


def _format_one(match: re.Match[str], value: Any) -> str:
    flags, width, prec, verb = match["flags"], match["width"], match["prec"], match["verb"]
    text_spec = "%" + ("-" if "-" in flags else "") + width + ("" if prec is None else "." + prec) + "s"
    if verb in ("v", "s"):
        return text_spec % go_string(value)
    if verb == "q":
        return ("%" + ("-" if "-" in flags else "") + width + "s") % json.dumps(go_string(value), ensure_ascii=False)
    if verb == "t":
        if not isinstance(value, bool):
            return _bad_verb(verb, value)
        return text_spec % go_string(value)
    if verb == "d" and (isinstance(value, bool) or not isinstance(value, int)):
        return _bad_verb(verb, value)
    if verb in ("x", "X") and isinstance(value, str | bytes):
        raw = value.encode() if isinstance(value, str) else value
        return raw.hex().upper() if verb == "X" else raw.hex()
    spec = "%" + flags + width + ("" if prec is None else "." + prec) + verb
    try:
        rendered: str = spec % value
    except (TypeError, ValueError):
        return _bad_verb(verb, value)
    return rendered


def sprintf(fmt: str, *args: Any) -> str:
    """Format like Go's ``fmt.Sprintf`` for the verbs controllers use in event messages."""
    out: list[str] = []
    pos = 0
    next_arg = 0
    for match in _DIRECTIVE.finditer(fmt):
        out.append(fmt[pos : match.start()])
        pos = match.end()
        if match["verb"] == "%":
            out.append("%")
            continue
        if next_arg >= len(args):
            out.append(f"%!{match['verb']}(MISSING)")
            continue
        out.append(_format_one(match, args[next_arg]))
        next_arg += 1
    out.append(fmt[pos:])
    if next_arg < len(args):
        extra = ", ".join(f"{_go_type(a)}={go_string(a)}" for a in args[next_arg:])
        out.append(f"%!(EXTRA {extra})")
    return "".join(out)
