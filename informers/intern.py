"""Shared strings and shared subtrees for cached objects: one copy of what many objects hold.

A decoded JSON object owns every string, dict and list in it. A cache of 10,000 Jobs made from
a handful of JobTemplates holds 10,000 equal copies of the same ``spec`` (every Job of a template
carries the template's spec verbatim), and 10,000 copies of ``"bench"``, ``"Running"``,
``"volcano"``: in CPython a dict costs 200-350 bytes and a short string 50-80, so the copies are
most of a cache's memory. They also cost time: every container is tracked by the cyclic garbage
collector, whose full collections walk every live container, so a cache of 500,000 containers
makes each of them take a quarter of a second.

:class:`Interner` is a transform (client-go's ``TransformFunc``) that rebuilds an object so that
equal parts of different objects are one: a subtree (any dict or list below ``metadata`` and
the top level) equal to one seen before is replaced by that one, and strings are taken from a
:class:`StringTable`. Two subtrees are equal when their compact JSON texts are: that is exact
equality of JSON values, types included (``1``, ``1.0`` and ``true`` differ, and so does the
order of a dict's keys, so iteration order is kept too). A subtree is kept in the table from the
second time it is seen, so values that only one object has are never held there. The texts are made by the C encoder of
the standard library; a subtree seen for the first time is rebuilt from shared children, down to
``max_depth`` levels, so two specs that differ in one field still share all the rest.

Nothing observable changes, under one condition the package already imposes: cached objects are
shared and read-only, never mutated (see the ``informers`` package docstring).
A shared subtree mutated through one object would change every object holding it, as a mutated
cached object already changes what every other reader of the cache sees. Copies
(``copy.deepcopy``, ``json`` round trips) are unaffected, and the top-level dict and ``metadata``
of every object are its own, never shared.

Both tables are bounded, unlike ``sys.intern`` (whose strings CPython keeps for ever): each has
two generations of at most ``capacity`` entries; an entry found in the older one moves to the
young one, and when the young one is full the older one is dropped. What recurs across objects
stays; the name, uid and resourceVersion of an object long gone age out. Strings longer than
``max_length`` (rarely shared, costly to hash) are kept as they are.

The tables are safe to share between threads without a lock: under concurrent use the worst case
is an entry forgotten or stored twice, never a wrong one, since whatever a table returns is equal
to what it was given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

#: Strings per generation. What recurs across objects (keys, kinds, template names, label values a
#: template gives) is a few hundred strings, looked up by every object, so it stays in the young
#: generation; the rest is one object's own (the names of its Jobs, its timestamps) and only waits
#: there to age out. 16,384 took an hour of churn at one JobFlow a second to fill (the soak's RSS
#: grew by it all hour); at 2,048, 10,000 cached Jobs hold 22.45 MiB with the table, against
#: 22.73 MiB at 16,384 (bench/informers.py's Jobs, deep sizes, shared strings counted once).
DEFAULT_CAPACITY = 2048
DEFAULT_MAX_LENGTH = 256
#: Subtrees per generation. A subtree enters the table the second time it is seen, which for one
#: object's own parts (its flows, its status lists) is its next update: 4,096 filled for over an
#: hour of the soak (+1.4 MiB from minute 30 to 60). 10,000 of bench/informers.py's Jobs, each
#: updated twice: cache and tables 23.62 MiB at 1,024 against 25.43 MiB at 4,096 (512: 23.29).
DEFAULT_SUBTREE_CAPACITY = 1024
DEFAULT_MAX_DEPTH = 4

#: Metadata strings that belong to one object: looking them up would only fill the string table.
OWN_METADATA_FIELDS = frozenset({"name", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"})

V = TypeVar("V")
K = TypeVar("K", bound=Hashable)

Fingerprint = Callable[[Any], str | bytes]
"""Compact JSON text of a value: equal texts must mean equal JSON values, types included."""

#: The standard library's C encoder; without the circular-reference check (decoded JSON has no
#: cycles) it is about twice as fast. ``allow_nan`` keeps NaN and infinities distinct from null.
standard_fingerprint: Fingerprint = json.JSONEncoder(separators=(",", ":"), check_circular=False, allow_nan=True).encode


class _Generations(Generic[K, V]):
    """A bounded map: two generations of at most ``capacity`` entries, oldest dropped whole."""

    __slots__ = ("_old", "_young", "capacity")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self._young: dict[K, V] = {}
        self._old: dict[K, V] = {}

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    def get(self, key: K) -> V | None:
        value = self._young.get(key)
        if value is None:
            value = self._old.get(key)
            if value is not None:
                self.put(key, value)
        return value

    def put(self, key: K, value: V) -> None:
        young = self._young
        if len(young) >= self.capacity:
            self._old = young
            young = self._young = {}
        young[key] = value


class StringTable:
    """A bounded table of shared strings; :meth:`compact` rebuilds objects with them."""

    __slots__ = ("_table", "max_length")

    def __init__(self, capacity: int = DEFAULT_CAPACITY, max_length: int = DEFAULT_MAX_LENGTH) -> None:
        self._table: _Generations[str, str] = _Generations(capacity)
        self.max_length = max_length

    @property
    def capacity(self) -> int:
        return self._table.capacity

    def __len__(self) -> int:
        return len(self._table)

    def share(self, value: str) -> str:
        """The table's string equal to ``value`` (``value`` itself the first time it is seen)."""
        table = self._table
        shared = table._young.get(value)  # the common case, without a call
        if shared is not None:
            return shared
        if len(value) > self.max_length:
            return value
        shared = table.get(value)
        if shared is None:
            table.put(value, value)
            return value
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


class Interner:
    """A transform that shares equal subtrees and strings between the objects it is given.

    Give every informer of a process the same instance (a shared informer factory's transform
    is), so that objects of different resources share too. The input is never modified; the
    output is a new top-level dict with a new ``metadata`` dict, whose other parts may be shared
    with earlier outputs. Anything that is not a dict (a tombstone) is returned as is. Applying
    it to its own output returns an equal object, as client-go asks of a transform.
    """

    __slots__ = ("_encode", "_seen", "_subtrees", "max_depth", "strings")

    def __init__(
        self,
        strings: StringTable | None = None,
        *,
        fingerprint: Fingerprint | None = None,
        subtree_capacity: int = DEFAULT_SUBTREE_CAPACITY,
        max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        self.strings = strings if strings is not None else StringTable()
        self._subtrees: _Generations[str | bytes, Any] = _Generations(subtree_capacity)
        # Hashes of subtrees seen once: a subtree enters the table the second time it is seen.
        self._seen: _Generations[int, bool] = _Generations(4 * subtree_capacity)
        self.max_depth = max_depth
        self._encode: Fingerprint = fingerprint or standard_fingerprint

    def __call__(self, obj: Any) -> Any:
        if type(obj) is not dict:
            return obj
        share = self.strings.share
        out: dict[Any, Any] = {}
        # Keys at this level and in metadata are kept as decoded: a decoder that shares keys
        # (orjson across documents, json.loads within one list) has already made them one.
        for key, value in obj.items():
            kind = type(value)
            if kind is str:
                value = share(value)
            elif kind is dict and key == "metadata":
                value = self._metadata(value)
            elif kind is dict or kind is list:
                value = self._subtree(value, 0)
            out[key] = value
        return out

    def _metadata(self, metadata: dict[Any, Any]) -> dict[Any, Any]:
        """A new metadata dict: its own strings kept, shared ones (namespace) and subtrees shared."""
        share = self.strings.share
        out: dict[Any, Any] = {}
        for key, value in metadata.items():
            kind = type(value)
            if kind is str:
                if key not in OWN_METADATA_FIELDS:
                    value = share(value)
            elif kind is dict or kind is list:
                value = self._subtree(value, 0)
            out[key] = value
        return out

    def _value(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            return self.strings.share(value)
        if kind is dict or kind is list:
            return self._subtree(value, depth)
        return value

    def _subtree(self, value: Any, depth: int) -> Any:
        """The shared subtree equal to ``value``, made from ``value`` if none is known yet."""
        try:
            text = self._encode(value)
        except (TypeError, ValueError):
            return value  # not plain JSON (an object someone put in): leave it alone
        shared = self._subtrees.get(text)
        if shared is not None:
            return shared
        if depth >= self.max_depth:
            shared = self.strings.compact(value)
        elif type(value) is dict:
            share = self.strings.share
            shared = {share(k) if type(k) is str else k: self._value(v, depth + 1) for k, v in value.items()}
        else:
            shared = [self._value(v, depth + 1) for v in value]
        # Only a subtree seen twice is kept: a value only one object has (a status with its own
        # timestamps) would otherwise sit in the table, key and all, until it ages out.
        seen = hash(text)
        if self._seen.get(seen) is None:
            self._seen.put(seen, True)
            return shared
        if type(text) is bytes:
            # A fast encoder may hand back its whole output buffer (orjson's keeps 4 KiB for a
            # 100-byte text); the key kept for good must be a compact copy.
            text = bytes(memoryview(text))
        self._subtrees.put(text, shared)
        return shared

    def __len__(self) -> int:
        """How many subtrees the table holds (strings not counted)."""
        return len(self._subtrees)
