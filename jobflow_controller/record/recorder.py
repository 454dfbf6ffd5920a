"""EventRecorder: what controllers call to report events (client-go ``recorderImpl`` of ``event.go``).

A recorder turns (object, type, reason, message) into a core/v1 Event dict and hands it to its
broadcaster without blocking; names, stamps and the source are set here, correlation later.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

import structlog

from ._gofmt import sprintf
from ._log_fields import object_key
from .clock import Clock
from .reference import KindResolver, ObjectReferenceError, get_reference
from .types import Event, EventSource, format_time, unix_nano
from .util import validate_event_type

__all__ = ["EventNamer", "EventRecorder", "RecorderImpl", "generate_event_name"]

_log = structlog.get_logger(__name__)

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253


class EventRecorder(Protocol):
    """``record.EventRecorder``: what controllers call to report events about objects.

    ``obj`` is the API's JSON dict of the object (``apiVersion``, ``kind``, ``metadata``), or an
    ``ObjectReference`` dict, which is used as is.
    """

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None: ...

    def eventf(self, obj: Mapping[str, Any], event_type: str, reason: str, message_fmt: str, *args: Any) -> None: ...

    def annotated_eventf(
        self,
        obj: Mapping[str, Any],
        annotations: Mapping[str, str] | None,
        event_type: str,
        reason: str,
        message_fmt: str,
        *args: Any,
    ) -> None: ...


#: The longest event message written, in UTF-8 bytes (ours: client-go's core/v1 recorder has no
#: bound, and a message quoting tenant text could be megabytes, stored once per event and logged).
MAX_MESSAGE_BYTES: Final = 4096
#: What ends a message cut to `MAX_MESSAGE_BYTES`: the size it had.
CUT_MARK: Final = "... (cut: {size} bytes)"


def cut_message(message: str) -> str:
    """`message`, or as much of it as fits in `MAX_MESSAGE_BYTES` with the mark of the cut."""
    if len(message) * 4 <= MAX_MESSAGE_BYTES:
        return message  # fits whatever its characters (at most 4 UTF-8 bytes each)
    encoded = message.encode("utf-8", "surrogatepass")
    if len(encoded) <= MAX_MESSAGE_BYTES:
        return message
    mark = CUT_MARK.format(size=len(encoded))
    head = encoded[: MAX_MESSAGE_BYTES - len(mark)].decode("utf-8", "ignore")
    return head + mark


def generate_event_name(ref_name: str, unix_nanos: int) -> str:
    """``<name>.<hex unix nanos>``, or a random UUID when that is not a valid DNS subdomain."""
    name = f"{ref_name}.{unix_nanos:x}"
    if len(name) > _DNS1123_SUBDOMAIN_MAX_LENGTH or not _DNS1123_SUBDOMAIN.match(name):
        return str(uuid.uuid4())
    return name


class EventNamer:
    """Event names from the clock, strictly increasing per broadcaster.

    ``datetime`` has microsecond resolution where Go has nanoseconds, so two events about one
    object in the same microsecond would otherwise share a name and the second would be
    rejected as AlreadyExists. Bumping by one nanosecond keeps names unique and ordered.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def next_nanos(self, nanos: int) -> int:
        with self._lock:
            if nanos <= self._last:
                nanos = self._last + 1
            self._last = nanos
            return nanos


class RecorderImpl:
    """``recorderImpl``: builds events for one source and hands them to the broadcaster.

    ``action_or_drop`` is the broadcaster's non-blocking intake: recording never stalls a worker.
    """

    def __init__(
        self,
        action_or_drop: Callable[[Event], None],
        source: EventSource,
        clock: Clock,
        namer: EventNamer,
        scheme: KindResolver | None,
    ) -> None:
        self._action_or_drop = action_or_drop
        self._source = source
        self._clock = clock
        self._namer = namer
        self._scheme = scheme

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        self._generate_event(obj, None, event_type, reason, message)

    def eventf(self, obj: Mapping[str, Any], event_type: str, reason: str, message_fmt: str, *args: Any) -> None:
        self._generate_event(obj, None, event_type, reason, sprintf(message_fmt, *args))

    def annotated_eventf(
        self,
        obj: Mapping[str, Any],
        annotations: Mapping[str, str] | None,
        event_type: str,
        reason: str,
        message_fmt: str,
        *args: Any,
    ) -> None:
        self._generate_event(obj, annotations, event_type, reason, sprintf(message_fmt, *args))

    def _generate_event(
        self,
        obj: Mapping[str, Any],
        annotations: Mapping[str, str] | None,
        event_type: str,
        reason: str,
        message: str,
    ) -> None:
        message = cut_message(message)
        try:
            ref = get_reference(obj, self._scheme)
        except ObjectReferenceError as err:
            _log.error(
                "Could not construct reference, will not report event",
                err=str(err),
                eventType=event_type,
                reason=reason,
                message=message,
            )
            return
        if not validate_event_type(event_type):
            _log.error("Unsupported event type", eventType=event_type, reason=reason, object=object_key(ref))
            return
        self._action_or_drop(self._make_event(ref, annotations, event_type, reason, message))

    def _make_event(
        self,
        ref: dict[str, str],
        annotations: Mapping[str, str] | None,
        event_type: str,
        reason: str,
        message: str,
    ) -> Event:
        wall = self._clock.wall()
        stamp = format_time(wall)
        metadata: dict[str, Any] = {
            "name": generate_event_name(ref.get("name", ""), self._namer.next_nanos(unix_nano(wall))),
            # Cluster-scoped objects have no namespace; their events live in "default".
            "namespace": ref.get("namespace") or "default",
        }
        if annotations:
            metadata["annotations"] = dict(annotations)
        # Field order is core/v1 Event's, so the JSON reads like client-go's. No eventTime:
        # core/v1 recorders leave it unset, which keeps the API server's legacy validation
        # (eventTime would also require action, reportingComponent and reportingInstance).
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": metadata,
            "involvedObject": dict(ref),
            "reason": reason,
            "message": message,
            "source": self._source.to_dict(),
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": event_type,
            "reportingComponent": self._source.component,
            "reportingInstance": self._source.host,
        }
