"""Which shard a namespace belongs to, and which shard a StatefulSet pod prefers.

The hash must give every replica, every process and every Python version the same answer, which
Python's `hash()` does not (string hashing is salted per process). FNV-1a over the namespace's
UTF-8 bytes is tiny, well spread on short names, and what Go's `hash/fnv` `New32a` computes, so a
Go tool or a shell script can reproduce the assignment.
"""

from __future__ import annotations

import functools
import re

_FNV32_OFFSET_BASIS = 0x811C9DC5
_FNV32_PRIME = 0x01000193
_MASK32 = 0xFFFFFFFF

#: A StatefulSet names its pods `<statefulset>-<ordinal>`.
_ORDINAL_SUFFIX = re.compile(r"-(\d+)$")


def fnv32a(data: bytes) -> int:
    """32-bit FNV-1a of `data` (Go's `fnv.New32a().Sum32()`)."""
    value = _FNV32_OFFSET_BASIS
    for byte in data:
        value ^= byte
        value = (value * _FNV32_PRIME) & _MASK32
    return value


def shard_for_namespace(namespace: str, shards: int) -> int:
    """The shard of every object in `namespace`, out of `shards` (>= 1)."""
    if shards < 1:
        raise ValueError(f"shards must be at least 1, got {shards}")
    return _namespace_hash(namespace) % shards


@functools.lru_cache(maxsize=4096)
def _namespace_hash(namespace: str) -> int:
    """Every event routed to the shard units hashes its namespace: a cluster has few namespaces."""
    return fnv32a(namespace.encode("utf-8"))


def ordinal_from_name(name: str) -> int | None:
    """The ordinal a StatefulSet put at the end of a pod's name (`jobflow-controller-2` -> 2), or None."""
    match = _ORDINAL_SUFFIX.search(name)
    return int(match.group(1)) if match else None
