"""Ours, opt-in: CEL expressions a tenant wrote (`when[].cel`, a trigger's `cel` bindings), compiled and
evaluated with the `common-expression-language` library (docs/decisions/0001-cel-library.md).

The library has no cost limit and runs on the calling thread's stack, so this module bounds what it
may be given before it sees it (docs/hostile-input.md):
* the text: at most `MAX_CEL_LENGTH` characters, brackets nested at most `MAX_NESTING` deep, at most
  `MAX_COMPREHENSIONS` comprehension macros (`all`, `exists`, `exists_one`, `map`, `filter`), none
  inside another's arguments (each iterates once over one list: no product of lists), and at most
  `MAX_ADDITIONS` `+` operators (the one operator that makes a string or a list longer);
* the variables: at most `MAX_INPUT_ITEMS` values (each list element, map entry and scalar) and
  `MAX_INPUT_CHARS` characters of strings (keys and values) in all.
So one evaluation iterates at most `MAX_COMPREHENSIONS` times over a list of at most
`MAX_INPUT_ITEMS` (or a literal of at most `MAX_CEL_LENGTH / 2`) elements, and its strings grow at
most `2 ** MAX_ADDITIONS` times. The text is scanned by the same lexical rules as CEL's (string
literals, raw and triple-quoted, and `//` comments hide brackets and operators).
The library is imported on first use: a controller that never meets a CEL expression does not load it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import cel

#: The longest expression (the CRD's maxLength for `when[].cel`).
MAX_CEL_LENGTH: Final = 1024
#: The deepest nesting of `(`, `[` and `{`: deep enough for any condition a person writes (the
#: library's own parser refuses at about 96 parentheses).
MAX_NESTING: Final = 32
#: Comprehension macros in one expression, none inside another.
MAX_COMPREHENSIONS: Final = 4
#: `+` operators in one expression.
MAX_ADDITIONS: Final = 8
#: Values in the variables of one evaluation (list elements, map entries, scalars).
MAX_INPUT_ITEMS: Final = 4096
#: Characters of strings (map keys and values) in the variables of one evaluation.
MAX_INPUT_CHARS: Final = 256 * 1024
#: The longest library message carried by a `CelError` (a parse error quotes the expression).
MAX_MESSAGE: Final = 600
#: Compiled programs kept by text: a worker re-judging a flow does not compile its expression again.
CACHE_SIZE: Final = 1024

MACROS: Final = frozenset({"all", "exists", "exists_one", "map", "filter"})

#: A string literal, as CEL's lexer reads one: raw (`r` prefix, no escapes) or not, optionally bytes
#: (`b`), triple-quoted (newlines allowed) or not. Inside one, brackets and operators are text.
_RAW_STRING: Final = (
    r"(?:[rR][bB]?|[bB][rR])"
    r"(?:'''[\s\S]*?'''"
    r'|"""[\s\S]*?"""'
    r"|'[^'\n\r]*'"
    r'|"[^"\n\r]*")'
)
_STRING: Final = (
    r"[bB]?"
    r"(?:'''(?:\\[\s\S]|[^\\])*?'''"
    r'|"""(?:\\[\s\S]|[^\\])*?"""'
    r"|'(?:\\.|[^'\\\n\r])*'"
    r'|"(?:\\.|[^"\\\n\r])*")'
)
_NUMBER: Final = r"0[xX][0-9a-fA-F]+[uU]?|[0-9]*\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+(?:[eE][+-]?[0-9]+)?[uU]?"
_TOKEN: Final = re.compile(
    rf"(?P<skip>\s+|//[^\n]*)|(?P<string>{_RAW_STRING}|{_STRING})|(?P<number>{_NUMBER})"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*|`[^`]*`)|(?P<quote>['\"])|(?P<other>[\s\S])"
)
_OPEN: Final = {"(": ")", "[": "]", "{": "}"}


class CelError(ValueError):
    """An expression refused (our limits, or the library's parser) or an evaluation that failed; the
    message is the library's, cut to `MAX_MESSAGE` characters."""


@dataclass(frozen=True)
class CompiledCel:
    """A compiled expression: the program and the text it came from (for messages)."""

    text: str
    program: cel.Program


def compile_cel(text: str) -> CompiledCel:
    """`text` compiled, after our static limits; raises `CelError` with the reason. Cached by text."""
    if not isinstance(text, str):
        raise CelError(f"must be a string, not {type(text).__name__}")
    if len(text) > MAX_CEL_LENGTH:
        raise CelError(f"longer than {MAX_CEL_LENGTH} characters ({len(text)})")
    return _compile_cached(text)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _compile_cached(text: str) -> CompiledCel:
    """Refusals raise and are not cached (lru_cache keeps only returned values)."""
    check_shape(text)
    import cel

    try:
        program = cel.compile(text)
    except Exception as err:  # noqa: BLE001 (the library raises ValueError, or a Rust panic's error)
        raise CelError(_message(err)) from None
    return CompiledCel(text, program)


def evaluate_cel(compiled: CompiledCel, variables: Mapping[str, object]) -> object:
    """The expression's value for `variables` (the caller checks its type); raises `CelError` when the
    variables are over the limits or the evaluation fails (a missing key, a type error, an overflow)."""
    check_input(variables)
    try:
        return compiled.program.execute(dict(variables))
    except Exception as err:  # noqa: BLE001 (KeyError, TypeError, OverflowError, RuntimeError, ...)
        raise CelError(_message(err)) from None


def check_shape(text: str) -> None:
    """Raise `CelError` when `text` breaks one of the static limits of the module docstring."""
    stack: list[tuple[str, bool]] = []  # (closing bracket, opened by a comprehension macro)
    macro_next = False
    comprehensions = additions = 0
    for match in _TOKEN.finditer(text):
        kind, token = match.lastgroup, match.group()
        if kind == "skip":
            continue
        if kind == "quote":
            raise CelError(f"unterminated string at character {match.start()}")
        if token in _OPEN:
            if macro_next:
                if any(is_macro for _, is_macro in stack):
                    raise CelError(f"a comprehension inside another comprehension at character {match.start()}")
                comprehensions += 1
                if comprehensions > MAX_COMPREHENSIONS:
                    raise CelError(
                        f"more than {MAX_COMPREHENSIONS} comprehensions (all, exists, exists_one, map, filter)"
                    )
            stack.append((_OPEN[token], macro_next and token == "("))
            if len(stack) > MAX_NESTING:
                raise CelError(f"nested deeper than {MAX_NESTING} brackets")
        elif stack and token == stack[-1][0]:
            stack.pop()
        elif token == "+":
            additions += 1
            if additions > MAX_ADDITIONS:
                raise CelError(f"more than {MAX_ADDITIONS} '+' operators")
        macro_next = kind == "ident" and token in MACROS


def check_input(variables: Mapping[str, object]) -> None:
    """Raise `CelError` when `variables` hold more than `MAX_INPUT_ITEMS` values or `MAX_INPUT_CHARS`
    characters, or a value that is not JSON-like (the walk stops at the first limit passed)."""
    items = chars = 0
    pending: list[object] = [variables]
    while pending:
        value = pending.pop()
        items += 1
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                chars += len(key) if isinstance(key, str) else 0
                pending.append(item)
        elif isinstance(value, list | tuple):
            pending.extend(value)
        elif value is not None and not isinstance(value, bool | int | float):
            raise CelError(f"a variable holds a {type(value).__name__}, not a JSON value")
        if items > MAX_INPUT_ITEMS or chars > MAX_INPUT_CHARS:
            raise CelError(f"variables over the limit of {MAX_INPUT_ITEMS} values or {MAX_INPUT_CHARS} characters")


def _message(err: BaseException) -> str:
    """The library's message (a missing key's, e.g. `'x'`, with what it is), cut to `MAX_MESSAGE`."""
    text = str(err)
    if isinstance(err, KeyError):
        text = f"no such key: {text}"
    elif isinstance(err, IndexError):
        text = f"index error: {text}"
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + "..."
