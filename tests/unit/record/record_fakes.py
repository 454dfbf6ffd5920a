"""Fakes for the record tests: clocks, a sink that records its calls, and event builders.

The builders mirror client-go's ``events_cache_test.go`` helpers (``makeObjectReference``,
``makeEvent``, ``makeEvents``, ``makeSimilarEvents``) so the ported tables read the same.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from jobflow_controller.record import Event, EventBroadcaster, EventWatcher, SinkError

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


class SimpleIntervalClock:
    """client-go's ``SimpleIntervalClock``: every ``now()`` read advances time by ``step``.

    ``wall()`` reports the time of the last ``now()`` read without advancing, so a caller that
    reads both (the aggregator) sees one instant, as Go's single ``clock.Now()`` gives it.
    """

    def __init__(self, step: float, start: datetime = T0) -> None:
        self._step = step
        self._start = start
        self._t = 0.0

    def now(self) -> float:
        self._t += self._step
        return self._t

    def wall(self) -> datetime:
        return self._start + timedelta(seconds=self._t)


class ManualClock:
    """A clock that moves only when the test calls ``step``."""

    def __init__(self, start: datetime = T0) -> None:
        self._start = start
        self._t = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._t

    def wall(self) -> datetime:
        with self._lock:
            return self._start + timedelta(seconds=self._t)

    def step(self, seconds: float) -> None:
        with self._lock:
            self._t += seconds


@dataclass
class SinkCall:
    op: str  # "create" | "patch" | "update"
    event: Event
    patch: dict[str, Any] | None = None


Failure = Callable[[str, Event], BaseException | None]


@dataclass
class FakeSink:
    """An in-memory Events API: stores by namespace/name, applies patches, records every call.

    ``fail`` is consulted before each call with the operation and event; an exception it returns
    is raised instead of performing the call. ``block`` (when set to an Event) makes each call
    wait until it is set.
    """

    fail: Failure | None = None
    block: threading.Event | None = None
    calls: list[SinkCall] = field(default_factory=list)
    stored: dict[tuple[str, str], Event] = field(default_factory=dict)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _rv: int = 0

    def create(self, event: Event) -> Event:
        return self._call("create", event, None)

    def update(self, event: Event) -> Event:
        return self._call("update", event, None)

    def patch(self, event: Event, data: Mapping[str, Any]) -> Event:
        return self._call("patch", event, dict(data))

    def _call(self, op: str, event: Event, patch: dict[str, Any] | None) -> Event:
        if self.block is not None:
            self.block.wait(5)
        snapshot = copy.deepcopy(event)
        with self._cond:
            self.calls.append(SinkCall(op, snapshot, patch))
            self._cond.notify_all()
            err = self.fail(op, snapshot) if self.fail is not None else None
            if err is not None:
                raise err
            key = (snapshot["metadata"]["namespace"], snapshot["metadata"]["name"])
            if op == "patch":
                if key not in self.stored:
                    raise SinkError("not found", status=404, reason="NotFound", not_found=True)
                stored = self.stored[key]
                stored.update(patch or {})  # our patches only set top-level scalars
            else:
                if op == "create" and key in self.stored:
                    raise SinkError("exists", status=409, reason="AlreadyExists", already_exists=True)
                stored = copy.deepcopy(snapshot)
                self.stored[key] = stored
            self._rv += 1
            stored["metadata"]["resourceVersion"] = str(self._rv)
            return copy.deepcopy(stored)

    def wait_for_calls(self, n: int, timeout: float = 5.0) -> list[SinkCall]:
        """Block until at least ``n`` calls were made; return them."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.calls) >= n, timeout):
                raise AssertionError(f"expected {n} sink calls, got {len(self.calls)}")
            return list(self.calls)

    def ops(self) -> list[str]:
        with self._cond:
            return [call.op for call in self.calls]


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``predicate`` every millisecond until it holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.001)


def make_object_reference(kind: str, name: str, namespace: str) -> dict[str, str]:
    return {
        "kind": kind,
        "namespace": namespace,
        "name": name,
        "uid": "C934D34AFB20242",
        "apiVersion": "version",
        "fieldPath": "spec.containers{mycontainer}",
    }


def make_event(reason: str, message: str, ref: Mapping[str, str]) -> Event:
    stamp = "2026-03-01T12:00:00Z"
    return {
        "metadata": {},
        "reason": reason,
        "message": message,
        "involvedObject": dict(ref),
        "source": {"component": "kubelet", "host": "kublet.node1"},
        "count": 1,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "type": "Normal",
    }


def make_events(num: int, template: Event) -> list[Event]:
    return [copy.deepcopy(template) for _ in range(num)]


def make_unique_events(num: int) -> list[Event]:
    return [
        make_event(f"reason:{i}", f"message:{i}", make_object_reference("Pod", f"pod{i}", "ns")) for i in range(num)
    ]


def make_similar_events(num: int, template: Event, message_prefix: str) -> list[Event]:
    events = make_events(num, template)
    for i, event in enumerate(events):
        event["message"] = f"{message_prefix}-{i}-{template['message']}"
    return events


def set_count(event: Event, count: int) -> Event:
    out = copy.deepcopy(event)
    out["count"] = count
    return out


# -- client-go's StartLogging -----------------------------------------------------------------


def _go_quote(value: Any) -> str:
    return json.dumps("" if value is None else str(value), ensure_ascii=False)


def _go_syntax_reference(ref: Mapping[str, Any]) -> str:
    """``%#v`` of a ``v1.ObjectReference``, as ``StartLogging`` prints it."""
    fields = (
        ("Kind", "kind"),
        ("Namespace", "namespace"),
        ("Name", "name"),
        ("UID", "uid"),
        ("APIVersion", "apiVersion"),
        ("ResourceVersion", "resourceVersion"),
        ("FieldPath", "fieldPath"),
    )
    inner = ", ".join(f"{go}:{_go_quote(ref.get(key, ''))}" for go, key in fields)
    return f"v1.ObjectReference{{{inner}}}"


def start_logging(broadcaster: EventBroadcaster, logf: Callable[[str], None]) -> EventWatcher:
    """client-go's ``StartLogging``: each event to ``logf`` as ``Event(v1.ObjectReference{...}): ...``.

    The product logs events structured (``start_structured_logging``); the tests use this plain
    watcher to see every event the broadcaster distributed.
    """

    def handler(event: Event) -> None:
        ref = event.get("involvedObject") or {}
        logf(
            f"Event({_go_syntax_reference(ref)}): type: '{event.get('type', '')}' "
            f"reason: '{event.get('reason', '')}' {event.get('message', '')}"
        )

    return broadcaster.start_event_watcher(handler)
