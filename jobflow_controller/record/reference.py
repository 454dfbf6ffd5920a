"""The ``involvedObject`` of an event (client-go ``tools/reference/ref.go``).

``kubectl describe`` finds an object's events by this reference, so it must name the object exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["KindResolver", "ObjectReferenceError", "get_reference"]

#: Resolves ``(apiVersion, kind)`` for an object dict that lacks them (the role of client-go's
#: scheme); return None when unknown.
KindResolver = Callable[[Mapping[str, Any]], tuple[str, str] | None]

_REFERENCE_FIELDS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


class ObjectReferenceError(ValueError):
    """The object cannot be turned into an ``involvedObject`` reference."""


def get_reference(obj: Mapping[str, Any], scheme: KindResolver | None = None) -> dict[str, str]:
    """Build the ``involvedObject`` for ``obj`` (``ref.GetReference``).

    It carries kind, namespace, name, uid, apiVersion and resourceVersion; ``kubectl describe``
    finds events through a field selector on name, namespace, kind and uid, so all four must be
    the object's own. Empty fields are omitted, as Go's ``omitempty`` does.
    """
    if not isinstance(obj, Mapping):
        raise ObjectReferenceError(f"object of type {type(obj).__name__} is not an API object dict")
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        if obj.get("kind") and obj.get("name"):
            return {field: str(obj[field]) for field in _REFERENCE_FIELDS if obj.get(field)}
        raise ObjectReferenceError("object has neither metadata nor the fields of an ObjectReference")
    api_version = str(obj.get("apiVersion") or "")
    kind = str(obj.get("kind") or "")
    if (not api_version or not kind) and scheme is not None:
        resolved = scheme(obj)
        if resolved is not None:
            api_version, kind = resolved
    if not api_version or not kind:
        raise ObjectReferenceError("object has no apiVersion/kind and the scheme does not know it")
    ref = {
        "kind": kind,
        "namespace": str(metadata.get("namespace") or ""),
        "name": str(metadata.get("name") or ""),
        "uid": str(metadata.get("uid") or ""),
        "apiVersion": api_version,
        "resourceVersion": str(metadata.get("resourceVersion") or ""),
    }
    return {field: value for field, value in ref.items() if value}
