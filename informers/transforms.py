"""Transforms applied to objects before they enter an informer cache (client-go ``TransformFunc``).

The usual one strips ``metadata.managedFields``: a controller never reads it, and it is commonly
40 % of an object's size. :func:`drop_fields` generalises it to any fields a cache does not need.

A transform never modifies its input, which is still referenced by whoever decoded it: it returns
a new object, or the input itself when there is nothing to drop. It must keep what the informer
needs of every object: ``apiVersion``, ``kind`` and ``metadata.name``, ``namespace`` and
``resourceVersion``. An informer's reflector runs it exactly once on every object, as the object
arrives (each list page, each watch event), so the raw object is garbage before the next one is
decoded. Applied to its own output it must give an equal object (client-go asks transforms to be
idempotent): every transform here is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

TransformFunc = Callable[[Any], Any]

#: The fields an informer cannot do without; :func:`drop_fields` refuses to drop them.
REQUIRED_FIELDS = frozenset(
    {"apiVersion", "kind", "metadata", "metadata.name", "metadata.namespace", "metadata.resourceVersion"}
)


def strip_managed_fields(obj: Any) -> Any:
    """Return ``obj`` without ``metadata.managedFields``: a copy if it had them, else ``obj`` itself.

    The copy is shallow except for ``metadata`` (the only level that changes), so it costs two small
    dict copies. Anything that is not an object with metadata (a tombstone, say) is returned as is.
    """
    if not isinstance(obj, (dict, Mapping)):
        return obj
    metadata = obj.get("metadata")
    if not isinstance(metadata, (dict, Mapping)) or "managedFields" not in metadata:
        return obj
    new_metadata = {k: v for k, v in metadata.items() if k != "managedFields"}
    new_obj = dict(obj)
    new_obj["metadata"] = new_metadata
    return new_obj


def drop_fields(*paths: str) -> TransformFunc:
    """A transform that removes each dotted field path (``"spec"``, ``"metadata.managedFields"``).

    Only the dicts on the way to a dropped field are copied; the rest is shared with the input.
    An object with none of the fields (or not an object at all) is returned as is. The fields an
    informer needs (:data:`REQUIRED_FIELDS`) cannot be dropped.
    """
    if not paths:
        raise ValueError("drop_fields needs at least one field path")
    required = sorted(set(paths) & REQUIRED_FIELDS)
    if required:
        raise ValueError(f"an informer cannot do without {', '.join(required)}")
    split = [tuple(path.split(".")) for path in paths]
    if any(not part for parts in split for part in parts):
        raise ValueError(f"malformed field path in {paths!r}")

    def drop(obj: Any) -> Any:
        result = obj
        for parts in split:
            result = _without(result, parts, copied=result is not obj)
        return result

    return drop


def _without(obj: Any, parts: tuple[str, ...], *, copied: bool) -> Any:
    """``obj`` without the field at ``parts``; ``copied`` says ``obj`` is already a private copy."""
    if not isinstance(obj, (dict, Mapping)) or parts[0] not in obj:
        return obj
    head, rest = parts[0], parts[1:]
    if rest:
        child = obj[head]
        new_child = _without(child, rest, copied=False)
        if new_child is child:
            return obj
        out = obj if copied and isinstance(obj, dict) else dict(obj)
        out[head] = new_child
        return out
    out = obj if copied and isinstance(obj, dict) else dict(obj)
    del out[head]
    return out


FieldPath = str | tuple[str, ...]
_Tree = dict[str, "_Tree | None"]


def keep_fields(*paths: FieldPath) -> TransformFunc:
    """A transform that keeps only the given field paths (and :data:`REQUIRED_FIELDS`).

    A path is dotted (``"status.phase"``) or a tuple of keys, for keys with dots in them
    (``("metadata", "labels", "volcano.sh/job-name")``). A kept field's value is kept whole; a field
    the object lacks stays absent, and so does a path through something that is not an object.
    The result is always a new object (anything that is not an object is returned as is).
    """
    if not paths:
        raise ValueError("keep_fields needs at least one field path")
    tree: _Tree = {}
    for path in (*paths, *sorted(REQUIRED_FIELDS - {"metadata"})):
        parts = tuple(path.split(".")) if isinstance(path, str) else path
        if not parts or any(not part for part in parts):
            raise ValueError(f"malformed field path {path!r}")
        _add_path(tree, parts)

    def keep(obj: Any) -> Any:
        return _project(obj, tree) if isinstance(obj, (dict, Mapping)) else obj

    return keep


def _add_path(tree: _Tree, parts: tuple[str, ...]) -> None:
    node = tree
    for part in parts[:-1]:
        if part in node and node[part] is None:
            return  # a shorter path keeps this field whole already
        child: _Tree = node.get(part) or {}
        node[part] = child
        node = child
    node[parts[-1]] = None  # whole, even if a longer path asked for a part of it


def _project(obj: Mapping[str, Any], tree: _Tree) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, subtree in tree.items():
        if key not in obj:
            continue
        value = obj[key]
        if subtree is None:
            out[key] = value
        elif isinstance(value, (dict, Mapping)):
            out[key] = _project(value, subtree)
    return out


def chain_transforms(*transforms: TransformFunc) -> TransformFunc:
    """One transform that applies ``transforms`` left to right."""

    def chained(obj: Any) -> Any:
        for transform in transforms:
            obj = transform(obj)
        return obj

    return chained
