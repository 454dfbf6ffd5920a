"""The bounded caches of the event correlator (``k8s.io/utils/lru``, as ``events_cache.go`` uses it).

The spam filter, the aggregator and the logger each key a cache by event fields; bounding them
means a controller that touches many objects forgets the oldest rather than growing without end.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["LRUCache"]

V = TypeVar("V")


def _digest(key: str) -> bytes:
    return hashlib.blake2b(key.encode(), digest_size=16).digest()


class LRUCache(Generic[V]):
    """A bounded map from string keys that evicts the least recently used entry (``k8s.io/utils/lru``).

    A key is kept as its 16-byte BLAKE2b digest: the correlator's keys concatenate an event's
    fields (200 to 300 bytes each), and three full caches of 4096 held about 3 MiB of them, a
    cost a long-running controller reaches only after hours of distinct events, as RSS that
    looks like a leak. Two keys share an entry only if their digests collide (odds of 2**-128).

    Not locked itself: each user below holds its own lock around get-modify-add sequences.
    """

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._data: OrderedDict[bytes, V] = OrderedDict()

    def get(self, key: str) -> V | None:
        digest = _digest(key)
        value = self._data.get(digest)
        if value is not None:
            self._data.move_to_end(digest)
        return value

    def add(self, key: str, value: V) -> None:
        digest = _digest(key)
        self._data[digest] = value
        self._data.move_to_end(digest)
        if self._max_entries > 0 and len(self._data) > self._max_entries:
            self._data.popitem(last=False)

    def oldest(self) -> V | None:
        """The least recently used value, without touching it."""
        return next(iter(self._data.values()), None)

    def pop_oldest(self) -> None:
        if self._data:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)
