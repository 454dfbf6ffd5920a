"""What the reflector's watch functions use of it: the protocol ``Reflector`` implements.

In Go, ``handleWatch`` and ``watchList`` are methods of ``Reflector`` and read its unexported
fields. Here they are functions in their own modules (handle_watch.py, watch_list.py), so what they
may touch is written down once, under client-go's names in snake_case: nothing else of the
reflector is theirs to read, and a test can hand them anything with these members.
"""

from __future__ import annotations

from typing import Protocol

from informers.backoff import BackoffManager
from informers.clock import Clock
from informers.listwatch import ListerWatcher
from informers.store import Store
from informers.transforms import TransformFunc
from informers.watch_stopper import WatchStopper

__all__ = ["WatchingReflector"]


class WatchingReflector(Protocol):
    """The reflector as ``handle_watch`` and ``watch_list`` see it."""

    @property
    def name(self) -> str: ...

    @property
    def store(self) -> Store:
        """Where a watch's events go (and where a watch-list's initial state is replaced)."""
        ...

    @property
    def lister_watcher(self) -> ListerWatcher: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def backoff_manager(self) -> BackoffManager: ...

    @property
    def expected_gvk(self) -> tuple[str, str] | None:
        """``(apiVersion, kind)``: events of any other kind are skipped; None checks nothing."""
        ...

    @property
    def transform(self) -> TransformFunc | None:
        """Applied to each object on its way in (never to a bookmark)."""
        ...

    @property
    def stopper(self) -> WatchStopper: ...

    def set_last_sync_resource_version(self, resource_version: str) -> None: ...

    def set_is_last_sync_resource_version_unavailable(self, is_unavailable: bool) -> None: ...

    def rewatch_resource_version(self) -> str:
        """``""`` once the last RV is known to be unusable, else the last RV."""
        ...

    def watch_timeout_seconds(self) -> int:
        """A watch's ``timeoutSeconds``, drawn from [min, 2 min) (inline in Go's ``watch``/``watchList``)."""
        ...
