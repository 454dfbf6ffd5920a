"""Read-only accessors over the API's JSON objects (apimachinery's ``meta.Accessor``).

Objects are plain dicts shared by the cache, the handlers and the workers, so these helpers only
ever read. A missing ``metadata`` is an error (the object "has no meta"), a missing field inside it
reads as empty, exactly as Go's zero values do. ``(dict, Mapping)``: a dict, which every decoded object is, passes
the C-level check before the ten times slower ABC check would run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class NoMetaError(ValueError):
    """The object is not a mapping with a ``metadata`` mapping."""

    def __init__(self, obj: object) -> None:
        super().__init__(f"object has no meta: {obj!r}")
        self.obj = obj


_EMPTY: Mapping[str, str] = {}


def metadata(obj: object) -> Mapping[str, Any]:
    """``obj["metadata"]``, or :class:`NoMetaError` if there is none."""
    if not isinstance(obj, (dict, Mapping)):
        raise NoMetaError(obj)
    meta = obj.get("metadata")
    if not isinstance(meta, (dict, Mapping)):
        raise NoMetaError(obj)
    return meta


def _text(obj: object, field: str) -> str:
    value = metadata(obj).get(field)
    return value if isinstance(value, str) else ""


def get_name(obj: object) -> str:
    return _text(obj, "name")


def get_namespace(obj: object) -> str:
    return _text(obj, "namespace")


def get_resource_version(obj: object) -> str:
    return _text(obj, "resourceVersion")


def get_labels(obj: object) -> Mapping[str, str]:
    labels = metadata(obj).get("labels")
    return labels if isinstance(labels, (dict, Mapping)) else _EMPTY
