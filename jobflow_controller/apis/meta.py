"""Read-only accessors over object metadata, shared by every kind.

The hot accessors here and in `apis.jobflow`/`apis.job` test `isinstance(x, (dict, Mapping))`: every
decoded object is a dict, which passes the C-level check at once; the ABC check alone costs ten
times as much, and these run hundreds of times per sync.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = Mapping[str, Any]


def metadata(obj: Obj) -> Mapping[str, Any]:
    md = obj.get("metadata") if isinstance(obj, (dict, Mapping)) else None
    return md if isinstance(md, (dict, Mapping)) else {}


def name(obj: Obj) -> str:
    return str(metadata(obj).get("name") or "")


def namespace(obj: Obj) -> str:
    return str(metadata(obj).get("namespace") or "")


def uid(obj: Obj) -> str:
    return str(metadata(obj).get("uid") or "")


def resource_version(obj: Obj) -> str:
    return str(metadata(obj).get("resourceVersion") or "")


def generation(obj: Obj) -> int:
    value = metadata(obj).get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def creation_timestamp(obj: Obj) -> str | None:
    ts = metadata(obj).get("creationTimestamp")
    return str(ts) if ts else None


def labels(obj: Obj) -> Mapping[str, str]:
    value = metadata(obj).get("labels")
    return value if isinstance(value, (dict, Mapping)) else {}


def owner_references(obj: Obj) -> list[Mapping[str, Any]]:
    refs = metadata(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, (dict, Mapping))] if isinstance(refs, list) else []


def get_controller_of(obj: Obj) -> Mapping[str, Any] | None:
    """metav1.GetControllerOf: the owner reference with `controller: true`, if any."""
    for ref in owner_references(obj):
        if ref.get("controller") is True:
            return ref
    return None


def generate_object_string(ns: str, obj_name: str) -> str:
    """`GenerateObjectString`: the "<namespace>.<name>" value of the createdBy labels."""
    return f"{ns}.{obj_name}"


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    """metav1.IsControlledBy: `obj`'s controller reference points at `owner` by uid.

    The uid, not the name, is what tells a JobFlow from an earlier JobFlow of the same name that was
    deleted and re-created, and what tells our Job from one someone else made under the same name.
    """
    ref = get_controller_of(obj)
    return ref is not None and str(ref.get("uid") or "") == uid(owner)
