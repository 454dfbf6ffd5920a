"""A ListerWatcher that keeps only one shard's objects, so a shard's informers cache only its share.

The API server cannot select by a hash of the namespace, so the full LIST pages and watch streams
still arrive; the objects of other shards are dropped here, before the Reflector hands anything to
the DeltaFIFO and the cache. Memory and handler work divide by the number of shards; network
traffic and the API server's serialization work do not (docs/operations.md, "Sharding").

Dropping is safe because an object never changes shard: the shard is a function of the namespace,
and an object's namespace is immutable. BOOKMARK and ERROR events always pass: they carry the
resourceVersion and the watch's failures, which the Reflector needs whatever the shard.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from informers import ListerWatcher, ListOptions, ListResult, Watch, WatchEvent
from informers.listwatch import EventType, supports_watch_list

from .hash import shard_for_namespace

_ALWAYS_PASSED = frozenset({EventType.BOOKMARK.value, EventType.ERROR.value})


@dataclass(frozen=True, slots=True)
class ShardFilter:
    """Shard `shard` of `shards`: which namespaces, and so which objects, it owns."""

    shard: int
    shards: int

    def __post_init__(self) -> None:
        if not 0 <= self.shard < self.shards:
            raise ValueError(f"shard {self.shard} is not one of 0..{self.shards - 1}")

    def owns_namespace(self, namespace: str) -> bool:
        return shard_for_namespace(namespace, self.shards) == self.shard

    def owns(self, obj: Any) -> bool:
        """True for an object of one of this shard's namespaces (a cluster-scoped one has namespace "")."""
        metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
        namespace = (metadata or {}).get("namespace") or ""
        return self.owns_namespace(str(namespace))


class _FilteredWatch:
    def __init__(self, inner: Watch, shard: ShardFilter) -> None:
        self._inner = inner
        self._shard = shard

    def __iter__(self) -> Iterator[WatchEvent]:
        for event in self._inner:
            if event.type in _ALWAYS_PASSED or self._shard.owns(event.object):
                yield event

    def stop(self) -> None:
        self._inner.stop()


class ShardListerWatcher:
    """Wraps a ListerWatcher; LIST pages and watch events of other shards' namespaces are dropped.

    A page may come back with fewer items than `limit`, or none, and still a continue token: the
    Reflector's pager follows the token whatever the page's size, as it must for any server.
    """

    def __init__(self, inner: ListerWatcher, shard: ShardFilter) -> None:
        self.inner = inner
        self.shard = shard

    def list(self, options: ListOptions) -> ListResult:
        result = self.inner.list(options)
        items = [item for item in result.items if self.shard.owns(item)]
        return ListResult(items=items, resource_version=result.resource_version, continue_token=result.continue_token)

    def watch(self, options: ListOptions) -> Watch:
        return _FilteredWatch(self.inner.watch(options), self.shard)

    def is_watch_list_semantics_supported(self) -> bool:
        """As the wrapped ListerWatcher: the options go through unchanged and every BOOKMARK (the
        end of the initial events among them) is passed, so a watch-list stream stays whole."""
        return supports_watch_list(self.inner)
