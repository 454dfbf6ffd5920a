"""Label selectors (apimachinery ``pkg/labels``): what a lister needs to filter its cache.

A selector is an AND of requirements. A ``!=`` or ``notin`` requirement matches objects *without*
the key, exactly as the API server does. ``str(selector)`` is canonical (requirements sorted by key,
values sorted), the form the API takes as ``labelSelector``.

The product lists its caches whole, so only matching lives here; parsing and validating selector
strings, which only the tests need, lives with them (tests/unit/informers/informers_selectors.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum


class Operator(StrEnum):
    """Requirement operators (``selection.Operator``)."""

    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    IN = "in"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    EXISTS = "exists"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


@dataclass(frozen=True, slots=True)
class Requirement:
    """One term of a selector: ``key``, an operator and its values."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        if op in (Operator.GREATER_THAN, Operator.LESS_THAN):
            if self.key not in labels or len(self.values) != 1:
                return False
            try:
                actual = int(labels[self.key], 10)
                wanted = int(self.values[0], 10)
            except ValueError:
                return False
            return actual > wanted if op is Operator.GREATER_THAN else actual < wanted
        return False

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        values = sorted(self.values)
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({','.join(values)})"
        symbol = {
            Operator.EQUALS: "=",
            Operator.DOUBLE_EQUALS: "==",
            Operator.NOT_EQUALS: "!=",
            Operator.GREATER_THAN: ">",
            Operator.LESS_THAN: "<",
        }[op]
        return f"{self.key}{symbol}{values[0] if values else ''}"


# -- selectors -------------------------------------------------------------------------------------


class Selector:
    """An AND of requirements; the empty selector matches everything."""

    __slots__ = ("_requirements",)

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        self._requirements: tuple[Requirement, ...] = tuple(sorted(requirements, key=lambda r: r.key))

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self._requirements)

    def empty(self) -> bool:
        """True for the selector that selects everything."""
        return not self._requirements

    def requirements(self) -> tuple[Requirement, ...]:
        return self._requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self._requirements)

    def __repr__(self) -> str:
        return f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selector) and self._requirements == other._requirements

    def __hash__(self) -> int:
        return hash(self._requirements)


class _NothingSelector(Selector):
    """Matches nothing (``labels.Nothing()``)."""

    __slots__ = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return False

    def empty(self) -> bool:
        return False

    def __str__(self) -> str:
        return ""

    def __repr__(self) -> str:
        return "Nothing()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _NothingSelector)

    def __hash__(self) -> int:
        return hash("nothing")


_EVERYTHING = Selector()
_NOTHING = _NothingSelector()


def everything() -> Selector:
    return _EVERYTHING


def nothing() -> Selector:
    return _NOTHING


def matches_nothing(selector: Selector) -> bool:
    return isinstance(selector, _NothingSelector)
