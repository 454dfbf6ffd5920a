"""The correlator's logger (``eventLogger`` of ``events_cache.go``): a repeat becomes a count increment.

It remembers the last write of each event under its dedup key, in an LRU of 4,096 as client-go's,
so the next identical event is sent as a PATCH of ``count``, ``lastTimestamp`` and ``message`` on
the stored one. What it remembers is packed into one string per entry (``_EventLog.packed``): a
full cache is about 1 MiB instead of 1.6.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .lru import LRUCache
from .types import EPOCH_TIMESTAMP, Event
from .types import field_map as _sub
from .types import field_str as _str

__all__ = ["EventLogger"]


@dataclass(frozen=True, slots=True)
class _EventLog:
    """What the logger remembers of the last write of an event: enough to PATCH it."""

    count: int
    first_timestamp: Any
    name: str
    resource_version: str

    def packed(self) -> _EventLog | str:
        """One string of the four fields, as the cache keeps it: an entry costs 242 bytes with the
        LRU's node and digest where the object and its three strings made it 400. Fields that one
        string cannot carry back unchanged keep the object."""
        fields = (str(self.count), self.first_timestamp, self.name, self.resource_version)
        if not isinstance(self.first_timestamp, str) or any(_SEP in f for f in fields):
            return self
        return _SEP.join(fields)

    @staticmethod
    def unpacked(kept: _EventLog | str) -> _EventLog:
        if isinstance(kept, _EventLog):
            return kept
        count, first_timestamp, name, resource_version = kept.split(_SEP)
        return _EventLog(int(count), first_timestamp, name, resource_version)


#: Between the packed fields: a control character no name, version or timestamp holds.
_SEP = "\x1f"


def _copy_event(event: Mapping[str, Any]) -> Event:
    """A copy whose top level and metadata can be changed without touching the original."""
    copied = dict(event)
    copied["metadata"] = dict(_sub(event, "metadata"))
    return copied


def _dedup_patch(event: Mapping[str, Any]) -> dict[str, Any]:
    """The strategic-merge patch from the event with count, lastTimestamp and message zeroed.

    That is what ``strategicpatch.CreateTwoWayMergePatch`` yields for client-go's two JSON
    documents: a field zero in the old one (and so omitted, or the epoch for the timestamp)
    appears in the patch whenever the new one has a value.
    """
    patch: dict[str, Any] = {}
    count = event.get("count") or 0
    if count:
        patch["count"] = count
    last = event.get("lastTimestamp")
    if last != EPOCH_TIMESTAMP:
        patch["lastTimestamp"] = last
    message = event.get("message") or ""
    if message:
        patch["message"] = message
    return patch


class EventLogger:
    """``eventLogger``: remembers each written event so a repeat becomes a count increment."""

    def __init__(self, lru_cache_size: int) -> None:
        self._cache: LRUCache[_EventLog | str] = LRUCache(lru_cache_size)
        self._lock = threading.Lock()

    def event_observe(self, new_event: Event, key: str) -> tuple[Event, dict[str, Any] | None]:
        """Return the event to write and, for a repeat, the patch to apply to the stored one."""
        event = _copy_event(new_event)
        patch: dict[str, Any] | None = None
        with self._lock:
            kept = self._cache.get(key)
            last = None if kept is None else _EventLog.unpacked(kept)
            if last is not None and last.count > 0:
                metadata = event["metadata"]
                metadata["name"] = last.name
                if last.resource_version:
                    metadata["resourceVersion"] = last.resource_version
                else:
                    metadata.pop("resourceVersion", None)
                event["firstTimestamp"] = last.first_timestamp
                event["count"] = last.count + 1
                patch = _dedup_patch(event)
            self._cache.add(key, self._log_of(event).packed())
        return event, patch

    def update_state(self, event: Event, key: str) -> None:
        """Remember the server's copy (its name and resourceVersion) under its dedup key."""
        with self._lock:
            self._cache.add(key, self._log_of(event).packed())

    @staticmethod
    def _log_of(event: Mapping[str, Any]) -> _EventLog:
        metadata = _sub(event, "metadata")
        return _EventLog(
            count=int(event.get("count") or 0),
            first_timestamp=event.get("firstTimestamp"),
            name=_str(metadata, "name"),
            resource_version=_str(metadata, "resourceVersion"),
        )
