"""Applying a watch's events to the store (client-go ``handleWatch``/``handleAnyWatch``).

Every event, bookmarks included, advances the last synced RV (the last event's, not the maximum);
how the stream ended (normally, an error, a very short watch, a resync failure, a stop) decides
what the reflector's watch loop does next. Methods of the reflector in Go, functions over it here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from informers import meta
from informers.errors import status_error_from_object
from informers.index import IndexFuncError
from informers.listwatch import EventType, Watch
from informers.reflector_errors import VERY_SHORT_WATCH_SECONDS, VeryShortWatchError, describe_error

if TYPE_CHECKING:
    from informers.reflector import Reflector

__all__ = ["STOP_REQUESTED", "StopRequested", "WatchCycle", "apply_event", "handle_watch"]

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
    r: Reflector, start: float, w: Watch, stop: threading.Event, cycle: WatchCycle
) -> BaseException | StopRequested | None:
    """Apply the watch's events to the store until it ends; say how it ended (None = normally)."""
    r.stopper.register(w, stop, abandoned=cycle.error() is not None)
    event_count = 0
    try:
        try:
            for event in w:
                if stop.is_set():
                    return STOP_REQUESTED
                resync_error = cycle.error()
                if resync_error is not None:
                    return resync_error
                if event.type == EventType.ERROR:
                    return status_error_from_object(event.object)
                if apply_event(r, event.type, event.object):
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
    if r._clock.now() - start < VERY_SHORT_WATCH_SECONDS and event_count == 0:
        return VeryShortWatchError(r.name)
    logger.debug("%s: watch close - %d items received", r.name, event_count)
    return None


def apply_event(r: Reflector, event_type: str, obj: Any) -> bool:
    """Apply one non-error event; False if it had to be skipped."""
    try:
        rv = meta.get_resource_version(obj)
    except meta.NoMetaError:
        logger.error("%s: unable to understand watch event %s: %r", r.name, event_type, obj)
        return False
    if r._expected_gvk is not None and isinstance(obj, Mapping):
        actual = (obj.get("apiVersion"), obj.get("kind"))
        if actual != r._expected_gvk:
            logger.error(
                "%s: expected gvk %s, but watch event object had %s",
                r.name,
                r._expected_gvk,
                actual,
            )
            return False
    try:
        if r._transform is not None and event_type != EventType.BOOKMARK:
            obj = r._transform(obj)
        if event_type == EventType.ADDED:
            r._store.add(obj)
        elif event_type == EventType.MODIFIED:
            r._store.update(obj)
        elif event_type == EventType.DELETED:
            r._store.delete(obj)
        elif event_type == EventType.BOOKMARK:
            pass  # a bookmark only moves the resourceVersion forward
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
    r._set_last_sync_resource_version(rv)
    return True
