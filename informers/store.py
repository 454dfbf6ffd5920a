"""``Store`` and ``Indexer``: a key function over a :class:`ThreadSafeStore` (client-go ``store.go``).

The informer's cache is an :class:`Indexer` keyed by
:func:`informers.keys.deletion_handling_meta_namespace_key_func` with the namespace index; listers
read it, the informer alone writes it.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from informers.errors import KeyFuncError
from informers.index import Indexers, IndexFunc
from informers.keys import KeyFunc, meta_namespace_key_func
from informers.thread_safe_store import ThreadSafeStore
from informers.transforms import TransformFunc


class KeyListerGetter(Protocol):
    """What the DeltaFIFO needs of the cache it feeds ("known objects")."""

    def list_keys(self) -> builtins.list[str]: ...

    def get_by_key(self, key: str) -> tuple[Any, bool]: ...


class Store(KeyListerGetter, Protocol):
    """The write side the reflector drives, plus lookups.

    ``get``/``get_by_key`` return ``(obj, exists)`` as client-go does; ``obj`` is ``None`` when
    ``exists`` is False.
    """

    def add(self, obj: Any) -> None: ...

    def update(self, obj: Any) -> None: ...

    def delete(self, obj: Any) -> None: ...

    def list(self) -> builtins.list[Any]: ...

    def get(self, obj: Any) -> tuple[Any, bool]: ...

    def replace(self, items: builtins.list[Any], resource_version: str) -> None: ...

    def resync(self) -> None: ...


class Indexer(Store, Protocol):
    """A :class:`Store` with secondary indices."""

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]: ...

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]: ...

    def list_index_func_values(self, index_name: str) -> builtins.list[str]: ...

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]: ...

    def get_indexers(self) -> Indexers: ...

    def add_indexers(self, new_indexers: Mapping[str, IndexFunc]) -> None: ...


class Cache:
    """The one concrete :class:`Store`/:class:`Indexer` (client-go's unexported ``cache``)."""

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key_func,
        indexers: Mapping[str, IndexFunc] | None = None,
        transformer: TransformFunc | None = None,
    ) -> None:
        self._key_func = key_func
        self._storage = ThreadSafeStore(indexers)
        self._transformer = transformer

    def _key(self, obj: Any) -> str:
        try:
            return self._key_func(obj)
        except Exception as err:
            raise KeyFuncError(obj, err) from err

    def _transform(self, obj: Any) -> Any:
        return obj if self._transformer is None else self._transformer(obj)

    def add(self, obj: Any) -> None:
        key = self._key(obj)
        self._storage.add(key, self._transform(obj))

    def update(self, obj: Any) -> None:
        key = self._key(obj)
        self._storage.update(key, self._transform(obj))

    def delete(self, obj: Any) -> None:
        self._storage.delete(self._key(obj))

    def list(self) -> builtins.list[Any]:
        return self._storage.list()

    def list_keys(self) -> builtins.list[str]:
        return self._storage.list_keys()

    def get(self, obj: Any) -> tuple[Any, bool]:
        return self._storage.get(self._key(obj))

    def get_by_key(self, key: str) -> tuple[Any, bool]:
        return self._storage.get(key)

    def replace(self, items: Iterable[Any], resource_version: str = "") -> None:
        new_items: dict[str, Any] = {}
        for item in items:
            new_items[self._key(item)] = self._transform(item)
        self._storage.replace(new_items, resource_version)

    def resync(self) -> None:
        self._storage.resync()

    def __len__(self) -> int:
        return len(self._storage)

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        return self._storage.index(index_name, obj)

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        return self._storage.index_keys(index_name, indexed_value)

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        return self._storage.list_index_func_values(index_name)

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        return self._storage.by_index(index_name, indexed_value)

    def get_indexers(self) -> Indexers:
        return self._storage.get_indexers()

    def add_indexers(self, new_indexers: Mapping[str, IndexFunc]) -> None:
        self._storage.add_indexers(new_indexers)


def new_store(key_func: KeyFunc = meta_namespace_key_func, transformer: TransformFunc | None = None) -> Cache:
    """A store without indices."""
    return Cache(key_func, None, transformer)


def new_indexer(
    key_func: KeyFunc = meta_namespace_key_func,
    indexers: Mapping[str, IndexFunc] | None = None,
    transformer: TransformFunc | None = None,
) -> Cache:
    """A store with the given indices."""
    return Cache(key_func, indexers, transformer)
