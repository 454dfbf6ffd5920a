"""Event handlers: what an informer notifies (client-go ``ResourceEventHandler`` and adapters).

Handlers run after the cache has been updated, so a lister may already show a newer state than the
notification. They must not mutate the objects they are given (they are the cache's), and
``on_delete`` may receive a :class:`informers.tombstone.DeletedFinalStateUnknown`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class ResourceEventHandler(Protocol):
    """Receives an informer's notifications, in order, from one dedicated thread."""

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        """A new object; ``is_in_initial_list`` for the initial list (and a late handler's replay)."""
        ...

    def on_update(self, old: Any, new: Any) -> None:
        """A changed object; ``old.resourceVersion == new.resourceVersion`` for a resync replay."""
        ...

    def on_delete(self, obj: Any) -> None:
        """A deleted object, or a tombstone if the final state was not observed."""
        ...


class ResourceEventHandlerFuncs:
    """Adapt plain functions to a handler; missing ones are no-ops, ``is_in_initial_list`` is dropped."""

    def __init__(
        self,
        add_func: Callable[[Any], object] | None = None,
        update_func: Callable[[Any, Any], object] | None = None,
        delete_func: Callable[[Any], object] | None = None,
    ) -> None:
        self.add_func = add_func
        self.update_func = update_func
        self.delete_func = delete_func

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.add_func is not None:
            self.add_func(obj)

    def on_update(self, old: Any, new: Any) -> None:
        if self.update_func is not None:
            self.update_func(old, new)

    def on_delete(self, obj: Any) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)


class ResourceEventHandlerDetailedFuncs:
    """Like :class:`ResourceEventHandlerFuncs`, but ``add_func`` also gets ``is_in_initial_list``."""

    def __init__(
        self,
        add_func: Callable[[Any, bool], object] | None = None,
        update_func: Callable[[Any, Any], object] | None = None,
        delete_func: Callable[[Any], object] | None = None,
    ) -> None:
        self.add_func = add_func
        self.update_func = update_func
        self.delete_func = delete_func

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.add_func is not None:
            self.add_func(obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        if self.update_func is not None:
            self.update_func(old, new)

    def on_delete(self, obj: Any) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)
