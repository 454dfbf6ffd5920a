"""Listers: read-only, selector-aware views of an informer's cache (client-go ``listers.go`` and
``GenericLister``).

A lister never talks to the API. What it returns is the cache's own objects: treat them as
read-only and copy before changing anything. A missing object raises the same 404 ``NotFound`` the
API would, with upstream's message (``jobflow.flow.volcano.sh "x" not found``), so code written
for either path handles it the same way.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from informers import meta
from informers.errors import NotFoundError
from informers.index import NAMESPACE_INDEX, UnknownIndexError
from informers.labels import Selector, everything, matches_nothing
from informers.store import Indexer, Store

logger = logging.getLogger(__name__)

NAMESPACE_ALL = ""


@dataclass(frozen=True, slots=True)
class GroupResource:
    """An API group and a resource name; ``str()`` is ``resource.group`` (or ``resource``).

    Typed listers name the resource by its lowercase singular kind (``jobflow``), which is what
    appears in their NotFound messages.
    """

    group: str
    resource: str

    def __str__(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


def _labels_of(obj: Any) -> Mapping[str, str]:
    try:
        return meta.get_labels(obj)
    except meta.NoMetaError:
        return {}


def list_all(store: Store, selector: Selector | None, append: Callable[[Any], None]) -> None:
    """Call ``append`` for every object in ``store`` matching ``selector`` (None: everything)."""
    selector = selector or everything()
    if matches_nothing(selector):
        return
    if selector.empty():
        for obj in store.list():
            append(obj)
        return
    for obj in store.list():
        if selector.matches(_labels_of(obj)):
            append(obj)


def list_all_by_namespace(
    indexer: Indexer, namespace: str, selector: Selector | None, append: Callable[[Any], None]
) -> None:
    """:func:`list_all` limited to one namespace, through the namespace index when there is one."""
    if namespace == NAMESPACE_ALL:
        list_all(indexer, selector, append)
        return
    selector = selector or everything()
    if matches_nothing(selector):
        return
    try:
        items = indexer.by_index(NAMESPACE_INDEX, namespace)
    except UnknownIndexError:
        logger.warning("can not retrieve list of objects using index: no %r index; scanning", NAMESPACE_INDEX)
        for obj in indexer.list():
            if meta.get_namespace(obj) == namespace and selector.matches(_labels_of(obj)):
                append(obj)
        return
    if selector.empty():
        for obj in items:
            append(obj)
        return
    for obj in items:
        if selector.matches(_labels_of(obj)):
            append(obj)


class GenericLister:
    """Lists and gets objects of one resource from an indexer."""

    def __init__(self, indexer: Indexer, group_resource: GroupResource) -> None:
        self._indexer = indexer
        self.group_resource = group_resource

    def list(self, selector: Selector | None = None) -> builtins.list[Any]:
        """Every object (all namespaces) matching ``selector``."""
        result: builtins.list[Any] = []
        list_all(self._indexer, selector, result.append)
        return result

    def get(self, name: str) -> Any:
        """A cluster-scoped object by name; :class:`NotFoundError` if absent."""
        obj, exists = self._indexer.get_by_key(name)
        if not exists:
            raise NotFoundError.for_resource(self.group_resource.group, self.group_resource.resource, name)
        return obj

    def by_namespace(self, namespace: str) -> GenericNamespaceLister:
        return GenericNamespaceLister(self._indexer, namespace, self.group_resource)


class GenericNamespaceLister:
    """A :class:`GenericLister` scoped to one namespace."""

    def __init__(self, indexer: Indexer, namespace: str, group_resource: GroupResource) -> None:
        self._indexer = indexer
        self.namespace = namespace
        self.group_resource = group_resource

    def list(self, selector: Selector | None = None) -> builtins.list[Any]:
        result: builtins.list[Any] = []
        list_all_by_namespace(self._indexer, self.namespace, selector, result.append)
        return result

    def get(self, name: str) -> Any:
        """The object ``<namespace>/<name>``; :class:`NotFoundError` if absent."""
        obj, exists = self._indexer.get_by_key(f"{self.namespace}/{name}")
        if not exists:
            raise NotFoundError.for_resource(self.group_resource.group, self.group_resource.resource, name)
        return obj
