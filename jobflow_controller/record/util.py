"""Event type validation (client-go ``tools/record/util``)."""

from __future__ import annotations

from .types import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING

__all__ = ["validate_event_type"]


def validate_event_type(event_type: str) -> bool:
    """Only ``Normal`` and ``Warning`` exist; anything else is a programming error."""
    return event_type in (EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING)
