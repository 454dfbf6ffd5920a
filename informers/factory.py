"""``SharedInformerFactory``: one informer per resource, shared by every controller that asks
(client-go ``informers/factory.go``).

Upstream keys informers by Go type; here the caller chooses a hashable key (the ``kube`` package
uses the resource's group/version/resource). Asking twice for the same key returns the same
informer, so two controllers watching Jobs share one watch and one cache.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Mapping

from informers.shared_informer import SharedIndexInformer
from informers.transforms import TransformFunc
from informers.wait import wait_for_cache_sync

logger = logging.getLogger(__name__)

NewInformerFunc = Callable[[float], SharedIndexInformer]
"""Builds the informer for a key, given the resync period the factory chose for it."""


class SharedInformerFactory:
    """Creates, starts, waits for and shuts down shared informers.

    ``default_resync`` is every informer's resync period unless ``custom_resync`` has one for its
    key; ``transform`` (if any) is installed on every informer the factory creates.
    """

    def __init__(
        self,
        default_resync: float = 0.0,
        *,
        custom_resync: Mapping[Hashable, float] | None = None,
        transform: TransformFunc | None = None,
    ) -> None:
        self._default_resync = default_resync
        self._custom_resync = dict(custom_resync or {})
        self._transform = transform
        self._lock = threading.Lock()
        self._informers: dict[Hashable, SharedIndexInformer] = {}
        self._started: set[Hashable] = set()
        self._threads: list[threading.Thread] = []
        self._shutting_down = False

    def informer_for(self, key: Hashable, new_func: NewInformerFunc) -> SharedIndexInformer:
        """The informer for ``key``, created with ``new_func(resync)`` the first time."""
        with self._lock:
            informer = self._informers.get(key)
            if informer is not None:
                return informer
            informer = new_func(self._custom_resync.get(key, self._default_resync))
            if self._transform is not None:
                informer.set_transform(self._transform)
            self._informers[key] = informer
            return informer

    def informers(self) -> dict[Hashable, SharedIndexInformer]:
        with self._lock:
            return dict(self._informers)

    def start(self, stop: threading.Event) -> None:
        """Run, each in its own thread, the informers not started yet; returns at once.

        Call it again after requesting more informers. After :meth:`shutdown` it does nothing.
        """
        with self._lock:
            if self._shutting_down:
                return
            for key, informer in self._informers.items():
                if key in self._started:
                    continue
                thread = threading.Thread(
                    target=informer.run, args=(stop,), name=f"informer-{informer.name}", daemon=True
                )
                thread.start()
                self._threads.append(thread)
                self._started.add(key)

    def wait_for_cache_sync(self, stop: threading.Event, timeout: float | None = None) -> dict[Hashable, bool]:
        """Wait for every *started* informer to sync; the result says which did."""
        with self._lock:
            started = {key: self._informers[key] for key in self._started}
        deadline = None if timeout is None else time.monotonic() + timeout
        result: dict[Hashable, bool] = {}
        for key, informer in started.items():
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            result[key] = wait_for_cache_sync(stop, informer.has_synced, timeout=remaining)
        return result

    def shutdown(self) -> None:
        """Refuse further starts and wait for every informer thread (set their ``stop`` first)."""
        with self._lock:
            self._shutting_down = True
            threads = list(self._threads)
        for thread in threads:
            thread.join()
