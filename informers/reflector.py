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

Go spreads the reflector's methods over one package; here they are: handle_watch.py (a watch's
events into the store), watch_list.py (the watch-list), watch_stopper.py (stopping a blocked watch)
and reflector_errors.py (how a stream fails); watching_reflector.py is what the first two may use
of the reflector.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable

from informers.backoff import BackoffManager
from informers.clock import REAL_CLOCK, Clock
from informers.errors import (
    is_connection_refused,
    is_expired,
    is_too_large_resource_version,
    is_too_many_requests,
)
from informers.handle_watch import StopRequested, WatchCycle, handle_watch
from informers.index import IndexFuncError
from informers.listwatch import (
    ListerWatcher,
    ListOptions,
    ListResult,
    Watch,
    supports_watch_list,
)
from informers.pager import DEFAULT_PAGE_SIZE, ListCancelled, ListPager
from informers.reflector_errors import (
    VeryShortWatchError,
    WatchListNotSupportedError,
    default_watch_error_handler,
    describe_error,
)
from informers.store import Store
from informers.transforms import TransformFunc
from informers.watch_list import watch_list
from informers.watch_stopper import WatchStopper

logger = logging.getLogger(__name__)

DEFAULT_MIN_WATCH_TIMEOUT = 300.0
WatchErrorHandler = Callable[["Reflector", BaseException], None]

__all__ = [
    "DEFAULT_MIN_WATCH_TIMEOUT",
    "Reflector",
    "VeryShortWatchError",
    "WatchErrorHandler",
    "WatchListNotSupportedError",
    "default_watch_error_handler",
    "describe_error",
]


class Reflector:
    """Lists and watches one resource through a :class:`ListerWatcher` into a :class:`Store`.

    ``resync_period`` > 0 calls ``store.resync()`` that often during a watch, when
    ``should_resync`` (if given) agrees. ``expected_gvk`` (``(apiVersion, kind)``) makes events of
    any other kind be skipped. ``clock``, ``backoff`` and ``rand`` are injectable for tests.

    What handle_watch.py and watch_list.py use of it is public, under client-go's names
    (:class:`~informers.watching_reflector.WatchingReflector`); the rest is its own.
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
        self.lister_watcher: ListerWatcher = lw
        self.store: Store = store
        self._resync_period = resync_period
        self._should_resync = should_resync
        self.clock: Clock = clock or REAL_CLOCK
        self._rand = rand or random.random
        self.backoff_manager: BackoffManager = backoff or BackoffManager(clock=self.clock, rand=self._rand)
        self.watch_list_page_size = watch_list_page_size
        # Like upstream, only a minimum above the default is honoured; the maximum is twice it.
        self._min_watch_timeout = DEFAULT_MIN_WATCH_TIMEOUT
        if min_watch_timeout is not None and min_watch_timeout > DEFAULT_MIN_WATCH_TIMEOUT:
            self._min_watch_timeout = min_watch_timeout
        self.expected_gvk: tuple[str, str] | None = expected_gvk
        self._watch_error_handler: WatchErrorHandler = watch_error_handler or default_watch_error_handler
        self.transform: TransformFunc | None = transform
        self.use_watch_list = use_watch_list and supports_watch_list(lw)

        self._rv_lock = threading.Lock()
        self._last_sync_resource_version = ""
        self._last_sync_resource_version_unavailable = False
        self._paginated_result = False

        self.stopper = WatchStopper(name)

    # -- resourceVersion bookkeeping ----------------------------------------------------------------

    def last_sync_resource_version(self) -> str:
        """The RV of the last list or event the store received (``""`` before the first list)."""
        with self._rv_lock:
            return self._last_sync_resource_version

    def set_last_sync_resource_version(self, resource_version: str) -> None:
        """Called with every list's and every watch event's RV, bookmarks included."""
        with self._rv_lock:
            self._last_sync_resource_version = resource_version

    def set_is_last_sync_resource_version_unavailable(self, is_unavailable: bool) -> None:
        """Set after a 410 or a too large RV (the next list or watch-list asks for ``""``), cleared on success."""
        with self._rv_lock:
            self._last_sync_resource_version_unavailable = is_unavailable

    def relist_resource_version(self) -> str:
        """``""`` if the last RV is known to be unusable, ``"0"`` before any sync, else the last RV."""
        with self._rv_lock:
            if self._last_sync_resource_version_unavailable:
                return ""
            if not self._last_sync_resource_version:
                return "0"
            return self._last_sync_resource_version

    def rewatch_resource_version(self) -> str:
        """``""`` if the last RV is known to be unusable, else the last RV (``""`` before any sync)."""
        with self._rv_lock:
            if self._last_sync_resource_version_unavailable:
                return ""
            return self._last_sync_resource_version

    def watch_timeout_seconds(self) -> int:
        """A watch's ``timeoutSeconds``: uniform in [min, 2 min), 300 to 600 s by default."""
        return int(self._min_watch_timeout * (self._rand() + 1.0))

    # -- main loop ------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """List and watch until ``stop`` is set, waiting one backoff step between attempts."""
        logger.debug("%s: starting reflector (resync period %ss)", self.name, self._resync_period)
        self.stopper.ensure_relay(stop)
        try:
            while not stop.is_set():
                try:
                    self.list_and_watch(stop)
                except IndexFuncError:
                    raise
                except Exception as err:  # noqa: BLE001 - every failure goes to the watch error handler
                    self._watch_error_handler(self, err)
                if stop.is_set() or self.backoff_manager.backoff(stop):
                    break
        finally:
            if stop.is_set():
                self.stopper.join_relay(stop)
        logger.debug("%s: stopping reflector", self.name)

    def list_and_watch(self, stop: threading.Event) -> None:
        """List everything into the store, then watch until the watch fails or ``stop`` is set.

        Returns normally when the watch ended in a way that calls for a relist (410, an error event,
        a very short watch, a resync error) or when stopped; raises when the list fails or opening
        the watch fails with a non-retriable error.
        """
        if stop.is_set():
            return
        self.stopper.ensure_relay(stop)
        logger.debug("%s: listing and watching", self.name)
        w: Watch | None = None
        if self.use_watch_list:
            try:
                w = watch_list(self, stop)
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
        page = self.lister_watcher.list(options)
        transform = self.transform
        if transform is None:
            return page
        return ListResult(
            items=[transform(item) for item in page.items],
            resource_version=page.resource_version,
            continue_token=page.continue_token,
        )

    def _list(self, stop: threading.Event) -> None:
        options = ListOptions(resource_version=self.relist_resource_version())
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
                self.set_is_last_sync_resource_version_unavailable(True)
                result, paginated = pager.list(ListOptions(resource_version=self.relist_resource_version()), stop)
        except ListCancelled:
            return
        if stop.is_set():
            return
        self.set_is_last_sync_resource_version_unavailable(False)
        if options.resource_version == "0" and paginated:
            self._paginated_result = True
        try:
            self.store.replace(result.items, result.resource_version)
        except IndexFuncError:
            raise
        except Exception as err:
            raise RuntimeError(f"unable to sync list result: {describe_error(err)}") from err
        self.set_last_sync_resource_version(result.resource_version)

    # -- watch ----------------------------------------------------------------------------------

    def _watch_with_resync(self, stop: threading.Event, w: Watch | None = None) -> None:
        """Watch (on ``w`` first, when a watch-list left it open) with the resync timer running."""
        cycle = WatchCycle()
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

    def _resync_loop(self, cycle: WatchCycle) -> None:
        """Call ``store.resync()`` every resync period until the watch cycle ends.

        A resync error ends the watch (and so leads to a relist) without being propagated.
        """
        while not self.clock.sleep(self._resync_period, cycle.done):
            if cycle.done.is_set():
                return
            if self._should_resync is not None and not self._should_resync():
                continue
            logger.debug("%s: forcing resync", self.name)
            try:
                self.store.resync()
            except Exception as err:  # noqa: BLE001 - a resync error ends the watch, leading to a relist
                cycle.fail(err)
                self.stopper.stop_current()
                return

    def _watch(self, stop: threading.Event, cycle: WatchCycle, w: Watch | None) -> None:
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
            start = self.clock.now()
            if w is None:
                options = ListOptions(
                    resource_version=self.last_sync_resource_version(),
                    timeout_seconds=self.watch_timeout_seconds(),
                    allow_watch_bookmarks=True,
                )
                try:
                    w = self.lister_watcher.watch(options)
                except Exception as err:
                    if is_connection_refused(err) or is_too_many_requests(err):
                        logger.debug("%s: watch failed (%s), backing off", self.name, describe_error(err))
                        if self.backoff_manager.backoff(stop):
                            return
                        continue
                    raise
            result = handle_watch(self, start, w, stop, cycle)
            w = None
            if result is None:
                continue  # a normal close: re-watch from the last RV, no relist, no delay
            if isinstance(result, StopRequested):
                return
            if is_expired(result):
                logger.debug("%s: watch closed with: %s", self.name, describe_error(result))
            elif is_too_many_requests(result):
                logger.debug("%s: watch returned 429, backing off", self.name)
                if self.backoff_manager.backoff(stop):
                    return
                continue
            else:
                logger.warning("%s: watch ended with: %s", self.name, describe_error(result))
            return

    # -- stopping a blocked watch -------------------------------------------------------------------
