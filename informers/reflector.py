"""``Reflector``: keeps a store in step with the API by LIST, then WATCH (client-go ``reflector.go``).

The resourceVersion rules are the whole point, and they are upstream's:

* the first LIST asks for RV ``"0"`` (served from the watch cache) with ``limit=500``;
* a relist asks for the last synced RV, unpaginated (so the watch cache can serve it), unless the
  first ``"0"`` list came back paginated or a page size was configured;
* a LIST failing with 410 Expired or "too large resource version" is retried at once with RV ``""``
  (a consistent read of the newest state);
* the WATCH starts from the last synced RV, with bookmarks and a timeout drawn from [300, 600) s;
  every event, bookmarks included, advances the last RV (the last event's, not the maximum);
* a watch that ends normally is reopened from the last RV with no relist and no delay;
* a watch ending with 410 (raised, or as an ERROR event carrying a Status) returns to the run loop,
  which relists after one backoff step;
* connection refused and 429 back off one step and re-watch, without relisting;
* a watch that closes within a second having delivered nothing is treated as an error (relist);
* the run loop waits one backoff step (0.8 s doubling to 30 s, jittered, reset after 2 minutes)
  between *every* list-and-watch attempt.

Watch-list (client-go's ``WatchListClient``, on by default since 1.35) replaces the first LIST
when ``use_watch_list`` is on and the ListerWatcher says its watch can send initial events
(:func:`informers.listwatch.supports_watch_list`): one WATCH with ``sendInitialEvents=true``,
``resourceVersionMatch=NotOlderThan`` and the rewatch RV (``""`` at first: a consistent read,
served by the API server from its watch cache) streams every object as an ADDED event, then a
BOOKMARK annotated ``k8s.io/initial-events-end``. The objects collected until then replace the
store at the bookmark's RV, and the same watch goes on. A plain BOOKMARK before that one means
the server ignored ``sendInitialEvents`` (Kubernetes before 1.27): the reflector falls back to
LIST rather than wait, as client-go would, for a bookmark that never comes. An expired or too large RV retries at
``""``; connection refused and 429 back off and retry; any other failure falls back to LIST.
Unlike a LIST, whose response must be read and decoded whole (the API server ignores ``limit``
for RV ``"0"``), the stream is decoded one object at a time, so memory never holds the raw list.

``transform`` is applied by the reflector, to each object as it arrives (each list page, each
watch event), not later in the store: the raw object, ``managedFields`` and all, is garbage
before the next one is decoded. It runs exactly once on every object on its way in.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Mapping
from typing import Any

from informers import meta
from informers.backoff import BackoffManager
from informers.clock import REAL_CLOCK, Clock
from informers.errors import (
    is_connection_refused,
    is_expired,
    is_too_large_resource_version,
    is_too_many_requests,
    status_error_from_object,
)
from informers.index import IndexFuncError
from informers.keys import deletion_handling_meta_namespace_key_func
from informers.listwatch import (
    RESOURCE_VERSION_MATCH_NOT_OLDER_THAN,
    EventType,
    ListerWatcher,
    ListOptions,
    ListResult,
    Watch,
    supports_watch_list,
)
from informers.pager import DEFAULT_PAGE_SIZE, ListCancelled, ListPager
from informers.store import Store, new_store
from informers.transforms import TransformFunc

logger = logging.getLogger(__name__)

DEFAULT_MIN_WATCH_TIMEOUT = 300.0
VERY_SHORT_WATCH_SECONDS = 1.0

#: The annotation of the BOOKMARK that ends a watch-list's initial events.
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"
#: How often a watch-list still waiting for that bookmark says so.
WATCH_LIST_PROGRESS_LOG_SECONDS = 10.0

WatchErrorHandler = Callable[["Reflector", BaseException], None]


class VeryShortWatchError(Exception):
    """The watch closed in under a second without a single event: something is wrong upstream."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"very short watch: {name}: Unexpected watch close - watch lasted less than a second and no items received"
        )
        self.name = name


class WatchListNotSupportedError(Exception):
    """A plain BOOKMARK came before the end of the initial events: the server ignored the watch-list."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name}: a bookmark without {INITIAL_EVENTS_END_ANNOTATION} during a watch-list")


class _StopRequested:
    __slots__ = ()


_STOP_REQUESTED = _StopRequested()


def describe_error(err: BaseException) -> str:
    """``str(err)`` prefixed by the context notes the reflector attached (``failed to list ...``)."""
    notes = getattr(err, "__notes__", None) or []
    return ": ".join([*notes, str(err) or type(err).__name__])


def default_watch_error_handler(reflector: Reflector, err: BaseException) -> None:
    """Log a failed list-and-watch: expiry is routine (debug), anything else is an error."""
    if is_expired(err):
        logger.debug("%s: watch closed with: %s", reflector.name, describe_error(err))
    else:
        logger.error("%s: Failed to watch: %s", reflector.name, describe_error(err))


class _WatchCycle:
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


class Reflector:
    """Lists and watches one resource through a :class:`ListerWatcher` into a :class:`Store`.

    ``resync_period`` > 0 calls ``store.resync()`` that often during a watch, when
    ``should_resync`` (if given) agrees. ``expected_gvk`` (``(apiVersion, kind)``) makes events of
    any other kind be skipped. ``clock``, ``backoff`` and ``rand`` are injectable for tests.
    """

    def __init__(
        self,
        lw: ListerWatcher,
        store: Store,
        *,
        name: str = "reflector",
        resync_period: float = 0.0,
        should_resync: Callable[[], bool] | None = None,
        clock: Clock | None = None,
        backoff: BackoffManager | None = None,
        watch_list_page_size: int = 0,
        min_watch_timeout: float | None = None,
        expected_gvk: tuple[str, str] | None = None,
        watch_error_handler: WatchErrorHandler | None = None,
        rand: Callable[[], float] | None = None,
        transform: TransformFunc | None = None,
        use_watch_list: bool = True,
    ) -> None:
        self.name = name
        self._lw = lw
        self._store = store
        self._resync_period = resync_period
        self._should_resync = should_resync
        self._clock: Clock = clock or REAL_CLOCK
        self._rand = rand or random.random
        self._backoff = backoff or BackoffManager(clock=self._clock, rand=self._rand)
        self.watch_list_page_size = watch_list_page_size
        # Like upstream, only a minimum above the default is honoured; the maximum is twice it.
        self._min_watch_timeout = DEFAULT_MIN_WATCH_TIMEOUT
        if min_watch_timeout is not None and min_watch_timeout > DEFAULT_MIN_WATCH_TIMEOUT:
            self._min_watch_timeout = min_watch_timeout
        self._expected_gvk = expected_gvk
        self._watch_error_handler: WatchErrorHandler = watch_error_handler or default_watch_error_handler
        self._transform = transform
        self.use_watch_list = use_watch_list and supports_watch_list(lw)

        self._rv_lock = threading.Lock()
        self._last_sync_resource_version = ""
        self._last_sync_resource_version_unavailable = False
        self._paginated_result = False

        self._watch_lock = threading.Lock()
        self._current_watch: Watch | None = None
        self._current_stop: threading.Event | None = None
        self._relay_stop: threading.Event | None = None
        self._relay_thread: threading.Thread | None = None

    # -- resourceVersion bookkeeping ----------------------------------------------------------------

    def last_sync_resource_version(self) -> str:
        """The RV of the last list or event the store received (``""`` before the first list)."""
        with self._rv_lock:
            return self._last_sync_resource_version

    def _set_last_sync_resource_version(self, rv: str) -> None:
        with self._rv_lock:
            self._last_sync_resource_version = rv

    def _set_resource_version_unavailable(self, unavailable: bool) -> None:
        with self._rv_lock:
            self._last_sync_resource_version_unavailable = unavailable

    def _relist_resource_version(self) -> str:
        """``""`` if the last RV is known to be unusable, ``"0"`` before any sync, else the last RV."""
        with self._rv_lock:
            if self._last_sync_resource_version_unavailable:
                return ""
            if not self._last_sync_resource_version:
                return "0"
            return self._last_sync_resource_version

    def _rewatch_resource_version(self) -> str:
        """``""`` if the last RV is known to be unusable, else the last RV (``""`` before any sync)."""
        with self._rv_lock:
            if self._last_sync_resource_version_unavailable:
                return ""
            return self._last_sync_resource_version

    def _watch_timeout_seconds(self) -> int:
        return int(self._min_watch_timeout * (self._rand() + 1.0))

    # -- main loop ------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """List and watch until ``stop`` is set, waiting one backoff step between attempts."""
        logger.debug("%s: starting reflector (resync period %ss)", self.name, self._resync_period)
        self._ensure_stop_relay(stop)
        try:
            while not stop.is_set():
                try:
                    self.list_and_watch(stop)
                except IndexFuncError:
                    raise
                except Exception as err:  # noqa: BLE001 - every failure goes to the watch error handler
                    self._watch_error_handler(self, err)
                if stop.is_set() or self._backoff.backoff(stop):
                    break
        finally:
            if stop.is_set():
                self._join_stop_relay(stop)
        logger.debug("%s: stopping reflector", self.name)

    def list_and_watch(self, stop: threading.Event) -> None:
        """List everything into the store, then watch until the watch fails or ``stop`` is set.

        Returns normally when the watch ended in a way that calls for a relist (410, an error event,
        a very short watch, a resync error) or when stopped; raises when the list fails or opening
        the watch fails with a non-retriable error.
        """
        if stop.is_set():
            return
        self._ensure_stop_relay(stop)
        logger.debug("%s: listing and watching", self.name)
        w: Watch | None = None
        if self.use_watch_list:
            try:
                w = self._watch_list(stop)
            except IndexFuncError:
                raise
            except Exception as err:  # noqa: BLE001 - making progress beats waiting for a stream that fails
                logger.warning(
                    "%s: the watch-list request ended with an error, falling back to LIST/WATCH: %s",
                    self.name,
                    describe_error(err),
                )
            if stop.is_set():
                if w is not None:
                    w.stop()
                return
        if w is None:
            try:
                self._list(stop)
            except IndexFuncError:
                raise
            except Exception as err:
                note = f"failed to list {self.name}"
                if note not in (getattr(err, "__notes__", None) or []):
                    err.add_note(note)
                raise
            if stop.is_set():
                return
        self._watch_with_resync(stop, w)

    # -- list -----------------------------------------------------------------------------------

    def _list_page(self, options: ListOptions) -> ListResult:
        """One page, its items transformed at once: the raw page is garbage before the next."""
        page = self._lw.list(options)
        transform = self._transform
        if transform is None:
            return page
        return ListResult(
            items=[transform(item) for item in page.items],
            resource_version=page.resource_version,
            continue_token=page.continue_token,
        )

    def _list(self, stop: threading.Event) -> None:
        options = ListOptions(resource_version=self._relist_resource_version())
        pager = ListPager(self._list_page, DEFAULT_PAGE_SIZE)
        if self.watch_list_page_size:
            pager.page_size = self.watch_list_page_size
        elif self._paginated_result:
            # The first RV="0" list came back in pages: this server pages (its watch cache is
            # probably off), so keep paging.
            pass
        elif options.resource_version not in ("", "0"):
            # A specific RV without a limit can be served from the watch cache; with a limit it
            # would go to etcd. Relists after an outage must not stampede etcd.
            pager.page_size = 0
        try:
            try:
                result, paginated = pager.list(options, stop)
            except ListCancelled:
                raise
            except Exception as err:
                if not (is_expired(err) or is_too_large_resource_version(err)):
                    raise
                # The RV we asked for is gone (or not there yet): relist the newest state right away.
                self._set_resource_version_unavailable(True)
                result, paginated = pager.list(ListOptions(resource_version=self._relist_resource_version()), stop)
        except ListCancelled:
            return
        if stop.is_set():
            return
        self._set_resource_version_unavailable(False)
        if options.resource_version == "0" and paginated:
            self._paginated_result = True
        try:
            self._store.replace(result.items, result.resource_version)
        except IndexFuncError:
            raise
        except Exception as err:
            raise RuntimeError(f"unable to sync list result: {describe_error(err)}") from err
        self._set_last_sync_resource_version(result.resource_version)

    # -- watch-list ---------------------------------------------------------------------------------

    def _watch_list(self, stop: threading.Event) -> Watch | None:
        """The initial state as a stream of watch events (client-go ``watchList``).

        Returns the watch, still open, once the store holds the initial state; None when stopped.
        Raises when the stream failed in a way that calls for the LIST fallback.
        """
        while True:
            if stop.is_set():
                return None
            temporary = new_store(deletion_handling_meta_namespace_key_func)
            options = ListOptions(
                resource_version=self._rewatch_resource_version(),
                resource_version_match=RESOURCE_VERSION_MATCH_NOT_OLDER_THAN,
                send_initial_events=True,
                allow_watch_bookmarks=True,
                timeout_seconds=self._watch_timeout_seconds(),
            )
            start = self._clock.now()
            try:
                w = self._lw.watch(options)
            except Exception as err:
                if self._retriable_with_side_effects(err, stop):
                    continue
                raise
            try:
                rv = self._handle_watch_list(start, w, temporary, stop)
            except Exception as err:
                w.stop()
                if stop.is_set():
                    return None
                if self._retriable_with_side_effects(err, stop):
                    continue
                raise
            if stop.is_set():
                w.stop()
                return None
            if rv is None:
                continue  # the stream ended before the bookmark: ask again
            break
        self._set_resource_version_unavailable(False)
        try:
            self._store.replace(temporary.list(), rv)
        except IndexFuncError:
            w.stop()
            raise
        except Exception as err:
            w.stop()
            raise RuntimeError(f"unable to sync watch-list result: {describe_error(err)}") from err
        self._set_last_sync_resource_version(rv)
        return w

    def _retriable_with_side_effects(self, err: BaseException, stop: threading.Event) -> bool:
        """Whether a failed watch-list is worth another try, after backing off or forgetting the RV."""
        if is_connection_refused(err) or is_too_many_requests(err):
            self._backoff.backoff(stop)
            return True
        if is_expired(err) or is_too_large_resource_version(err):
            self._set_resource_version_unavailable(True)
            return True
        return False

    def _handle_watch_list(self, start: float, w: Watch, temporary: Store, stop: threading.Event) -> str | None:
        """Collect the initial events into ``temporary``; the end bookmark's RV, or None if none came.

        None also when stopped (the caller checks ``stop``). An ERROR event raises its Status.
        """
        cycle = _WatchCycle()
        self._register_watch(w, stop, cycle)
        event_count = 0
        last_progress_log = start
        try:
            for event in w:
                if stop.is_set():
                    return None
                if event.type == EventType.ERROR:
                    raise status_error_from_object(event.object)
                obj = event.object
                try:
                    rv = meta.get_resource_version(obj)
                except meta.NoMetaError:
                    logger.error("%s: unable to understand watch event %s: %r", self.name, event.type, obj)
                    continue
                if event.type == EventType.BOOKMARK:
                    annotations = meta.metadata(obj).get("annotations") or {}
                    if annotations.get(INITIAL_EVENTS_END_ANNOTATION) == "true":
                        logger.debug("%s: watch-list delivered %d initial events", self.name, event_count)
                        return rv
                    # A server that does watch-lists sends no other bookmark before that one; one
                    # older than Kubernetes 1.27 ignores sendInitialEvents and would never send it.
                    raise WatchListNotSupportedError(self.name)
                if self._expected_gvk is not None and (obj.get("apiVersion"), obj.get("kind")) != self._expected_gvk:
                    logger.error(
                        "%s: expected gvk %s, but watch event object had %s",
                        self.name,
                        self._expected_gvk,
                        (obj.get("apiVersion"), obj.get("kind")),
                    )
                    continue
                if self._transform is not None:
                    obj = self._transform(obj)
                if event.type == EventType.ADDED:
                    temporary.add(obj)
                elif event.type == EventType.MODIFIED:
                    temporary.update(obj)
                elif event.type == EventType.DELETED:
                    temporary.delete(obj)
                else:
                    logger.error("%s: unknown watch event type %r", self.name, event.type)
                    continue
                event_count += 1
                now = self._clock.now()
                if now - last_progress_log >= WATCH_LIST_PROGRESS_LOG_SECONDS:
                    last_progress_log = now
                    logger.warning(
                        "%s: watch-list: %d initial events so far, still waiting for the bookmark",
                        self.name,
                        event_count,
                    )
        finally:
            self._unregister_watch(w)
        if stop.is_set():
            return None
        if self._clock.now() - start < VERY_SHORT_WATCH_SECONDS and event_count == 0:
            raise VeryShortWatchError(self.name)
        return None

    # -- watch ----------------------------------------------------------------------------------

    def _watch_with_resync(self, stop: threading.Event, w: Watch | None = None) -> None:
        """Watch (on ``w`` first, when a watch-list left it open) with the resync timer running."""
        cycle = _WatchCycle()
        resync_thread: threading.Thread | None = None
        if self._resync_period > 0:
            resync_thread = threading.Thread(
                target=self._resync_loop, args=(cycle,), name=f"{self.name}-resync", daemon=True
            )
            resync_thread.start()
        try:
            self._watch(stop, cycle, w)
        finally:
            cycle.done.set()
            if resync_thread is not None:
                resync_thread.join()

    def _resync_loop(self, cycle: _WatchCycle) -> None:
        """Call ``store.resync()`` every resync period until the watch cycle ends.

        A resync error ends the watch (and so leads to a relist) without being propagated.
        """
        while not self._clock.sleep(self._resync_period, cycle.done):
            if cycle.done.is_set():
                return
            if self._should_resync is not None and not self._should_resync():
                continue
            logger.debug("%s: forcing resync", self.name)
            try:
                self._store.resync()
            except Exception as err:  # noqa: BLE001 - a resync error ends the watch, leading to a relist
                cycle.fail(err)
                self._stop_current_watch()
                return

    def _watch(self, stop: threading.Event, cycle: _WatchCycle, w: Watch | None) -> None:
        while True:
            if stop.is_set():
                if w is not None:
                    w.stop()
                return
            resync_error = cycle.error()
            if resync_error is not None:
                logger.warning("%s: watch ended with: %s", self.name, describe_error(resync_error))
                if w is not None:
                    w.stop()
                return
            start = self._clock.now()
            if w is None:
                options = ListOptions(
                    resource_version=self.last_sync_resource_version(),
                    timeout_seconds=self._watch_timeout_seconds(),
                    allow_watch_bookmarks=True,
                )
                try:
                    w = self._lw.watch(options)
                except Exception as err:
                    if is_connection_refused(err) or is_too_many_requests(err):
                        logger.debug("%s: watch failed (%s), backing off", self.name, describe_error(err))
                        if self._backoff.backoff(stop):
                            return
                        continue
                    raise
            result = self._handle_watch(start, w, stop, cycle)
            w = None
            if result is None:
                continue  # a normal close: re-watch from the last RV, no relist, no delay
            if isinstance(result, _StopRequested):
                return
            if is_expired(result):
                logger.debug("%s: watch closed with: %s", self.name, describe_error(result))
            elif is_too_many_requests(result):
                logger.debug("%s: watch returned 429, backing off", self.name)
                if self._backoff.backoff(stop):
                    return
                continue
            else:
                logger.warning("%s: watch ended with: %s", self.name, describe_error(result))
            return

    def _handle_watch(
        self, start: float, w: Watch, stop: threading.Event, cycle: _WatchCycle
    ) -> BaseException | _StopRequested | None:
        """Apply the watch's events to the store until it ends; say how it ended (None = normally)."""
        self._register_watch(w, stop, cycle)
        event_count = 0
        try:
            try:
                for event in w:
                    if stop.is_set():
                        return _STOP_REQUESTED
                    resync_error = cycle.error()
                    if resync_error is not None:
                        return resync_error
                    if event.type == EventType.ERROR:
                        return status_error_from_object(event.object)
                    if self._apply_event(event.type, event.object):
                        event_count += 1
            except IndexFuncError:
                raise
            except Exception as err:  # noqa: BLE001 - how the stream failed decides what comes next
                if stop.is_set():
                    return _STOP_REQUESTED
                return cycle.error() or err
        finally:
            self._unregister_watch(w)
            w.stop()
        if stop.is_set():
            return _STOP_REQUESTED
        resync_error = cycle.error()
        if resync_error is not None:
            return resync_error
        if self._clock.now() - start < VERY_SHORT_WATCH_SECONDS and event_count == 0:
            return VeryShortWatchError(self.name)
        logger.debug("%s: watch close - %d items received", self.name, event_count)
        return None

    def _apply_event(self, event_type: str, obj: Any) -> bool:
        """Apply one non-error event; False if it had to be skipped."""
        try:
            rv = meta.get_resource_version(obj)
        except meta.NoMetaError:
            logger.error("%s: unable to understand watch event %s: %r", self.name, event_type, obj)
            return False
        if self._expected_gvk is not None and isinstance(obj, Mapping):
            actual = (obj.get("apiVersion"), obj.get("kind"))
            if actual != self._expected_gvk:
                logger.error(
                    "%s: expected gvk %s, but watch event object had %s",
                    self.name,
                    self._expected_gvk,
                    actual,
                )
                return False
        try:
            if self._transform is not None and event_type != EventType.BOOKMARK:
                obj = self._transform(obj)
            if event_type == EventType.ADDED:
                self._store.add(obj)
            elif event_type == EventType.MODIFIED:
                self._store.update(obj)
            elif event_type == EventType.DELETED:
                self._store.delete(obj)
            elif event_type == EventType.BOOKMARK:
                pass  # a bookmark only moves the resourceVersion forward
            else:
                logger.error("%s: unknown watch event type %r", self.name, event_type)
        except IndexFuncError:
            raise
        except Exception as err:
            logger.error(
                "%s: unable to apply watch event %s to store: %s",
                self.name,
                event_type,
                describe_error(err),
                exc_info=True,
            )
        self._set_last_sync_resource_version(rv)
        return True

    # -- stopping a blocked watch -------------------------------------------------------------------

    def _ensure_stop_relay(self, stop: threading.Event) -> None:
        """Make sure a thread waits on ``stop`` to stop the current watch (iteration blocks)."""
        with self._watch_lock:
            if self._relay_stop is stop and self._relay_thread is not None and self._relay_thread.is_alive():
                return
            if stop.is_set():
                return
            thread = threading.Thread(target=self._relay, args=(stop,), name=f"{self.name}-stop", daemon=True)
            self._relay_stop = stop
            self._relay_thread = thread
        thread.start()

    def _join_stop_relay(self, stop: threading.Event) -> None:
        with self._watch_lock:
            thread = self._relay_thread if self._relay_stop is stop else None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _relay(self, stop: threading.Event) -> None:
        stop.wait()
        with self._watch_lock:
            w = self._current_watch if self._current_stop is stop else None
        if w is not None:
            w.stop()

    def _register_watch(self, w: Watch, stop: threading.Event, cycle: _WatchCycle) -> None:
        with self._watch_lock:
            self._current_watch = w
            self._current_stop = stop
        if stop.is_set() or cycle.error() is not None:
            w.stop()  # the relay or the resync thread fired before the watch was registered

    def _unregister_watch(self, w: Watch) -> None:
        with self._watch_lock:
            if self._current_watch is w:
                self._current_watch = None
                self._current_stop = None

    def _stop_current_watch(self) -> None:
        with self._watch_lock:
            w = self._current_watch
        if w is not None:
            w.stop()
