"""``SharedIndexInformer``: one list-and-watch, one cache, many handlers (client-go
``shared_informer.go``).

What it promises, as upstream does:

* the cache (``get_indexer()``) is updated before any handler hears of a change;
* notifications for one object arrive in order; different objects have no ordering guarantee;
* an update whose old and new resourceVersion are equal is a *sync* (periodic resync, or a relist
  of an unchanged object) and goes only to the handlers due for their resync;
* ``has_synced()`` means the first list is fully in the cache; a registration's ``has_synced()``
  additionally means that handler has processed every add of the initial list;
* a handler added while the informer runs is first given the cache's current contents as adds with
  ``is_in_initial_list=True``;
* a delete may carry a :class:`informers.tombstone.DeletedFinalStateUnknown`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from informers import meta
from informers.clock import REAL_CLOCK, Clock
from informers.controller import Config, Controller, process_deltas
from informers.delta_fifo import DeltaFIFO, Deltas
from informers.handlers import ResourceEventHandler, ResourceEventHandlerDetailedFuncs
from informers.index import NAMESPACE_INDEX, IndexFunc, meta_namespace_index_func
from informers.keys import deletion_handling_meta_namespace_key_func
from informers.listwatch import ListerWatcher
from informers.processor_listener import (
    AddNotification,
    DeleteNotification,
    ProcessListener,
    SharedProcessor,
    UpdateNotification,
    determine_resync_period,
)
from informers.reflector import WatchErrorHandler
from informers.store import Cache, new_indexer
from informers.transforms import TransformFunc

logger = logging.getLogger(__name__)

# No handler may ask for resyncs more often than this.
MINIMUM_RESYNC_PERIOD = 1.0

ResourceEventHandlerRegistration = ProcessListener
"""The handle ``add_event_handler`` returns: ``has_synced()``, and the key to remove the handler."""


class InformerStoppedError(RuntimeError):
    """The informer has stopped; it takes no new handlers or indexers."""


class InformerStartedError(RuntimeError):
    """The informer has started; its transform and watch error handler are fixed."""

    def __init__(self) -> None:
        super().__init__("informer has already started")


class SharedIndexInformer:
    """An informer whose cache is an indexer keyed ``<ns>/<name>``, shared by many handlers.

    ``resync_period`` is the default handler resync period (0: never). ``indexers`` are the
    cache's indices; when omitted, the cache gets the namespace index, as every generated
    client-go informer registers it (namespaced listers use it). ``transform`` runs once on every
    object before it is cached, as the reflector receives it. ``use_watch_list`` (client-go's
    ``WatchListClient`` gate, on by default) streams the initial state with a watch-list when the
    ListerWatcher supports it, and LISTs otherwise.
    """

    def __init__(
        self,
        lw: ListerWatcher,
        resync_period: float = 0.0,
        *,
        indexers: Mapping[str, IndexFunc] | None = None,
        transform: TransformFunc | None = None,
        clock: Clock | None = None,
        name: str = "informer",
        expected_gvk: tuple[str, str] | None = None,
        watch_list_page_size: int = 0,
        min_watch_timeout: float | None = None,
        use_watch_list: bool = True,
    ) -> None:
        self.name = name
        self._lw = lw
        self._clock: Clock = clock or REAL_CLOCK
        if indexers is None:
            indexers = {NAMESPACE_INDEX: meta_namespace_index_func}
        self._indexer = new_indexer(deletion_handling_meta_namespace_key_func, indexers)
        self._processor = SharedProcessor(self._clock)
        self._default_event_handler_resync_period = resync_period
        self._resync_check_period = resync_period
        self._transform = transform
        self._watch_error_handler: WatchErrorHandler | None = None
        self._expected_gvk = expected_gvk
        self._watch_list_page_size = watch_list_page_size
        self._min_watch_timeout = min_watch_timeout
        self._use_watch_list = use_watch_list

        self._started_lock = threading.Lock()
        self._started = False
        self._stopped = False
        self._controller: Controller | None = None
        # Held while deltas are applied, so a late handler's replay of the cache sees no gap.
        self._block_deltas = threading.Lock()
        self._handler_seq = 0
        self._delta_handler: ResourceEventHandler = ResourceEventHandlerDetailedFuncs(
            self._on_add, self._on_update, self._on_delete
        )

    # -- configuration (before run) -------------------------------------------------------------

    def set_transform(self, transform: TransformFunc | None) -> None:
        with self._started_lock:
            if self._started:
                raise InformerStartedError()
            self._transform = transform

    def set_watch_error_handler(self, handler: WatchErrorHandler) -> None:
        with self._started_lock:
            if self._started:
                raise InformerStartedError()
            self._watch_error_handler = handler

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indices; allowed while running (existing items are indexed at once), not after stop."""
        with self._started_lock:
            if self._stopped:
                raise InformerStoppedError("indexer was not added because it has stopped already")
            self._indexer.add_indexers(indexers)

    # -- handlers -------------------------------------------------------------------------------

    def add_event_handler(
        self, handler: ResourceEventHandler, resync_period: float | None = None
    ) -> ResourceEventHandlerRegistration:
        """Register ``handler``; ``resync_period`` defaults to the informer's.

        A period under 1 s is raised to 1 s. Before start, a period shorter than the informer's
        resync check period lowers that check period; after start it is raised to it instead.
        """
        with self._started_lock:
            if self._stopped:
                raise InformerStoppedError(
                    f"handler {handler!r} was not added to shared informer because it has stopped already"
                )
            resync = self._default_event_handler_resync_period if resync_period is None else resync_period
            if resync > 0:
                if resync < MINIMUM_RESYNC_PERIOD:
                    logger.warning(
                        "%s: resync period %ss is too small, changing it to %ss",
                        self.name,
                        resync,
                        MINIMUM_RESYNC_PERIOD,
                    )
                    resync = MINIMUM_RESYNC_PERIOD
                if resync < self._resync_check_period:
                    if self._started:
                        logger.warning(
                            "%s: resync period %ss is smaller than the resync check period %ss "
                            "and the informer has already started; changing it to %ss",
                            self.name,
                            resync,
                            self._resync_check_period,
                            self._resync_check_period,
                        )
                        resync = self._resync_check_period
                    else:
                        # Not running yet: check more often so this handler's period can be met.
                        self._resync_check_period = resync
                        self._processor.resync_check_period_changed(resync)
            self._handler_seq += 1
            listener = ProcessListener(
                handler,
                resync,
                determine_resync_period(resync, self._resync_check_period),
                self._clock.now(),
                self.has_synced,
                self._clock,
                name=f"{self.name}-handler-{self._handler_seq}",
            )
            if not self._started:
                return self._processor.add_listener(listener)
            # Running: pause delta processing so the replay of the cache and the live stream meet
            # exactly, with nothing lost or doubled in between.
            with self._block_deltas:
                self._processor.add_listener(listener)
                for item in self._indexer.list():
                    listener.add(AddNotification(item, is_in_initial_list=True))
            return listener

    def remove_event_handler(self, registration: object) -> None:
        """Stop notifying a handler; idempotent, and a foreign handle is a no-op.

        Notifications already queued for it are dropped (the one in flight completes).
        """
        with self._started_lock, self._block_deltas:
            self._processor.remove_listener(registration)

    def is_registered(self, registration: object) -> bool:
        """Whether ``registration`` is a live handler of this informer."""
        return self._processor.has_listener(registration)

    # -- state ----------------------------------------------------------------------------------

    def get_store(self) -> Cache:
        return self._indexer

    def get_indexer(self) -> Cache:
        return self._indexer

    def has_synced(self) -> bool:
        with self._started_lock:
            controller = self._controller
        return controller is not None and controller.has_synced()

    def last_sync_resource_version(self) -> str:
        with self._started_lock:
            controller = self._controller
        return "" if controller is None else controller.last_sync_resource_version()

    def has_started(self) -> bool:
        with self._started_lock:
            return self._started

    def is_stopped(self) -> bool:
        with self._started_lock:
            return self._stopped

    @property
    def resync_check_period(self) -> float:
        with self._started_lock:
            return self._resync_check_period

    # -- run ------------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """List, watch and notify until ``stop`` is set; returns once every thread has ended."""
        with self._started_lock:
            if self._started:
                logger.warning(
                    "%s: the shared informer has started, running it more than once is not allowed", self.name
                )
                return
            # The transform is the reflector's, applied as objects arrive, not the DeltaFIFO's.
            fifo = DeltaFIFO(
                key_function=deletion_handling_meta_namespace_key_func,
                known_objects=self._indexer,
                emit_delta_type_replaced=True,
                name=self.name,
            )
            self._controller = Controller(
                Config(
                    queue=fifo,
                    lister_watcher=self._lw,
                    process=self._handle_deltas,
                    full_resync_period=self._resync_check_period,
                    should_resync=self._processor.should_resync,
                    watch_error_handler=self._watch_error_handler,
                    watch_list_page_size=self._watch_list_page_size,
                    min_watch_timeout=self._min_watch_timeout,
                    expected_gvk=self._expected_gvk,
                    clock=self._clock,
                    name=self.name,
                    transform=self._transform,
                    use_watch_list=self._use_watch_list,
                )
            )
            self._started = True
            controller = self._controller
        try:
            self._processor.start()
            try:
                controller.run(stop)
            finally:
                # Handlers stop only after the controller has: nothing is distributed to a
                # stopped listener.
                self._processor.stop()
        finally:
            with self._started_lock:
                self._stopped = True

    def _handle_deltas(self, deltas: Deltas, is_in_initial_list: bool) -> None:
        with self._block_deltas:
            process_deltas(self._delta_handler, self._indexer, deltas, is_in_initial_list)

    def _on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._processor.distribute(AddNotification(obj, is_in_initial_list), sync=False)

    def _on_update(self, old: Any, new: Any) -> None:
        # An unchanged resourceVersion means a resync replay or a relist of an unchanged object:
        # only the handlers due for resync want it.
        try:
            is_sync = meta.get_resource_version(old) == meta.get_resource_version(new)
        except meta.NoMetaError:
            is_sync = False
        self._processor.distribute(UpdateNotification(old, new), sync=is_sync)

    def _on_delete(self, obj: Any) -> None:
        self._processor.distribute(DeleteNotification(obj), sync=False)
