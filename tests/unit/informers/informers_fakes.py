"""Test doubles for code built on informers: a fake clock, a fake watch, an in-memory API source.

:class:`FakeListerWatcher` plays the API server for one resource, like client-go's
``FakeControllerSource``: it keeps the objects, bumps a resourceVersion on every change, keeps the
change log so a watch from an older RV replays what it missed, and can drop watch events, close
watches, expire resourceVersions and continue tokens, and fail calls on demand. Everything it hands
out is a deep copy, so a test changing its own dicts never reaches into a cache.

Test support only: the product never imports it, so it lives beside the tests that use it.
"""

from __future__ import annotations

import builtins
import copy
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from informers import meta
from informers.clock import Clock
from informers.controller import Config, Controller, process_deltas
from informers.delta_fifo import DeltaFIFO, Deltas
from informers.errors import ApiStatusError, ExpiredError
from informers.handlers import ResourceEventHandler
from informers.keys import deletion_handling_meta_namespace_key_func, meta_namespace_key_func
from informers.listwatch import EventType, ListerWatcher, ListOptions, ListResult, WatchEvent
from informers.store import Cache, new_store
from informers.transforms import TransformFunc

# -- polling ----------------------------------------------------------------------------------


def eventually(predicate: Callable[[], bool], timeout: float = 5.0, interval: float = 0.002) -> bool:
    """Poll ``predicate`` every ``interval`` seconds until it is true or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


# -- clock ------------------------------------------------------------------------------------


class _Sleeper:
    __slots__ = ("deadline", "fired")

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.fired = False


class FakeClock:
    """A clock that only moves when :meth:`step` is called; ``sleep`` waits for fake time.

    Satisfies :class:`informers.clock.Clock`. A sleep interrupted by its ``stop`` event returns
    True within a few milliseconds of real time.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._cond = threading.Condition()
        self._now = start
        self._sleepers: list[_Sleeper] = []

    def now(self) -> float:
        with self._cond:
            return self._now

    def step(self, seconds: float) -> None:
        """Advance time; every sleeper whose deadline has come is woken (and no longer counted)."""
        with self._cond:
            self._now += seconds
            self._fire_locked()

    def set_time(self, now: float) -> None:
        with self._cond:
            self._now = now
            self._fire_locked()

    def _fire_locked(self) -> None:
        for sleeper in self._sleepers:
            if sleeper.deadline <= self._now:
                sleeper.fired = True
        self._sleepers = [s for s in self._sleepers if not s.fired]
        self._cond.notify_all()

    def has_waiters(self) -> bool:
        with self._cond:
            return bool(self._sleepers)

    def waiter_count(self) -> int:
        with self._cond:
            return len(self._sleepers)

    def wait_for_waiters(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Wait (real time) until at least ``count`` threads are sleeping on this clock."""
        return eventually(lambda: self.waiter_count() >= count, timeout)

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        with self._cond:
            if stop is not None and stop.is_set():
                return True
            if seconds <= 0:
                return False
            sleeper = _Sleeper(self._now + seconds)
            self._sleepers.append(sleeper)
            try:
                while not sleeper.fired:
                    if stop is not None and stop.is_set():
                        return True
                    # An Event cannot notify our condition, so poll it briefly when there is one.
                    self._cond.wait(0.005 if stop is not None else None)
                return False
            finally:
                if sleeper in self._sleepers:
                    self._sleepers.remove(sleeper)


# -- watch ------------------------------------------------------------------------------------


class FakeWatch:
    """A :class:`informers.listwatch.Watch` fed by the test.

    :meth:`close` ends the stream the way a server timeout does (after the queued events);
    :meth:`fail` makes iteration raise; :meth:`stop` is the client hanging up.
    """

    def __init__(self, events: Iterable[WatchEvent] = ()) -> None:
        self._cond = threading.Condition()
        self._events: deque[WatchEvent] = deque(events)
        self._stopped = False
        self._closed = False
        self._error: BaseException | None = None

    def action(self, event_type: str, obj: Mapping[str, Any]) -> None:
        with self._cond:
            if self._stopped or self._closed:
                return
            self._events.append(WatchEvent(event_type, dict(obj)))
            self._cond.notify_all()

    def add(self, obj: Mapping[str, Any]) -> None:
        self.action(EventType.ADDED, obj)

    def modify(self, obj: Mapping[str, Any]) -> None:
        self.action(EventType.MODIFIED, obj)

    def delete(self, obj: Mapping[str, Any]) -> None:
        self.action(EventType.DELETED, obj)

    def bookmark(self, resource_version: str, *, kind: str = "Pod", api_version: str = "v1") -> None:
        self.action(
            EventType.BOOKMARK,
            {"apiVersion": api_version, "kind": kind, "metadata": {"resourceVersion": resource_version}},
        )

    def error(self, status: Mapping[str, Any]) -> None:
        self.action(EventType.ERROR, status)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def fail(self, err: BaseException) -> None:
        with self._cond:
            self._error = err
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    @property
    def stopped(self) -> bool:
        with self._cond:
            return self._stopped

    @property
    def finished(self) -> bool:
        """Stopped by the client, or closed/failed by the "server"."""
        with self._cond:
            return self._stopped or self._closed or self._error is not None

    def __iter__(self) -> FakeWatch:
        return self

    def __next__(self) -> WatchEvent:
        with self._cond:
            while True:
                if self._stopped:
                    raise StopIteration
                if self._events:
                    return self._events.popleft()
                if self._error is not None:
                    err, self._error = self._error, None
                    self._closed = True
                    raise err
                if self._closed:
                    raise StopIteration
                self._cond.wait()


# -- objects ----------------------------------------------------------------------------------


def status_object(code: int, reason: str, message: str = "") -> dict[str, Any]:
    """A ``Status`` as the API sends it in an ERROR watch event."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def new_object(
    name: str,
    namespace: str = "default",
    *,
    resource_version: str | None = None,
    labels: Mapping[str, str] | None = None,
    kind: str = "Pod",
    api_version: str = "v1",
    **fields: Any,
) -> dict[str, Any]:
    """A minimal API object dict (``namespace=""`` for cluster-scoped)."""
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    if resource_version is not None:
        metadata["resourceVersion"] = resource_version
    if labels is not None:
        metadata["labels"] = dict(labels)
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}


# -- the fake API source --------------------------------------------------------------------


class FakeListerWatcher:
    """An in-memory API source for one resource, implementing :class:`ListerWatcher`.

    The resourceVersion is a counter; change *n* has RV ``n``. ``list`` honours ``limit`` and
    ``continue`` (tokens pin a snapshot); ``watch`` from RV ``""``/``"0"`` starts with ADDED events for
    everything (as the API server does), from a number it replays the changes after it, from a
    compacted RV it fails with 410 (raised, or as an ERROR event if ``expired_as_event``), and from
    a future RV it fails with "Too large resource version". With ``watch_list`` it supports
    watch-list semantics: a watch with ``send_initial_events`` starts with ADDED events for
    everything, then a BOOKMARK at the current RV annotated ``k8s.io/initial-events-end``.
    """

    def __init__(
        self,
        objects: Iterable[Mapping[str, Any]] = (),
        *,
        expired_as_event: bool = False,
        watch_list: bool = False,
    ) -> None:
        self._lock = threading.RLock()
        self._calls = threading.Condition(self._lock)
        self._items: dict[str, dict[str, Any]] = {}
        self._changes: list[WatchEvent] = []
        self._compacted_rv = 0
        self._watches: list[FakeWatch] = []
        self._snapshots: dict[str, tuple[list[dict[str, Any]], str]] = {}
        self._token_seq = itertools.count(1)
        self._list_errors: deque[BaseException] = deque()
        self._watch_errors: deque[BaseException] = deque()
        self.expired_as_event = expired_as_event
        self.watch_list = watch_list
        self.list_calls: list[ListOptions] = []
        self.watch_calls: list[ListOptions] = []
        for obj in objects:
            self.add(obj)

    # -- state --

    @property
    def resource_version(self) -> str:
        with self._lock:
            return str(len(self._changes))

    def objects(self) -> builtins.list[dict[str, Any]]:
        with self._lock:
            return [copy.deepcopy(o) for _, o in sorted(self._items.items())]

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            obj = self._items.get(key)
            return None if obj is None else copy.deepcopy(obj)

    # -- changes --

    def add(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create ``obj`` (its RV is assigned) and tell every open watch; returns the stored copy."""
        return self._change(EventType.ADDED, obj, broadcast=True)

    def modify(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        return self._change(EventType.MODIFIED, obj, broadcast=True)

    def delete(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        return self._change(EventType.DELETED, obj, broadcast=True)

    def add_drop_watch(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create ``obj`` without telling the open watches (a lost event); later watches replay it."""
        return self._change(EventType.ADDED, obj, broadcast=False)

    def modify_drop_watch(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        return self._change(EventType.MODIFIED, obj, broadcast=False)

    def delete_drop_watch(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        return self._change(EventType.DELETED, obj, broadcast=False)

    def _change(self, event_type: EventType, obj: Mapping[str, Any], *, broadcast: bool) -> dict[str, Any]:
        stored = copy.deepcopy(dict(obj))
        with self._lock:
            rv = str(len(self._changes) + 1)
            stored.setdefault("metadata", {})["resourceVersion"] = rv
            key = meta_namespace_key_func(stored)
            if event_type is EventType.DELETED:
                self._items.pop(key, None)
            else:
                self._items[key] = stored
            self._changes.append(WatchEvent(event_type, stored))
            if broadcast:
                for w in self._live_watches_locked():
                    w.action(event_type, copy.deepcopy(stored))
            return copy.deepcopy(stored)

    # -- disruption --

    def bookmark(self) -> None:
        """Send every open watch a BOOKMARK at the current RV."""
        with self._lock:
            rv = self.resource_version
            for w in self._live_watches_locked():
                w.bookmark(rv)

    def reset_watch(self) -> None:
        """Close every open watch, as a server-side timeout would."""
        with self._lock:
            for w in self._live_watches_locked():
                w.close()

    def expire_watches(self) -> None:
        """End every open watch with an ERROR 410 event."""
        with self._lock:
            for w in self._live_watches_locked():
                w.error(status_object(410, "Expired", "too old resource version"))
                w.close()

    def compact(self) -> None:
        """Forget the change log: watching from any RV before now fails with 410."""
        with self._lock:
            self._compacted_rv = len(self._changes)

    def expire_continue_tokens(self) -> None:
        with self._lock:
            self._snapshots.clear()

    def fail_next_list(self, *errors: BaseException) -> None:
        """Make the next ``len(errors)`` list calls raise these, in order."""
        with self._lock:
            self._list_errors.extend(errors)

    def fail_next_watch(self, *errors: BaseException) -> None:
        with self._lock:
            self._watch_errors.extend(errors)

    def live_watches(self) -> builtins.list[FakeWatch]:
        with self._lock:
            return self._live_watches_locked()

    def _live_watches_locked(self) -> builtins.list[FakeWatch]:
        self._watches = [w for w in self._watches if not w.finished]
        return list(self._watches)

    def wait_for_watch_calls(self, count: int, timeout: float = 5.0) -> bool:
        """Wait (real time) until ``watch`` has been called ``count`` times."""
        deadline = time.monotonic() + timeout
        with self._calls:
            while len(self.watch_calls) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._calls.wait(remaining)
            return True

    def wait_for_list_calls(self, count: int, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._calls:
            while len(self.list_calls) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._calls.wait(remaining)
            return True

    # -- ListerWatcher --

    def is_watch_list_semantics_supported(self) -> bool:
        return self.watch_list

    def list(self, options: ListOptions) -> ListResult:
        with self._lock:
            self.list_calls.append(options)
            self._calls.notify_all()
            if self._list_errors:
                raise self._list_errors.popleft()
            if options.continue_token:
                snapshot = self._snapshots.pop(options.continue_token, None)
                if snapshot is None:
                    raise ExpiredError(
                        "The provided continue parameter is too old to display a consistent list result."
                    )
                remaining, rv = snapshot
            else:
                remaining = [copy.deepcopy(o) for _, o in sorted(self._items.items())]
                rv = self.resource_version
            if not options.limit or len(remaining) <= options.limit:
                return ListResult(items=remaining, resource_version=rv, continue_token=None)
            token = f"continue-{next(self._token_seq)}"
            self._snapshots[token] = (remaining[options.limit :], rv)
            return ListResult(items=remaining[: options.limit], resource_version=rv, continue_token=token)

    def watch(self, options: ListOptions) -> FakeWatch:
        with self._lock:
            self.watch_calls.append(options)
            self._calls.notify_all()
            if self._watch_errors:
                raise self._watch_errors.popleft()
            w = FakeWatch()
            rv_text = options.resource_version or ""
            if self.watch_list and options.send_initial_events:
                if rv_text not in ("", "0") and int(rv_text) > len(self._changes):
                    raise ApiStatusError(504, "Timeout", f"Too large resource version: {rv_text}")
                for _, obj in sorted(self._items.items()):
                    w.add(copy.deepcopy(obj))
                w.action(
                    EventType.BOOKMARK,
                    {
                        "metadata": {
                            "resourceVersion": self.resource_version,
                            "annotations": {"k8s.io/initial-events-end": "true"},
                        }
                    },
                )
            elif rv_text in ("", "0"):
                for _, obj in sorted(self._items.items()):
                    w.add(copy.deepcopy(obj))
            else:
                rv = int(rv_text)
                if rv < self._compacted_rv:
                    if not self.expired_as_event:
                        raise ExpiredError(f"too old resource version: {rv} ({self._compacted_rv})")
                    w.error(status_object(410, "Expired", f"too old resource version: {rv}"))
                    w.close()
                    return w
                if rv > len(self._changes):
                    raise ApiStatusError(
                        504,
                        "Timeout",
                        f"Too large resource version: {rv}, current: {len(self._changes)}",
                        details={
                            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
                        },
                    )
                for event in self._changes[rv:]:
                    w.action(event.type, copy.deepcopy(event.object))
            self._watches.append(w)
            return w


# -- handlers ---------------------------------------------------------------------------------


class RecordingHandler:
    """A :class:`ResourceEventHandler` that records what it is told, for assertions.

    ``events`` holds ``("add", obj, is_in_initial_list)``, ``("update", old, new)`` and
    ``("delete", obj, None)`` tuples in arrival order.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: builtins.list[tuple[str, Any, Any]] = []

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        with self._lock:
            self.events.append(("add", obj, is_in_initial_list))

    def on_update(self, old: Any, new: Any) -> None:
        with self._lock:
            self.events.append(("update", old, new))

    def on_delete(self, obj: Any) -> None:
        with self._lock:
            self.events.append(("delete", obj, None))

    def snapshot(self) -> builtins.list[tuple[str, Any, Any]]:
        with self._lock:
            return list(self.events)

    def count(self, kind: str | None = None) -> int:
        with self._lock:
            return sum(1 for e in self.events if kind is None or e[0] == kind)

    def names(self, kind: str | None = None) -> builtins.list[str]:
        """The ``metadata.name`` of each recorded object (the new one for updates)."""
        result = []
        for event_kind, first, second in self.snapshot():
            if kind is not None and event_kind != kind:
                continue
            obj = second if event_kind == "update" else first
            try:
                result.append(meta.get_name(obj))
            except meta.NoMetaError:
                result.append(repr(obj))
        return result

    def wait_for(self, count: int, kind: str | None = None, timeout: float = 5.0) -> bool:
        return eventually(lambda: self.count(kind) >= count, timeout)


# -- single-handler informers -----------------------------------------------------------------


def new_informer(
    lw: ListerWatcher,
    resync_period: float,
    handler: ResourceEventHandler,
    *,
    transform: TransformFunc | None = None,
    clock: Clock | None = None,
) -> tuple[Cache, Controller]:
    """client-go's ``cache.NewInformer``: one handler over its own store, for testing ``Controller``.

    The product only runs shared informers; this wires the low-level pieces the way they do.
    """
    store = new_store(deletion_handling_meta_namespace_key_func)
    fifo = DeltaFIFO(
        key_function=deletion_handling_meta_namespace_key_func, known_objects=store, emit_delta_type_replaced=True
    )

    def process(deltas: Deltas, is_in_initial_list: bool) -> None:
        process_deltas(handler, store, deltas, is_in_initial_list)

    config = Config(
        queue=fifo,
        lister_watcher=lw,
        process=process,
        full_resync_period=resync_period,
        clock=clock,
        transform=transform,
    )
    return store, Controller(config)


class FilteringResourceEventHandler:
    """client-go's handler filter: pass to ``handler`` only the objects ``filter_func`` accepts.

    An update is translated by which side passes: both → update, only the new → add, only the old →
    delete (the object left the filtered set), neither → nothing.
    """

    def __init__(self, filter_func: Callable[[Any], bool], handler: ResourceEventHandler) -> None:
        self.filter_func = filter_func
        self.handler = handler

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.filter_func(obj):
            self.handler.on_add(obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        new_passes = self.filter_func(new)
        old_passes = self.filter_func(old)
        if new_passes and old_passes:
            self.handler.on_update(old, new)
        elif new_passes:
            self.handler.on_add(new, False)
        elif old_passes:
            self.handler.on_delete(old)

    def on_delete(self, obj: Any) -> None:
        if self.filter_func(obj):
            self.handler.on_delete(obj)
