"""Cache keys: ``<namespace>/<name>``, or ``<name>`` for cluster-scoped objects.

These are the keys of the informer cache and of the controller's work queue, so their format is
part of the contract (client-go ``store.go``, ``object-names.go``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from informers import meta
from informers.errors import go_quote
from informers.tombstone import DeletedFinalStateUnknown

KeyFunc = Callable[[Any], str]


class ExplicitKey(str):
    """A string that is already a key; :func:`meta_namespace_key_func` passes it through."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, order=True)
class ObjectName:
    """A namespace and name; ``str()`` is the cache key format."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def parts(self) -> tuple[str, str]:
        return self.namespace, self.name


def object_to_name(obj: object) -> ObjectName:
    """The object's namespace and name; :class:`informers.meta.NoMetaError` without metadata."""
    return ObjectName(meta.get_namespace(obj), meta.get_name(obj))


def parse_object_name(text: str) -> ObjectName:
    """Inverse of ``str(ObjectName)``; raises ``ValueError`` on more than one ``/``."""
    namespace, name = split_meta_namespace_key(text)
    return ObjectName(namespace, name)


def meta_namespace_key_func(obj: object) -> str:
    """The key of ``obj``; an :class:`ExplicitKey` is returned unchanged."""
    if isinstance(obj, ExplicitKey):
        return str(obj)
    return str(object_to_name(obj))


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """``"ns/name"`` → ``("ns", "name")``, ``"name"`` → ``("", "name")``; more parts is an error."""
    parts = key.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {go_quote(key)}")


def deletion_handling_meta_namespace_key_func(obj: object) -> str:
    """Like :func:`meta_namespace_key_func`, but a tombstone yields the key it carries.

    Informer stores use this, so a ``DeletedFinalStateUnknown`` handed to ``delete`` removes the
    right entry.
    """
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key_func(obj)


def deletion_handling_object_to_name(obj: object) -> ObjectName:
    """:func:`object_to_name` that also accepts a tombstone."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return parse_object_name(obj.key)
    return object_to_name(obj)
