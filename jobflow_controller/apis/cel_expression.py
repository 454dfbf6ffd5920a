"""Ours, opt-in: CEL expressions a tenant wrote (`when[].cel`, a trigger's `cel` bindings), compiled and
evaluated with the `common-expression-language` library (docs/decisions/0001-cel-library.md).

The library has no cost limit and runs on the calling thread's stack, so this module bounds what it
may be given before it sees it (docs/hostile-input.md; each limit measured in the decision record):
* the text: at most `MAX_CEL_LENGTH` characters (so at most ~512 levels deep: a 1 MiB stack is
  enough, our threads have 8 MiB), brackets nested at most `MAX_NESTING` deep; at most
  `MAX_COMPREHENSIONS` comprehensions (`all`, `exists`, `exists_one`, `filter`), none inside
  another (no product of lists), each at most `MAX_COMPREHENSION_TEXT` characters, and inside one
  `in` only on a list literal (else a nested loop); no `map()` (its result can copy the variables per
  element); at most `MAX_ADDITIONS` `+` (the one operator that makes a string or a list longer); at
  most `MAX_MATCHES` `matches()`, outside comprehensions, on a string literal of at most
  `MAX_PATTERN_LENGTH` characters without `{n}` (the library compiles the regex at every call);
* the variables: at most `MAX_INPUT_ITEMS` values (each list element, map entry and scalar),
  `MAX_CONTAINER_ITEMS` in one list or map, `MAX_INPUT_CHARS` characters of strings in all.
The text is scanned by the same lexical rules as CEL's (string literals, raw and triple-quoted, and
`//` comments hide brackets and operators), its length checked first.
The library is imported on first use: a controller that never meets a CEL expression does not load it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import cel

#: The longest expression (the CRD's maxLength for `when[].cel`).
MAX_CEL_LENGTH: Final = 1024
#: The deepest nesting of `(`, `[` and `{`: deep enough for any condition a person writes (the
#: library's own parser refuses at about 96 parentheses).
MAX_NESTING: Final = 32
#: Comprehension macros in one expression, none inside another, and the longest text between a
#: macro's parentheses (its variable and predicate: what runs once per element).
MAX_COMPREHENSIONS: Final = 2
MAX_COMPREHENSION_TEXT: Final = 100
#: `+` operators in one expression.
MAX_ADDITIONS: Final = 8
#: `matches()` calls in one expression, and the longest pattern (a string literal).
MAX_MATCHES: Final = 1
MAX_PATTERN_LENGTH: Final = 32
#: Values in the variables of one evaluation (list elements, map entries, scalars), and in one list
#: or map (what a comprehension iterates over).
MAX_INPUT_ITEMS: Final = 4096
MAX_CONTAINER_ITEMS: Final = 256
#: Characters of strings (map keys and values) in the variables of one evaluation.
MAX_INPUT_CHARS: Final = 128 * 1024
#: The longest library message carried by a `CelError` (a parse error quotes the expression).
MAX_MESSAGE: Final = 600
#: Compiled programs kept by text: a worker re-judging a flow does not compile its expression again.
CACHE_SIZE: Final = 1024

MACROS: Final = frozenset({"all", "exists", "exists_one", "filter"})
#: Calls refused, with why.
_REFUSED_CALLS: Final = {
    "map": "its result can hold a copy of the variables for each element (use all, exists, exists_one, filter)",
}

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
    _check_length(text)
    return _compile_cached(text)


def _check_length(text: object) -> None:
    """First of all: the scan below is quadratic at worst (an unterminated string tried from each quote)."""
    if not isinstance(text, str):
        raise CelError(f"must be a string, not {type(text).__name__}")
    if len(text) > MAX_CEL_LENGTH:
        raise CelError(f"longer than {MAX_CEL_LENGTH} characters ({len(text)})")


@functools.lru_cache(maxsize=CACHE_SIZE)
def _compile_cached(text: str) -> CompiledCel:
    """Refusals raise and are not cached (lru_cache keeps only returned values)."""
    check_shape(text)
    import cel  # here, not at the top: the library's package imports its CLI (~150 ms, ~30 MiB)

    try:
        program = cel.compile(text)
    except Exception as err:  # noqa: BLE001 (the library raises ValueError)
        raise CelError(_message(err)) from None
    except BaseException as err:  # noqa: BLE001 (a Rust panic; _panic re-raises the rest)
        raise _panic(err) from None
    return CompiledCel(text, program)


def evaluate_cel(compiled: CompiledCel, variables: Mapping[str, object]) -> object:
    """The expression's value for `variables` (the caller checks its type); raises `CelError` when the
    variables are over the limits or the evaluation fails (a missing key, a type error, an overflow)."""
    check_input(variables)
    try:
        return compiled.program.execute(dict(variables))
    except Exception as err:  # noqa: BLE001 (KeyError, TypeError, OverflowError, RuntimeError, ...)
        raise CelError(_message(err)) from None
    except BaseException as err:  # noqa: BLE001 (a Rust panic; _panic re-raises the rest)
        raise _panic(err) from None


def _panic(err: BaseException) -> BaseException:
    """A Rust panic in the library (pyo3's PanicException, a BaseException) as a `CelError`; anything
    else (KeyboardInterrupt, SystemExit) as itself."""
    if type(err).__name__ != "PanicException":
        return err
    return CelError(f"the CEL library failed: {_message(err)}")


@dataclass
class _Shape:
    """What `check_shape` has counted so far."""

    stack: list[tuple[str, bool]] = field(default_factory=list)  # (closing bracket, a comprehension's)
    comprehensions: int = 0
    additions: int = 0
    matches: int = 0
    opened_at: int = 0  # where the last comprehension's "(" is

    def in_comprehension(self) -> bool:
        return any(is_macro for _, is_macro in self.stack)


def check_shape(text: str) -> None:
    """Raise `CelError` when `text` breaks one of the static limits of the module docstring."""
    _check_length(text)
    tokens = [(m.lastgroup or "", m.group(), m.start()) for m in _TOKEN.finditer(text) if m.lastgroup != "skip"]
    shape = _Shape()
    for i, (kind, token, at) in enumerate(tokens):
        if kind == "quote":
            raise CelError(f"unterminated string at character {at}")
        called = kind == "ident" and i + 1 < len(tokens) and tokens[i + 1][1] == "("
        if called and token in _REFUSED_CALLS:
            raise CelError(f"{token}() is not allowed: {_REFUSED_CALLS[token]}")
        if called and token == "matches":
            _check_matches(tokens[i + 2 : i + 4], shape, at)
        if token in _OPEN:
            _open(shape, token, macro=i > 0 and tokens[i - 1][1] in MACROS and tokens[i - 1][0] == "ident", at=at)
        elif shape.stack and token == shape.stack[-1][0]:
            _, macro = shape.stack.pop()
            if macro and at - shape.opened_at > MAX_COMPREHENSION_TEXT:
                raise CelError(f"a comprehension longer than {MAX_COMPREHENSION_TEXT} characters at character {at}")
        elif token == "in" and shape.in_comprehension() and (i + 1 == len(tokens) or tokens[i + 1][1] != "["):
            raise CelError(f"in a comprehension, 'in' takes a list literal, at character {at}")
        elif token == "+":
            shape.additions += 1
            if shape.additions > MAX_ADDITIONS:
                raise CelError(f"more than {MAX_ADDITIONS} '+' operators")


def _open(shape: _Shape, token: str, *, macro: bool, at: int) -> None:
    """A bracket opens: count the nesting, and the comprehension it may start."""
    macro = macro and token == "("
    if macro:
        if shape.in_comprehension():
            raise CelError(f"a comprehension inside another comprehension at character {at}")
        shape.comprehensions += 1
        shape.opened_at = at
        if shape.comprehensions > MAX_COMPREHENSIONS:
            raise CelError(f"more than {MAX_COMPREHENSIONS} comprehensions (all, exists, exists_one, filter)")
    shape.stack.append((_OPEN[token], macro))
    if len(shape.stack) > MAX_NESTING:
        raise CelError(f"nested deeper than {MAX_NESTING} brackets")


def _check_matches(arguments: list[tuple[str, str, int]], shape: _Shape, at: int) -> None:
    """`matches` compiles its pattern at every call (up to 0.4 s for a 1 KiB one): a short literal,
    without counted repetition, a few times, never in a comprehension."""
    shape.matches += 1
    if shape.matches > MAX_MATCHES:
        raise CelError(f"more than {MAX_MATCHES} matches() calls")
    if shape.in_comprehension():
        raise CelError(f"matches() inside a comprehension at character {at}")
    if len(arguments) < 2 or arguments[0][0] != "string" or arguments[1][1] != ")":
        raise CelError(f"matches() takes one string literal, at character {at}")
    pattern = arguments[0][1]
    if len(pattern) > MAX_PATTERN_LENGTH + 2 or "{" in pattern:
        raise CelError(
            f"a matches() pattern is at most {MAX_PATTERN_LENGTH} characters, without {{n}} repetition,"
            f" at character {at}"
        )


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
            _check_container(len(value))
            for key, item in value.items():
                chars += len(key) if isinstance(key, str) else 0
                pending.append(item)
        elif isinstance(value, list | tuple):
            _check_container(len(value))
            pending.extend(value)
        elif value is not None and not isinstance(value, bool | int | float):
            raise CelError(f"a variable holds a {type(value).__name__}, not a JSON value")
        if items > MAX_INPUT_ITEMS or chars > MAX_INPUT_CHARS:
            raise CelError(f"variables over the limit of {MAX_INPUT_ITEMS} values or {MAX_INPUT_CHARS} characters")


def _check_container(size: int) -> None:
    if size > MAX_CONTAINER_ITEMS:
        raise CelError(f"a variable holds a list or map of {size} values, more than {MAX_CONTAINER_ITEMS}")


def _message(err: BaseException) -> str:
    """The library's message (a missing key's, e.g. `'x'`, with what it is), cut to `MAX_MESSAGE`."""
    text = str(err)
    if isinstance(err, KeyError):
        text = f"no such key: {text}"
    elif isinstance(err, IndexError):
        text = f"index error: {text}"
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + "..."
