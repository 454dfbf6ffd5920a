"""Selector strings for tests (apimachinery ``pkg/labels``): parse, validate, build from a set.

The product never parses a selector: its listers take :class:`informers.labels.Selector` values and
list whole caches. These are the test side of the same package, so that the lister and selector
tests can write ``parse("a in (b)")`` as client-go's tests do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum

from informers.labels import Operator, Requirement, Selector, everything, matches_nothing

__all__ = [
    "InvalidSelectorError",
    "add",
    "format_labels",
    "label_key_errors",
    "label_value_errors",
    "new_requirement",
    "parse",
    "requires_exact_match",
    "selector_from_set",
    "validated_selector_from_set",
]


class InvalidSelectorError(ValueError):
    """A requirement or selector string that the API server would reject."""


# -- validation (apimachinery util/validation) ----------------------------------------------------

_QUALIFIED_NAME_MAX_LENGTH = 63
_LABEL_VALUE_MAX_LENGTH = 63
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_NAME_CHARSET_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)


def label_key_errors(key: str) -> list[str]:
    """Why ``key`` is not a valid label key (a qualified name with an optional DNS prefix)."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
        errors: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        errors = []
        if not prefix:
            errors.append("prefix part must be non-empty")
        elif len(prefix) > _DNS1123_SUBDOMAIN_MAX_LENGTH:
            errors.append(f"prefix part must be no more than {_DNS1123_SUBDOMAIN_MAX_LENGTH} characters")
        elif not _DNS1123_SUBDOMAIN_RE.match(prefix):
            errors.append(
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character"
            )
    else:
        return [
            f"a qualified name {_NAME_CHARSET_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > _QUALIFIED_NAME_MAX_LENGTH:
        errors.append(f"name part must be no more than {_QUALIFIED_NAME_MAX_LENGTH} characters")
    elif not _QUALIFIED_NAME_RE.match(name):
        errors.append(f"name part {_NAME_CHARSET_MSG}")
    return errors


def label_value_errors(value: str) -> list[str]:
    """Why ``value`` is not a valid label value (empty is valid)."""
    errors = []
    if len(value) > _LABEL_VALUE_MAX_LENGTH:
        errors.append(f"must be no more than {_LABEL_VALUE_MAX_LENGTH} characters")
    if not _LABEL_VALUE_RE.match(value):
        errors.append(f"a valid label {_NAME_CHARSET_MSG}")
    return errors


def _is_int(text: str) -> bool:
    try:
        int(text, 10)
    except ValueError:
        return False
    return True


def new_requirement(key: str, operator: Operator | str, values: Iterable[str] = ()) -> Requirement:
    """A validated :class:`Requirement` (``labels.NewRequirement``)."""
    try:
        op = Operator(operator)
    except ValueError:
        raise InvalidSelectorError(f"operator: Unsupported value: {operator!r}") from None
    vals = tuple(values)
    errors = [f"key: {e}" for e in label_key_errors(key)]
    if op in (Operator.IN, Operator.NOT_IN):
        if not vals:
            errors.append("values: for 'in', 'notin' operators, values set can't be empty")
    elif op in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
        if len(vals) != 1:
            errors.append("values: exact-match compatibility requires one single value")
    elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if vals:
            errors.append("values: values set must be empty for exists and does not exist")
    elif op in (Operator.GREATER_THAN, Operator.LESS_THAN):
        if len(vals) != 1:
            errors.append("values: for 'Gt', 'Lt' operators, exactly one value is required")
        errors.extend(
            f"values[{i}]: for 'Gt', 'Lt' operators, the value must be an integer"
            for i, v in enumerate(vals)
            if not _is_int(v)
        )
    for i, value in enumerate(vals):
        errors.extend(f"values[{i}]: Invalid value: {value!r}: {e}" for e in label_value_errors(value))
    if errors:
        raise InvalidSelectorError("; ".join(errors))
    return Requirement(key, op, vals)


def add(selector: Selector, *requirements: Requirement) -> Selector:
    """``Selector.Add``: a new selector with more requirements; ``Nothing()`` stays nothing."""
    if matches_nothing(selector):
        return selector
    return Selector((*selector.requirements(), *requirements))


def requires_exact_match(selector: Selector, key: str) -> str | None:
    """The value ``key`` must have, if a requirement pins it to exactly one."""
    for r in selector.requirements():
        exact = r.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)
        if r.key == key and exact and len(r.values) == 1:
            return r.values[0]
    return None


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """``k=v`` for every pair, unvalidated (``labels.SelectorFromSet``)."""
    if not labels:
        return everything()
    return Selector(Requirement(k, Operator.EQUALS, (v,)) for k, v in labels.items())


def validated_selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """Like :func:`selector_from_set`, but invalid keys or values raise."""
    if not labels:
        return everything()
    return Selector(new_requirement(k, Operator.EQUALS, (v,)) for k, v in labels.items())


def format_labels(labels: Mapping[str, str]) -> str:
    """``labels.Set.String()``: ``k1=v1,k2=v2`` sorted by key."""
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


# -- parsing ---------------------------------------------------------------------------------------


class _Tok(StrEnum):
    IDENTIFIER = "identifier"
    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    GREATER_THAN = ">"
    LESS_THAN = "<"
    COMMA = ","
    OPEN_PAR = "("
    CLOSED_PAR = ")"
    IN = "in"
    NOT_IN = "notin"
    END = "end of string"


_SYMBOLS = ("!=", "==", "!", "=", ">", "<", ",", "(", ")")
_SPECIAL_CHARS = frozenset("!=<>,()")
_KEYWORDS = {"in": _Tok.IN, "notin": _Tok.NOT_IN}
_OPERATOR_TOKENS = {
    _Tok.IN: Operator.IN,
    _Tok.NOT_IN: Operator.NOT_IN,
    _Tok.EQUALS: Operator.EQUALS,
    _Tok.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
    _Tok.NOT_EQUALS: Operator.NOT_EQUALS,
    _Tok.GREATER_THAN: Operator.GREATER_THAN,
    _Tok.LESS_THAN: Operator.LESS_THAN,
}


def _lex(text: str) -> list[tuple[_Tok, str]]:
    tokens: list[tuple[_Tok, str]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch in _SPECIAL_CHARS:
            for symbol in _SYMBOLS:
                if text.startswith(symbol, i):
                    tokens.append((_Tok(symbol), symbol))
                    i += len(symbol)
                    break
            continue
        start = i
        while i < n and not text[i].isspace() and text[i] not in _SPECIAL_CHARS:
            i += 1
        word = text[start:i]
        tokens.append((_KEYWORDS.get(word, _Tok.IDENTIFIER), word))
    tokens.append((_Tok.END, ""))
    return tokens


class _Parser:
    """A recursive-descent parser following apimachinery's grammar and error messages."""

    def __init__(self, text: str) -> None:
        self._tokens = _lex(text)
        self._pos = 0

    def _lookahead(self, values_context: bool = True) -> tuple[_Tok, str]:
        tok, lit = self._tokens[self._pos]
        if values_context and tok in (_Tok.IN, _Tok.NOT_IN):
            tok = _Tok.IDENTIFIER  # keywords are ordinary words where a key or value is expected
        return tok, lit

    def _consume(self, values_context: bool = True) -> tuple[_Tok, str]:
        tok, lit = self._lookahead(values_context)
        if self._pos < len(self._tokens) - 1:
            self._pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self._lookahead()
            if tok in (_Tok.IDENTIFIER, _Tok.DOES_NOT_EXIST):
                requirements.append(self._parse_requirement())
                tok, lit = self._consume()
                if tok is _Tok.END:
                    return requirements
                if tok is _Tok.COMMA:
                    tok2, lit2 = self._lookahead()
                    if tok2 not in (_Tok.IDENTIFIER, _Tok.DOES_NOT_EXIST):
                        raise InvalidSelectorError(f"found '{lit2}', expected: identifier after ','")
                    continue
                raise InvalidSelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            if tok is _Tok.END:
                return requirements
            raise InvalidSelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def _parse_requirement(self) -> Requirement:
        key, operator = self._parse_key_and_infer_operator()
        if operator is not None:
            return new_requirement(key, operator)
        operator = self._parse_operator()
        set_based = operator in (Operator.IN, Operator.NOT_IN)
        values = self._parse_values() if set_based else self._parse_exact_value()
        return new_requirement(key, operator, sorted(values))

    def _parse_key_and_infer_operator(self) -> tuple[str, Operator | None]:
        operator: Operator | None = None
        tok, lit = self._consume()
        if tok is _Tok.DOES_NOT_EXIST:
            operator = Operator.DOES_NOT_EXIST
            tok, lit = self._consume()
        if tok is not _Tok.IDENTIFIER:
            raise InvalidSelectorError(f"found '{lit}', expected: identifier")
        key_errors = label_key_errors(lit)
        if key_errors:
            raise InvalidSelectorError(f"key: Invalid value: {lit!r}: {'; '.join(key_errors)}")
        next_tok, _ = self._lookahead()
        if next_tok in (_Tok.END, _Tok.COMMA) and operator is None:
            operator = Operator.EXISTS
        return lit, operator

    def _parse_operator(self) -> Operator:
        tok, lit = self._consume(values_context=False)
        operator = _OPERATOR_TOKENS.get(tok)
        if operator is None:
            raise InvalidSelectorError(f"found '{lit}', expected: in, notin, =, ==, !=, gt, lt")
        return operator

    def _parse_values(self) -> set[str]:
        tok, lit = self._consume()
        if tok is not _Tok.OPEN_PAR:
            raise InvalidSelectorError(f"found '{lit}' expected: '('")
        tok, lit = self._lookahead()
        if tok in (_Tok.IDENTIFIER, _Tok.COMMA):
            values = self._parse_identifiers_list()
            tok, lit = self._consume()
            if tok is not _Tok.CLOSED_PAR:
                raise InvalidSelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok is _Tok.CLOSED_PAR:
            self._consume()
            return {""}
        raise InvalidSelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def _parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self._consume()
            if tok is _Tok.IDENTIFIER:
                values.add(lit)
                tok2, lit2 = self._lookahead()
                if tok2 is _Tok.COMMA:
                    continue
                if tok2 is _Tok.CLOSED_PAR:
                    return values
                raise InvalidSelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok is _Tok.COMMA:
                # "(," ",)" and ",," each stand for an empty value.
                if not values:
                    values.add("")
                tok2, _ = self._lookahead()
                if tok2 is _Tok.CLOSED_PAR:
                    values.add("")
                    return values
                if tok2 is _Tok.COMMA:
                    self._consume()
                    values.add("")
                continue
            raise InvalidSelectorError(f"found '{lit}', expected: ',', or identifier")

    def _parse_exact_value(self) -> set[str]:
        tok, _ = self._lookahead()
        if tok in (_Tok.END, _Tok.COMMA):
            return {""}
        tok, lit = self._consume()
        if tok is _Tok.IDENTIFIER:
            return {lit}
        raise InvalidSelectorError(f"found '{lit}', expected: identifier")


def parse(text: str) -> Selector:
    """Parse the string form (``a=b,c in (d,e),!f``); raises :class:`InvalidSelectorError`."""
    try:
        return Selector(_Parser(text).parse())
    except InvalidSelectorError as err:
        raise InvalidSelectorError(f"unable to parse requirement: {err}") from None
