"""How log lines of the record package name an event: a few fields, never the whole dict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["event_fields", "object_key"]


def object_key(ref: Mapping[str, Any]) -> str:
    """``klog.KRef`` rendering: ``namespace/name``, or ``name`` when cluster-scoped."""
    namespace = str(ref.get("namespace") or "")
    name = str(ref.get("name") or "")
    return f"{namespace}/{name}" if namespace else name


def event_fields(event: Mapping[str, Any]) -> dict[str, Any]:
    """Log fields naming an event without dumping it."""
    metadata = event.get("metadata") or {}
    ref = event.get("involvedObject") or {}
    return {
        "eventName": object_key(metadata),
        "object": object_key(ref),
        "kind": ref.get("kind", ""),
        "reason": event.get("reason", ""),
        "count": event.get("count"),
    }
