"""One replica's informers, shared by its shard units: each object decoded once, routed by shard.

A replica holding k shards must not LIST, WATCH and decode every object k times. So the replica
keeps one *source* informer per resource (the API's stream, decoded and cached once), and each
unit's informers are fed from it by a `LocalListerWatcher`: its LIST is a snapshot of the sources'
caches filtered to the unit's shard, its WATCH the keys the sources' event handler routed to the
unit, each turned into the object's current state. A unit's cache holds the very dicts of the
source cache (no copy, no second decode), and taking a shard over lists nothing from the API when
the sources already hold it.

Delivery is at least once and in order per key: the subscription starts before the snapshot, so a
change lands either in the snapshot or after it (or both, and the repeat is skipped because the
object's resourceVersion is the one already delivered). Emitting the current state rather than the
notified one keeps a late notification from moving a unit's cache backwards.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from informers import (
    DeletedFinalStateUnknown,
    ListOptions,
    ListResult,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    WatchEvent,
    meta_namespace_key_func,
)
from informers.listwatch import EventType

#: How often a LIST waiting for the sources looks at its stop event.
POLL = 0.1
#: How often an idle WATCH looks at the unit's stop event (stopping the watch wakes it at once).
WATCH_POLL = 1.0

Owns = Callable[[Any], bool]


class SourceStoppedError(RuntimeError):
    """The unit (or the process) stopped while its view waited for the sources."""


class _Subscription:
    """The keys routed to one view since its last LIST, in arrival order."""

    def __init__(self, owns: Owns) -> None:
        self.owns = owns
        self._cond = threading.Condition()
        self._keys: deque[str] = deque()
        self.closed = False

    def push(self, key: str) -> None:
        with self._cond:
            if not self.closed:
                self._keys.append(key)
                self._cond.notify()

    def pop(self, timeout: float) -> str | None:
        with self._cond:
            if not self._keys:
                self._cond.wait(timeout)
            return self._keys.popleft() if self._keys else None

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._keys.clear()
            self._cond.notify_all()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()


class SourceHub:
    """A source informer and the views subscribed to it; its one handler routes keys by `owns`."""

    def __init__(self, informer: SharedIndexInformer) -> None:
        self.informer = informer
        self._mu = threading.Lock()
        self._subscriptions: list[_Subscription] = []
        informer.add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._route,
                update_func=lambda _old, new: self._route(new),
                delete_func=self._route,
            )
        )

    def _route(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        with self._mu:
            subscriptions = list(self._subscriptions)
        if not subscriptions:
            return
        key = meta_namespace_key_func(obj)
        for sub in subscriptions:
            if sub.owns(obj):
                sub.push(key)

    def subscribe(self, sub: _Subscription) -> None:
        with self._mu:
            self._subscriptions.append(sub)

    def unsubscribe(self, sub: _Subscription) -> None:
        with self._mu:
            if sub in self._subscriptions:
                self._subscriptions.remove(sub)
        sub.close()

    def get(self, key: str) -> Any | None:
        obj, exists = self.informer.get_indexer().get_by_key(key)
        return obj if exists else None

    def subscribers(self) -> int:
        with self._mu:
            return len(self._subscriptions)


def _rv(obj: Any) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class LocalListerWatcher:
    """A unit's ListerWatcher over the replica's source informers (`hubs`), for the objects `owns` keeps.

    Several hubs make one stream (a Job is in one of them at a time: the first that has a key wins).
    """

    def __init__(self, hubs: Sequence[SourceHub], owns: Owns, stop: threading.Event) -> None:
        self.hubs = tuple(hubs)
        self.owns = owns
        self._stop = stop
        self._mu = threading.Lock()
        self._sub: _Subscription | None = None
        self._delivered: dict[str, Any] = {}

    def list(self, options: ListOptions) -> ListResult:
        """Wait for the sources to sync, subscribe, then snapshot what they cache of our shard."""
        del options  # the whole (local) list, always
        while not all(hub.informer.has_synced() for hub in self.hubs):
            if self._stop.wait(POLL):
                raise SourceStoppedError("stopped while the shared informers were syncing")
        sub = _Subscription(self.owns)
        for hub in self.hubs:
            hub.subscribe(sub)
        delivered: dict[str, Any] = {}
        for hub in reversed(self.hubs):  # the first hub's copy of a key wins
            for obj in hub.informer.get_indexer().list():
                if self.owns(obj):
                    delivered[meta_namespace_key_func(obj)] = obj
        with self._mu:
            old, self._sub, self._delivered = self._sub, sub, dict(delivered)
        if old is not None:
            self._unsubscribe(old)
        version = max((hub.informer.last_sync_resource_version() for hub in self.hubs), key=_rv_order)
        return ListResult(items=list(delivered.values()), resource_version=version)

    def watch(self, options: ListOptions) -> _LocalWatch:
        del options
        with self._mu:
            sub = self._sub
        if sub is None:
            raise RuntimeError("watch before list")
        return _LocalWatch(self, sub)

    def is_watch_list_semantics_supported(self) -> bool:
        return False

    def stopped(self) -> bool:
        return self._stop.is_set()

    def close(self) -> None:
        """Stop routing to this view (the unit is over)."""
        with self._mu:
            sub, self._sub = self._sub, None
            self._delivered = {}
        if sub is not None:
            self._unsubscribe(sub)

    def _unsubscribe(self, sub: _Subscription) -> None:
        for hub in self.hubs:
            hub.unsubscribe(sub)

    def event_for(self, key: str) -> WatchEvent | None:
        """The event that brings the unit from what it was last given of `key` to the sources' state."""
        current = None
        for hub in self.hubs:
            obj = hub.get(key)
            if obj is not None and self.owns(obj):
                current = obj
                break
        with self._mu:
            previous = self._delivered.get(key)
            if current is None:
                if previous is None:
                    return None
                del self._delivered[key]
                return WatchEvent(EventType.DELETED.value, previous)
            if previous is not None and (previous is current or _rv(previous) == _rv(current)):
                return None
            self._delivered[key] = current
        kind = EventType.ADDED if previous is None else EventType.MODIFIED
        return WatchEvent(kind.value, current)


def _rv_order(version: str) -> tuple[int, str]:
    """Order resourceVersions numerically when they are numbers (etcd's are), else as text."""
    return (int(version), version) if version.isdigit() else (-1, version)


class _LocalWatch:
    """The keys routed to one view, as watch events, until stopped (or the view relists)."""

    def __init__(self, view: LocalListerWatcher, sub: _Subscription) -> None:
        self._view = view
        self._sub = sub
        self._stopped = threading.Event()

    def __iter__(self) -> Iterator[WatchEvent]:
        while not (self._stopped.is_set() or self._sub.closed or self._view.stopped()):
            key = self._sub.pop(WATCH_POLL)
            if key is None:
                continue
            event = self._view.event_for(key)
            if event is not None:
                yield event

    def stop(self) -> None:
        self._stopped.set()
        self._sub.wake()
