"""Which objects a shard owns: those of the namespaces that hash to it (a unit's views use it, fanout.py).

Routing by it is safe because an object never changes shard: the shard is a function of the
namespace, and an object's namespace is immutable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .hash import shard_for_namespace


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
