"""The low-level informer controller: a reflector filling a DeltaFIFO, one loop popping it
(client-go ``controller.go``).

:func:`process_deltas` is where the cache and the notifications meet: for each delta, oldest first,
the cache is updated and *then* the handler is told, so a handler always finds at least that state
in the cache.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from informers.clock import Clock
from informers.delta_fifo import DeltaFIFO, Deltas, DeltaType, FIFOClosedError, PopProcessFunc
from informers.handlers import ResourceEventHandler
from informers.index import IndexFuncError
from informers.listwatch import ListerWatcher
from informers.reflector import Reflector, WatchErrorHandler
from informers.store import Store
from informers.transforms import TransformFunc

logger = logging.getLogger(__name__)


@dataclass
class Config:
    """Everything a :class:`Controller` needs (client-go ``cache.Config``)."""

    queue: DeltaFIFO
    lister_watcher: ListerWatcher
    process: PopProcessFunc
    full_resync_period: float = 0.0
    should_resync: Callable[[], bool] | None = None
    watch_error_handler: WatchErrorHandler | None = None
    watch_list_page_size: int = 0
    min_watch_timeout: float | None = None
    expected_gvk: tuple[str, str] | None = None
    clock: Clock | None = None
    name: str = "informer"
    #: Applied by the reflector to each object as it arrives (see :class:`Reflector`).
    transform: TransformFunc | None = None
    #: client-go's ``WatchListClient`` gate (on by default since 1.35); used only when the
    #: ListerWatcher supports it.
    use_watch_list: bool = True


class Controller:
    """Runs the reflector in a thread and pops the queue in the caller's thread until stopped."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._reflector: Reflector | None = None

    def run(self, stop: threading.Event) -> None:
        """Block until ``stop`` is set (and the queue is drained), then join the reflector."""
        queue = self.config.queue
        # The reflector stops on its own event, so a crashed processing loop can stop it too.
        reflector_stop = threading.Event()

        def close_on_stop() -> None:
            stop.wait()
            reflector_stop.set()
            queue.close()

        closer = threading.Thread(target=close_on_stop, name=f"{self.config.name}-closer", daemon=True)
        closer.start()
        reflector = Reflector(
            self.config.lister_watcher,
            queue,
            name=self.config.name,
            resync_period=self.config.full_resync_period,
            should_resync=self.config.should_resync,
            clock=self.config.clock,
            watch_list_page_size=self.config.watch_list_page_size,
            min_watch_timeout=self.config.min_watch_timeout,
            expected_gvk=self.config.expected_gvk,
            watch_error_handler=self.config.watch_error_handler,
            transform=self.config.transform,
            use_watch_list=self.config.use_watch_list,
        )
        with self._lock:
            self._reflector = reflector
        reflector_thread = threading.Thread(
            target=reflector.run, args=(reflector_stop,), name=f"{self.config.name}-reflector", daemon=True
        )
        reflector_thread.start()
        try:
            self._process_loop()
        finally:
            reflector_stop.set()
            reflector_thread.join()
            if stop.is_set():
                closer.join()

    def _process_loop(self) -> None:
        while True:
            try:
                self.config.queue.pop(self.config.process)
            except FIFOClosedError:
                return
            except IndexFuncError:
                raise  # the cache is corrupt: let the thread die loudly (client-go panics)
            except Exception:
                logger.error("%s: error processing deltas", self.config.name, exc_info=True)

    def has_synced(self) -> bool:
        """The queue has delivered the whole initial list."""
        return self.config.queue.has_synced()

    def last_sync_resource_version(self) -> str:
        with self._lock:
            reflector = self._reflector
        return "" if reflector is None else reflector.last_sync_resource_version()


def process_deltas(
    handler: ResourceEventHandler, client_state: Store, deltas: Deltas, is_in_initial_list: bool
) -> None:
    """Apply ``deltas`` to ``client_state`` and notify ``handler``, one delta at a time.

    Sync/Replaced/Added/Updated become an update if the cache has the key (``on_update(old, new)``),
    an add otherwise; Deleted removes and calls ``on_delete`` (maybe with a tombstone).
    """
    for delta in deltas:
        obj = delta.object
        if delta.type == DeltaType.DELETED:
            client_state.delete(obj)
            handler.on_delete(obj)
            continue
        old, exists = client_state.get(obj)
        if exists:
            client_state.update(obj)
            handler.on_update(old, obj)
        else:
            client_state.add(obj)
            handler.on_add(obj, is_in_initial_list)
