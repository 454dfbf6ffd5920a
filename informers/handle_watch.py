"""Applying a watch's events to a store (client-go ``handleWatch``/``handleAnyWatch``).

Every event, bookmarks included, advances the last synced RV (the last event's, not the maximum);
how the stream ended (normally, an error, a very short watch, a resync failure, a stop) decides
what the reflector's watch loop does next. Methods of the reflector in Go, functions here over
what :class:`~informers.watching_reflector.WatchingReflector` says they may use.
:func:`apply_watch_event` is the one place an event reaches a store, for the reflector's watch and
for the watch-list's initial events alike.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from informers import meta
from informers.errors import status_error_from_object
from informers.index import IndexFuncError
from informers.listwatch import EventType, Watch
from informers.reflector_errors import (
    INITIAL_EVENTS_END_ANNOTATION,
    VERY_SHORT_WATCH_SECONDS,
    VeryShortWatchError,
    describe_error,
)
from informers.store import Store
from informers.watching_reflector import WatchingReflector

__all__ = ["STOP_REQUESTED", "Applied", "StopRequested", "WatchCycle", "apply_watch_event", "handle_watch"]

logger = logging.getLogger("informers.reflector")


class StopRequested:
    """How a watch ended when ``stop`` was set: neither a normal close nor an error."""

    __slots__ = ()


STOP_REQUESTED = StopRequested()


class WatchCycle:
    """What the resync thread and the watch loop share during one watch-with-resync."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.resync_error: BaseException | None = None
        self.done = threading.Event()

    def fail(self, err: BaseException) -> None:
        with self.lock:
            if self.resync_error is None:
                self.resync_error = err

    def error(self) -> BaseException | None:
        with self.lock:
            return self.resync_error


def handle_watch(
    r: WatchingReflector, start: float, w: Watch, stop: threading.Event, cycle: WatchCycle
) -> BaseException | StopRequested | None:
    """Apply the watch's events to the store until it ends; say how it ended (None = normally)."""
    r.stopper.register(w, stop, abandoned=cycle.error() is not None)
    store, set_resource_version = r.store, r.set_last_sync_resource_version
    event_count = 0
    try:
        try:
            for event in w:
                if stop.is_set():
                    return STOP_REQUESTED
                resync_error = cycle.error()
                if resync_error is not None:
                    return resync_error
                if event.type == _ERROR:
                    return status_error_from_object(event.object)
                if apply_watch_event(r, store, event.type, event.object, set_resource_version) is not _SKIPPED:
                    event_count += 1
        except IndexFuncError:
            raise
        except Exception as err:  # noqa: BLE001 - how the stream failed decides what comes next
            if stop.is_set():
                return STOP_REQUESTED
            return cycle.error() or err
    finally:
        r.stopper.unregister(w)
        w.stop()
    if stop.is_set():
        return STOP_REQUESTED
    resync_error = cycle.error()
    if resync_error is not None:
        return resync_error
    if r.clock.now() - start < VERY_SHORT_WATCH_SECONDS and event_count == 0:
        return VeryShortWatchError(r.name)
    logger.debug("%s: watch close - %d items received", r.name, event_count)
    return None


class Applied(enum.Enum):
    """What :func:`apply_watch_event` did with one event."""

    #: Not understood (no metadata) or of another kind than expected: not counted, RV unchanged.
    SKIPPED = "skipped"
    #: An add, update or delete went to the store (or was logged, if the store or type refused it).
    STORED = "stored"
    #: A bookmark: only the RV moved.
    BOOKMARK = "bookmark"
    #: The bookmark annotated ``k8s.io/initial-events-end``: a watch-list's initial events are all in.
    INITIAL_EVENTS_END = "initial-events-end"


# Enum members read once: in Python 3.11 each ``EventType.ADDED`` or ``Applied.STORED`` is a class
# attribute lookup of 150-300 ns, paid on every event otherwise.
_ADDED, _MODIFIED, _DELETED, _BOOKMARK, _ERROR = (
    str(EventType.ADDED),
    str(EventType.MODIFIED),
    str(EventType.DELETED),
    str(EventType.BOOKMARK),
    str(EventType.ERROR),
)
_SKIPPED, _STORED, _BOOKMARKED, _INITIAL_EVENTS_END = (
    Applied.SKIPPED,
    Applied.STORED,
    Applied.BOOKMARK,
    Applied.INITIAL_EVENTS_END,
)


def apply_watch_event(
    r: WatchingReflector,
    store: Store,
    event_type: str,
    obj: Any,
    set_resource_version: Callable[[str], None],
) -> Applied:
    """Apply one non-error event to ``store``, then hand its RV to ``set_resource_version``.

    The body of client-go's ``handleAnyWatch`` loop: ADDED, MODIFIED and DELETED become the store's
    add, update and delete (the object transformed first); a BOOKMARK only moves the RV, and says
    whether it ends a watch-list's initial events. ``store`` and ``set_resource_version`` are the
    reflector's own during a watch, and the watch-list's temporary store and its RV until the end
    bookmark. A store that refuses the object, or an unknown event type, is logged and the RV still
    advances, as upstream; an index function failing is a bug and propagates.
    """
    try:
        rv = meta.get_resource_version(obj)
    except meta.NoMetaError:
        logger.error("%s: unable to understand watch event %s: %r", r.name, event_type, obj)
        return _SKIPPED
    expected_gvk = r.expected_gvk
    if expected_gvk is not None:
        actual = (obj.get("apiVersion"), obj.get("kind"))
        if actual != expected_gvk:
            logger.error("%s: expected gvk %s, but watch event object had %s", r.name, expected_gvk, actual)
            return _SKIPPED
    if event_type == _BOOKMARK:
        set_resource_version(rv)
        return _INITIAL_EVENTS_END if _ends_initial_events(obj) else _BOOKMARKED
    try:
        transform = r.transform
        if transform is not None:
            obj = transform(obj)
        if event_type == _ADDED:
            store.add(obj)
        elif event_type == _MODIFIED:
            store.update(obj)
        elif event_type == _DELETED:
            store.delete(obj)
        else:
            logger.error("%s: unknown watch event type %r", r.name, event_type)
    except IndexFuncError:
        raise
    except Exception as err:
        logger.error(
            "%s: unable to apply watch event %s to store: %s",
            r.name,
            event_type,
            describe_error(err),
            exc_info=True,
        )
    set_resource_version(rv)
    return _STORED


def _ends_initial_events(bookmark: Any) -> bool:
    """Whether a bookmark carries ``k8s.io/initial-events-end: "true"``."""
    annotations = meta.metadata(bookmark).get("annotations")
    return isinstance(annotations, (dict, Mapping)) and annotations.get(INITIAL_EVENTS_END_ANNOTATION) == "true"
