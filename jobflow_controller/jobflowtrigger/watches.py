"""The dynamic informers of resource triggers: one per watched kind, running only while a trigger names it.

`ensure(keys)` is called with every kind the valid resource triggers name (`<apiVersion>/<kind>`):
an informer is started for a kind newly named (its resource found by discovery) and stopped for a
kind no trigger names any more. A kind outside `allowed` (`--trigger-watch-kinds`, which the
chart's RBAC grants get/list/watch on), a cluster-scoped kind, or one the API server does not serve
is not watched: `ensure` returns why, for the trigger's `TriggerFailed`.

Objects of the informer's initial list never fire (`is_in_initial_list`), nor do updates that
change nothing (a resync's replay); every other add, update and delete is passed to `on_event`
with `create`, `update` or `delete`. The caches keep no managedFields.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from informers import ResourceEventHandlerDetailedFuncs, SharedIndexInformer, strip_managed_fields
from informers.tombstone import DeletedFinalStateUnknown
from jobflow_controller.apis import meta
from jobflow_controller.apis.jobflowtrigger import EVENT_CREATE, EVENT_DELETE, EVENT_UPDATE
from jobflow_controller.jobflowtrigger import events as ev
from jobflow_controller.kube.clientset import Clientset

log = structlog.get_logger(__name__)

#: (watch key, event, object, old object or None)
OnEvent = Callable[[str, str, Mapping[str, Any], Mapping[str, Any] | None], None]


@dataclass
class _Watch:
    informer: SharedIndexInformer
    stop: threading.Event
    thread: threading.Thread


class WatchSet:
    """The running watches by key; thread-safe (`ensure` is called from the trigger workers)."""

    def __init__(self, clientset: Clientset, allowed: Collection[str], on_event: OnEvent) -> None:
        self.clientset = clientset
        self.allowed = frozenset(allowed)
        self.on_event = on_event
        self._watches: dict[str, _Watch] = {}
        self._lock = threading.Lock()

    def running(self) -> list[str]:
        with self._lock:
            return sorted(self._watches)

    def has_synced(self, key: str) -> bool:
        with self._lock:
            watch = self._watches.get(key)
        return watch is not None and watch.informer.has_synced()

    def ensure(self, keys: Collection[str]) -> dict[str, str]:
        """Watch exactly `keys` (those that may be watched); the others' problems, by key."""
        problems: dict[str, str] = {}
        with self._lock:
            for key in sorted(set(self._watches) - set(keys)):
                watch = self._watches.pop(key)
                watch.stop.set()
                log.info("stopped watching: no trigger names it", kind=key)
            for key in sorted(set(keys) - set(self._watches)):
                problem = self._start(key)
                if problem is not None:
                    problems[key] = problem
        return problems

    def stop_all(self) -> None:
        self.ensure(())

    def _start(self, key: str) -> str | None:
        if key not in self.allowed:
            return ev.MESSAGE_NOT_WATCHABLE % (key, ", ".join(sorted(self.allowed)) or "none")
        api_version, _, kind = key.rpartition("/")
        try:
            resource = self.clientset.discover(api_version, kind)
        except Exception as err:  # noqa: BLE001 - the trigger's Warning says it; a later sync retries
            return ev.MESSAGE_UNKNOWN_KIND % (key, ev.cut(str(err)))
        if resource is None or not resource.namespaced:
            return ev.MESSAGE_UNKNOWN_KIND % (key, "not found, or not namespaced")
        informer = SharedIndexInformer(
            self.clientset.resource(resource).lister_watcher(),
            name=f"trigger-{resource.group_resource}",
            transform=strip_managed_fields,
        )
        informer.add_event_handler(
            ResourceEventHandlerDetailedFuncs(
                add_func=lambda obj, initial: None if initial else self._emit(key, EVENT_CREATE, obj, None),
                update_func=lambda old, new: self._updated(key, old, new),
                delete_func=lambda obj: self._deleted(key, obj),
            )
        )
        stop = threading.Event()
        thread = threading.Thread(target=informer.run, args=(stop,), name=f"trigger-watch-{key}", daemon=True)
        self._watches[key] = _Watch(informer, stop, thread)
        thread.start()
        log.info("watching for resource triggers", kind=key, resource=resource.group_resource)
        return None

    def _emit(self, key: str, event: str, obj: Any, old: Any) -> None:
        if isinstance(obj, Mapping):
            self.on_event(key, event, obj, old if isinstance(old, Mapping) else None)

    def _updated(self, key: str, old: Any, new: Any) -> None:
        if (
            isinstance(old, Mapping)
            and isinstance(new, Mapping)
            and meta.resource_version(old) == meta.resource_version(new)
        ):
            return  # a resync's replay: nothing changed
        self._emit(key, EVENT_UPDATE, new, old)

    def _deleted(self, key: str, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        self._emit(key, EVENT_DELETE, obj, None)
