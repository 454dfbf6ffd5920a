"""The reflector's watch-list: the initial state as one stream of watch events (client-go ``watchList``).

One WATCH with ``sendInitialEvents=true`` and ``resourceVersionMatch=NotOlderThan`` streams every
object as an ADDED event, then a BOOKMARK annotated ``k8s.io/initial-events-end``; the objects
collected until then replace the store at that RV and the same watch goes on. Unlike a LIST, the
stream is decoded one object at a time, so memory never holds the raw list. These are methods of
the reflector in Go, written here as functions over what
:class:`~informers.watching_reflector.WatchingReflector` says they may use; each event reaches the
temporary store through :func:`~informers.handle_watch.apply_watch_event`, as a watch's events reach
the reflector's store.
"""

from __future__ import annotations

import logging
import threading

from informers.errors import (
    is_connection_refused,
    is_expired,
    is_too_large_resource_version,
    is_too_many_requests,
    status_error_from_object,
)
from informers.handle_watch import Applied, apply_watch_event
from informers.index import IndexFuncError
from informers.keys import deletion_handling_meta_namespace_key_func
from informers.listwatch import RESOURCE_VERSION_MATCH_NOT_OLDER_THAN, EventType, ListOptions, Watch
from informers.reflector_errors import (
    VERY_SHORT_WATCH_SECONDS,
    VeryShortWatchError,
    WatchListNotSupportedError,
    describe_error,
)
from informers.store import Store, new_store
from informers.watching_reflector import WatchingReflector

__all__ = ["WATCH_LIST_PROGRESS_LOG_SECONDS", "handle_watch_list", "watch_list"]

logger = logging.getLogger("informers.reflector")

#: How often a watch-list still waiting for that bookmark says so.
WATCH_LIST_PROGRESS_LOG_SECONDS = 10.0


def watch_list(r: WatchingReflector, stop: threading.Event) -> Watch | None:
    """The initial state as a stream of watch events (client-go ``watchList``).

    Returns the watch, still open, once the store holds the initial state; None when stopped.
    Raises when the stream failed in a way that calls for the LIST fallback.
    """
    while True:
        if stop.is_set():
            return None
        temporary = new_store(deletion_handling_meta_namespace_key_func)
        options = ListOptions(
            resource_version=r.rewatch_resource_version(),
            resource_version_match=RESOURCE_VERSION_MATCH_NOT_OLDER_THAN,
            send_initial_events=True,
            allow_watch_bookmarks=True,
            timeout_seconds=r.watch_timeout_seconds(),
        )
        start = r.clock.now()
        try:
            w = r.lister_watcher.watch(options)
        except Exception as err:
            if _retriable_with_side_effects(r, err, stop):
                continue
            raise
        try:
            rv = handle_watch_list(r, start, w, temporary, stop)
        except Exception as err:
            w.stop()
            if stop.is_set():
                return None
            if _retriable_with_side_effects(r, err, stop):
                continue
            raise
        if stop.is_set():
            w.stop()
            return None
        if rv is None:
            continue  # the stream ended before the bookmark: ask again
        break
    r.set_is_last_sync_resource_version_unavailable(False)
    try:
        r.store.replace(temporary.list(), rv)
    except IndexFuncError:
        w.stop()
        raise
    except Exception as err:
        w.stop()
        raise RuntimeError(f"unable to sync watch-list result: {describe_error(err)}") from err
    r.set_last_sync_resource_version(rv)
    return w


def _retriable_with_side_effects(r: WatchingReflector, err: BaseException, stop: threading.Event) -> bool:
    """Whether a failed watch-list is worth another try, after backing off or forgetting the RV."""
    if is_connection_refused(err) or is_too_many_requests(err):
        r.backoff_manager.backoff(stop)
        return True
    if is_expired(err) or is_too_large_resource_version(err):
        r.set_is_last_sync_resource_version_unavailable(True)
        return True
    return False


def handle_watch_list(
    r: WatchingReflector, start: float, w: Watch, temporary: Store, stop: threading.Event
) -> str | None:
    """Collect the initial events into ``temporary``; the end bookmark's RV, or None if none came.

    None also when stopped (the caller checks ``stop``). An ERROR event raises its Status.
    """
    resource_version = ""

    def set_resource_version(rv: str) -> None:
        nonlocal resource_version
        resource_version = rv

    r.stopper.register(w, stop, abandoned=False)
    event_count = 0
    last_progress_log = start
    try:
        for event in w:
            if stop.is_set():
                return None
            if event.type == EventType.ERROR:
                raise status_error_from_object(event.object)
            applied = apply_watch_event(r, temporary, event.type, event.object, set_resource_version)
            if applied is Applied.SKIPPED:
                continue
            if applied is Applied.INITIAL_EVENTS_END:
                logger.debug("%s: watch-list delivered %d initial events", r.name, event_count)
                return resource_version
            if applied is Applied.BOOKMARK:
                # A server that does watch-lists sends no other bookmark before that one; one
                # older than Kubernetes 1.27 ignores sendInitialEvents and would never send it.
                raise WatchListNotSupportedError(r.name)
            event_count += 1
            now = r.clock.now()
            if now - last_progress_log >= WATCH_LIST_PROGRESS_LOG_SECONDS:
                last_progress_log = now
                logger.warning(
                    "%s: watch-list: %d initial events so far, still waiting for the bookmark",
                    r.name,
                    event_count,
                )
    finally:
        r.stopper.unregister(w)
    if stop.is_set():
        return None
    if r.clock.now() - start < VERY_SHORT_WATCH_SECONDS and event_count == 0:
        raise VeryShortWatchError(r.name)
    return None
