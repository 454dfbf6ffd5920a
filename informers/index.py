"""Index functions and the namespace index (client-go ``index.go``).

An index maps each value an :data:`IndexFunc` computes for an object to the set of cache keys of
the objects that produce it; the listers use the namespace index to list one namespace without a
full scan.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from informers import meta

IndexFunc = Callable[[Any], list[str]]
Indexers = dict[str, IndexFunc]
Index = dict[str, set[str]]
Indices = dict[str, Index]

NAMESPACE_INDEX = "namespace"


def meta_namespace_index_func(obj: object) -> list[str]:
    """Index by ``metadata.namespace`` (``""`` for cluster-scoped objects)."""
    return [meta.get_namespace(obj)]


class UnknownIndexError(LookupError):
    """The named index was never registered."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Index with name {name} does not exist")
        self.name = name


class IndexerConflictError(ValueError):
    """``add_indexers`` was given a name that is already registered."""

    def __init__(self, names: set[str]) -> None:
        super().__init__(f"indexer conflict: {sorted(names)}")
        self.names = names


class IndexFuncError(RuntimeError):
    """An index function raised while the store was being updated.

    client-go panics here: the cache can no longer be trusted. Code that drives the cache lets this
    exception escape (it is not logged and swallowed like ordinary processing errors), so the
    thread dies and ``threading.excepthook`` (the manager marks ``/healthz`` unhealthy) sees it.
    """

    def __init__(self, key: str, index_name: str, err: BaseException) -> None:
        super().__init__(f'unable to calculate an index entry for key "{key}" on index "{index_name}": {err}')
        self.key = key
        self.index_name = index_name
        self.err = err
