"""Shared strings for cached objects: one copy of each dictionary key and common value.

A decoded JSON object owns every string in it. ``json.loads`` shares dictionary keys only within
one call and values never, so a cache filled from 10,000 list items decoded one by one, or from
10,000 watch events, holds 10,000 copies of ``"apiVersion"``, ``"batch.volcano.sh/v1alpha1"``,
``"ownerReferences"``, ``"Running"``: at 50-80 bytes each, a third of a small object's memory.

:meth:`StringTable.compact` copies an object (every dict and list anew, so the input is left as it
was) taking each string from the table, so that equal strings of different objects are one
string. Nothing observable changes: the copy is equal to the input, and strings are immutable.

The table is bounded, unlike ``sys.intern`` (whose strings CPython 3.12 keeps for ever): it has
two generations of at most ``capacity`` strings each; a string found in the older one moves to the
young one, and when the young one is full the older one is dropped. A key or value that recurs
across objects stays; the name, uid and resourceVersion of an object long gone age out after
``2 * capacity`` other new strings. Strings longer than ``max_length`` (rarely shared, costly to
hash) are kept as they are.

Sharing is safe without a lock: under concurrent use the worst case is a string the table forgets
or stores twice, never a wrong one, since any string it returns equals the one it was given.
"""

from __future__ import annotations

from typing import Any

DEFAULT_CAPACITY = 16384
DEFAULT_MAX_LENGTH = 256


class StringTable:
    """A bounded table of shared strings; :meth:`compact` rebuilds objects with them."""

    __slots__ = ("_old", "_young", "capacity", "max_length")

    def __init__(self, capacity: int = DEFAULT_CAPACITY, max_length: int = DEFAULT_MAX_LENGTH) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.max_length = max_length
        self._young: dict[str, str] = {}
        self._old: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    def share(self, value: str) -> str:
        """The table's string equal to ``value`` (``value`` itself the first time it is seen)."""
        young = self._young
        shared = young.get(value)
        if shared is not None:
            return shared
        if len(value) > self.max_length:
            return value
        shared = self._old.get(value, value)
        if len(young) >= self.capacity:
            self._old = young
            young = self._young = {}
        young[shared] = shared
        return shared

    def compact(self, obj: Any) -> Any:
        """A copy of ``obj`` whose dicts and lists are new and whose strings are the table's.

        Dicts and lists are rebuilt at every level (``obj`` is not modified); strings, keys
        included, come from the table; numbers, booleans and None are kept; anything else (a
        tombstone, a tuple) is returned as is, not descended into.
        """
        share = self.share

        def copy(value: Any) -> Any:
            kind = type(value)
            if kind is str:
                return share(value)
            if kind is dict:
                return {(share(k) if type(k) is str else k): copy(v) for k, v in value.items()}
            if kind is list:
                return [copy(v) for v in value]
            return value

        return copy(obj)
