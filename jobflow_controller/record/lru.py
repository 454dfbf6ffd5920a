"""The bounded caches of the event correlator (``k8s.io/utils/lru``, as ``events_cache.go`` uses it).

The spam filter, the aggregator and the logger each key a cache by event fields; bounding them
means a controller that touches many objects forgets the oldest rather than growing without end.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["LRUCache"]

K = TypeVar("K")
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """A bounded map that evicts the least recently used entry (``k8s.io/utils/lru``).

    Not locked itself: each user below holds its own lock around get-modify-add sequences.
    """

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def add(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if self._max_entries > 0 and len(self._data) > self._max_entries:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)
