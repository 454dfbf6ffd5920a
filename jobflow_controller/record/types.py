"""Shared vocabulary of the record package: the event type, sources and time formatting.

Events are the API's JSON dicts (``apiVersion: v1``, ``kind: Event``), exactly what is POSTed to
``/api/v1/namespaces/{ns}/events``; there is no model class in between, so what the correlator
caches, what the sink sends and what ``kubectl describe`` reads are the same fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "Event",
    "EventSource",
    "field_map",
    "field_str",
    "format_time",
    "unix_nano",
]

#: A core/v1 Event as a JSON dict.
Event = dict[str, Any]

#: ``v1.EventTypeNormal``: information, nothing to act on.
EVENT_TYPE_NORMAL = "Normal"
#: ``v1.EventTypeWarning``: something may be wrong; ``kubectl describe`` users look for these.
EVENT_TYPE_WARNING = "Warning"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class EventSource:
    """``v1.EventSource``: who reports the event.

    ``component`` is what ``kubectl describe`` prints in its ``From`` column, so a port that must
    read the same as Volcano passes ``vc-controller-manager``.
    """

    component: str = ""
    host: str = ""

    def to_dict(self) -> dict[str, str]:
        """The JSON form; empty fields are omitted as Go's ``omitempty`` does."""
        out: dict[str, str] = {}
        if self.component:
            out["component"] = self.component
        if self.host:
            out["host"] = self.host
        return out


def format_time(moment: datetime) -> str:
    """RFC 3339 in UTC with whole seconds, as ``metav1.Time`` marshals (``2006-01-02T15:04:05Z``)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def unix_nano(moment: datetime) -> int:
    """Nanoseconds since the Unix epoch, computed exactly (no float rounding)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return ((moment - _EPOCH) // timedelta(microseconds=1)) * 1000


#: ``metav1.NewTime(time.Unix(0, 0))`` marshalled; the dedup patch diffs against it.
EPOCH_TIMESTAMP = format_time(_EPOCH)


def field_map(event: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    """A nested object of an event, or an empty one when it is absent or not an object."""
    value = event.get(field)
    return value if isinstance(value, (dict, Mapping)) else {}


def field_str(mapping: Mapping[str, Any], field: str) -> str:
    """A field as a string; absent (None) is empty, as Go's zero value."""
    value = mapping.get(field)
    return "" if value is None else str(value)
