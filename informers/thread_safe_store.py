"""``ThreadSafeStore``: the key → object map behind every cache, with its indices.

One lock guards items and indices together, so an index never disagrees with the items a reader
sees. Objects are stored as given and handed out shared: callers must never mutate them.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from informers.index import (
    Index,
    IndexerConflictError,
    Indexers,
    IndexFunc,
    IndexFuncError,
    Indices,
    UnknownIndexError,
)

# (index name, values before, values after) for one object.
_IndexChange = tuple[str, list[str], list[str]]


class ThreadSafeStore:
    """A lock-protected dict of objects by key, indexed by the registered index functions."""

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, Any] = {}
        self._indexers: Indexers = dict(indexers or {})
        self._indices: Indices = {}

    # -- writes ---------------------------------------------------------------------------------

    def add(self, key: str, obj: Any) -> None:
        self.update(key, obj)

    def update(self, key: str, obj: Any) -> None:
        with self._lock:
            old = self._items.get(key, _ABSENT)
            # Compute every index value before touching anything: a failing index function leaves
            # the store exactly as it was instead of half-updated.
            changes = self._index_changes(old, obj, key)
            self._items[key] = obj
            self._apply_index_changes(key, changes)

    def delete(self, key: str) -> None:
        """Remove ``key``; deleting an absent key is a no-op."""
        with self._lock:
            old = self._items.get(key, _ABSENT)
            if old is _ABSENT:
                return
            changes = self._index_changes(old, _ABSENT, key)
            del self._items[key]
            self._apply_index_changes(key, changes)

    def replace(self, items: Mapping[str, Any], resource_version: str = "") -> None:
        """Swap in a whole new content and rebuild every index from scratch."""
        del resource_version  # kept for the Store shape; the map itself has no use for it
        new_items = dict(items)
        with self._lock:
            new_indices: Indices = {}
            for key, obj in new_items.items():
                for name, index_func in self._indexers.items():
                    index = new_indices.setdefault(name, {})
                    for value in _index_values(index_func, obj, key, name):
                        index.setdefault(value, set()).add(key)
            self._items = new_items
            self._indices = new_indices

    def resync(self) -> None:
        """Nothing to do: the map is its own source of truth."""

    def add_indexers(self, new_indexers: Mapping[str, IndexFunc]) -> None:
        """Register more index functions and index the existing items with them at once."""
        with self._lock:
            conflicts = set(new_indexers) & set(self._indexers)
            if conflicts:
                raise IndexerConflictError(conflicts)
            built: Indices = {}
            for name, index_func in new_indexers.items():
                index: Index = {}
                for key, obj in self._items.items():
                    for value in _index_values(index_func, obj, key, name):
                        index.setdefault(value, set()).add(key)
                built[name] = index
            self._indexers.update(new_indexers)
            self._indices.update(built)

    # -- reads ----------------------------------------------------------------------------------

    def get(self, key: str) -> tuple[Any, bool]:
        """``(obj, True)``, or ``(None, False)`` when the key is absent."""
        with self._lock:
            obj = self._items.get(key, _ABSENT)
        if obj is _ABSENT:
            return None, False
        return obj, True

    def list(self) -> builtins.list[Any]:
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        """The objects sharing any index value with ``obj`` (deduplicated)."""
        with self._lock:
            index_func = self._indexers.get(index_name)
            if index_func is None:
                raise UnknownIndexError(index_name)
            values = index_func(obj)
            index = self._indices.get(index_name, {})
            keys: set[str] = set()
            for value in values:
                keys |= index.get(value, set())
            return [self._items[k] for k in keys]

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        """The objects whose index values for ``index_name`` include ``indexed_value``."""
        with self._lock:
            if index_name not in self._indexers:
                raise UnknownIndexError(index_name)
            keys = self._indices.get(index_name, {}).get(indexed_value, set())
            return [self._items[k] for k in keys]

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        """The keys whose index values include ``indexed_value``, sorted."""
        with self._lock:
            if index_name not in self._indexers:
                raise UnknownIndexError(index_name)
            return sorted(self._indices.get(index_name, {}).get(indexed_value, set()))

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value currently present in the index (empty sets are pruned, so none are stale)."""
        with self._lock:
            return list(self._indices.get(index_name, {}))

    def get_indexers(self) -> Indexers:
        with self._lock:
            return dict(self._indexers)

    # -- index maintenance ----------------------------------------------------------------------

    def _index_changes(self, old: Any, new: Any, key: str) -> builtins.list[_IndexChange]:
        changes: builtins.list[_IndexChange] = []
        for name, index_func in self._indexers.items():
            old_values = [] if old is _ABSENT else _index_values(index_func, old, key, name)
            new_values = [] if new is _ABSENT else _index_values(index_func, new, key, name)
            if len(old_values) == 1 and len(new_values) == 1 and old_values[0] == new_values[0]:
                continue  # the common case: one value, unchanged
            changes.append((name, old_values, new_values))
        return changes

    def _apply_index_changes(self, key: str, changes: Iterable[_IndexChange]) -> None:
        for name, old_values, new_values in changes:
            index = self._indices.setdefault(name, {})
            for value in old_values:
                keys = index.get(value)
                if keys is None:
                    continue
                keys.discard(key)
                if not keys:
                    # An empty set must go, or the index leaks one entry per value ever seen.
                    del index[value]
            for value in new_values:
                index.setdefault(value, set()).add(key)


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


_ABSENT: Any = _Absent()


def _index_values(index_func: IndexFunc, obj: Any, key: str, name: str) -> builtins.list[str]:
    try:
        return list(index_func(obj))
    except Exception as err:
        raise IndexFuncError(key, name, err) from err
