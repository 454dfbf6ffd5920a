"""One watch event into a store (client-go ``handleAnyWatch``): what the watch and the watch-list share.

``apply_watch_event`` is driven here through a stand-in for the reflector, which is all the
``WatchingReflector`` protocol asks for: the watch functions need nothing else of a ``Reflector``.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from informers_fakes import FakeClock, FakeWatch, new_object

from informers import BackoffManager, ListOptions, ListResult, Store, new_indexer, new_store
from informers.handle_watch import Applied, WatchCycle, apply_watch_event, handle_watch
from informers.index import IndexFuncError
from informers.listwatch import EventType, ListerWatcher
from informers.transforms import TransformFunc
from informers.watch_list import handle_watch_list, watch_list
from informers.watch_stopper import WatchStopper
from informers.watching_reflector import WatchingReflector

END = "k8s.io/initial-events-end"


class _UnusedLW:
    def list(self, options: ListOptions) -> ListResult:
        raise AssertionError("not used")

    def watch(self, options: ListOptions) -> FakeWatch:
        raise AssertionError("not used")


@dataclass
class StandIn:
    """Exactly the members of :class:`WatchingReflector`, and a record of the RVs it was given."""

    store: Store = field(default_factory=new_store)
    expected_gvk: tuple[str, str] | None = None
    transform: TransformFunc | None = None
    name: str = "stand-in"
    lister_watcher: ListerWatcher = field(default_factory=_UnusedLW)
    clock: FakeClock = field(default_factory=FakeClock)
    backoff_manager: BackoffManager = field(default_factory=BackoffManager)
    stopper: WatchStopper = field(default_factory=lambda: WatchStopper("stand-in"))
    resource_versions: list[str] = field(default_factory=list)
    unavailable: list[bool] = field(default_factory=list)

    def set_last_sync_resource_version(self, resource_version: str) -> None:
        self.resource_versions.append(resource_version)

    def set_is_last_sync_resource_version_unavailable(self, is_unavailable: bool) -> None:
        self.unavailable.append(is_unavailable)

    def rewatch_resource_version(self) -> str:
        return self.resource_versions[-1] if self.resource_versions else ""

    def watch_timeout_seconds(self) -> int:
        return 300


def _as_protocol(r: StandIn) -> WatchingReflector:
    return r  # mypy checks here that the stand-in (and so the protocol) is complete


def pod(name: str, rv: str, **fields: Any) -> dict[str, Any]:
    return new_object(name, resource_version=rv, **fields)


def bookmark(rv: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    obj = new_object("", namespace="", resource_version=rv)
    if annotations is not None:
        obj["metadata"]["annotations"] = annotations
    return obj


def apply(r: StandIn, event_type: str, obj: Any) -> Applied:
    return apply_watch_event(_as_protocol(r), r.store, event_type, obj, r.set_last_sync_resource_version)


@pytest.mark.parametrize(
    ("event_type", "obj", "applied", "keys_after", "rvs"),
    [
        (EventType.ADDED, pod("b", "3"), Applied.STORED, ["default/a", "default/b"], ["3"]),
        (EventType.MODIFIED, pod("a", "4", spec={"x": 1}), Applied.STORED, ["default/a"], ["4"]),
        (EventType.DELETED, pod("a", "5"), Applied.STORED, [], ["5"]),
        (EventType.BOOKMARK, bookmark("6"), Applied.BOOKMARK, ["default/a"], ["6"]),
        (EventType.BOOKMARK, bookmark("7", {END: "true"}), Applied.INITIAL_EVENTS_END, ["default/a"], ["7"]),
        (EventType.BOOKMARK, bookmark("8", {END: "false"}), Applied.BOOKMARK, ["default/a"], ["8"]),
        # Upstream logs an unknown type and still counts it and moves the RV.
        ("WEIRD", pod("c", "9"), Applied.STORED, ["default/a"], ["9"]),
        # No metadata: not understood, skipped, the RV stays.
        (EventType.ADDED, {"kind": "Pod"}, Applied.SKIPPED, ["default/a"], []),
    ],
)
def test_each_event_type_reaches_the_store_as_upstream(
    event_type: str, obj: Any, applied: Applied, keys_after: list[str], rvs: list[str]
) -> None:
    r = StandIn()
    r.store.add(pod("a", "2"))
    assert apply(r, event_type, obj) is applied
    assert sorted(r.store.list_keys()) == keys_after
    assert r.resource_versions == rvs


def test_a_modified_event_replaces_the_stored_object() -> None:
    r = StandIn()
    r.store.add(pod("a", "2"))
    apply(r, EventType.MODIFIED, pod("a", "4", spec={"x": 1}))
    assert r.store.get_by_key("default/a")[0]["spec"] == {"x": 1}


@pytest.mark.parametrize("event_type", [EventType.ADDED, EventType.BOOKMARK])
def test_an_object_of_another_kind_is_skipped_bookmarks_included(event_type: str) -> None:
    r = StandIn(expected_gvk=("v1", "Pod"))
    other = new_object("a", resource_version="3", kind="ConfigMap")
    assert apply(r, event_type, other) is Applied.SKIPPED
    assert r.store.list_keys() == []
    assert r.resource_versions == []
    assert apply(r, EventType.ADDED, pod("a", "4")) is Applied.STORED


def test_the_transform_runs_on_objects_and_never_on_bookmarks() -> None:
    seen: list[str] = []

    def transform(obj: Any) -> Any:
        seen.append(obj["metadata"]["resourceVersion"])
        return {**obj, "transformed": True}

    r = StandIn(transform=transform)
    apply(r, EventType.ADDED, pod("a", "3"))
    apply(r, EventType.BOOKMARK, bookmark("4"))
    assert seen == ["3"]
    assert r.store.get_by_key("default/a")[0]["transformed"] is True


def test_a_store_that_refuses_the_object_is_logged_and_the_resource_version_still_moves(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def refuse(obj: Any) -> Any:
        raise ValueError("no")

    r = StandIn(transform=refuse)
    with caplog.at_level(logging.ERROR, logger="informers.reflector"):
        assert apply(r, EventType.ADDED, pod("a", "3")) is Applied.STORED
    assert "unable to apply watch event ADDED to store: no" in caplog.text
    assert r.store.list_keys() == []
    assert r.resource_versions == ["3"]


def test_an_index_function_that_fails_propagates() -> None:
    def broken(obj: Any) -> list[str]:
        raise KeyError("boom")

    r = StandIn(store=new_indexer(indexers={"broken": broken}))
    with pytest.raises(IndexFuncError):
        apply(r, EventType.ADDED, pod("a", "3"))
    assert r.resource_versions == []


def test_the_watch_counts_every_applied_event_and_leaves_the_last_resource_version() -> None:
    """handle_watch over the stand-in: the events that were applied, the RV of the last one."""
    r = StandIn(expected_gvk=("v1", "Pod"))
    w = FakeWatch()
    w.add(pod("a", "2"))
    w.action(EventType.ADDED, new_object("b", resource_version="3", kind="ConfigMap"))
    w.bookmark("4", kind="Pod")
    w.delete(pod("a", "5"))
    w.close()

    assert handle_watch(_as_protocol(r), r.clock.now(), w, threading.Event(), WatchCycle()) is None
    assert r.store.list_keys() == []
    assert r.resource_versions == ["2", "4", "5"]


def test_the_watch_list_collects_into_its_own_store_and_returns_the_end_bookmarks_rv() -> None:
    """The reflector's own store and RV are left alone until the whole initial state is in."""

    r = StandIn()
    temporary = new_store()
    w = FakeWatch()
    w.add(pod("a", "2"))
    w.add(pod("b", "3"))
    w.delete(pod("a", "4"))
    w.action(EventType.BOOKMARK, bookmark("5", {END: "true"}))
    assert handle_watch_list(_as_protocol(r), r.clock.now(), w, temporary, threading.Event()) == "5"
    assert temporary.list_keys() == ["default/b"]
    assert r.store.list_keys() == []
    assert r.resource_versions == []


def test_a_watch_list_initial_event_the_store_refuses_is_skipped_not_fatal() -> None:
    """As upstream: the temporary store's error is logged, the stream goes on to its bookmark."""

    def refuse_a(obj: Any) -> Any:
        if obj["metadata"]["name"] == "a":
            raise ValueError("no")
        return obj

    w = FakeWatch()
    w.add(pod("a", "2"))
    w.add(pod("b", "3"))
    w.action(EventType.BOOKMARK, bookmark("4", {END: "true"}))

    class LW(_UnusedLW):
        def watch(self, options: ListOptions) -> FakeWatch:
            return w

    r = StandIn(transform=refuse_a, lister_watcher=LW())
    assert watch_list(_as_protocol(r), threading.Event()) is w
    assert r.store.list_keys() == ["default/b"]
    assert r.resource_versions == ["4"]
    assert r.unavailable == [False]


_EVENTS = st.lists(
    st.tuples(
        st.sampled_from([EventType.ADDED, EventType.MODIFIED, EventType.DELETED, EventType.BOOKMARK]),
        st.sampled_from(["a", "b", "c"]),
    ),
    max_size=30,
)


@given(_EVENTS)
def test_the_watch_and_the_watch_list_leave_what_a_dict_of_the_last_states_holds(
    events: list[tuple[EventType, str]],
) -> None:
    """Reference model: adds and updates set the key, deletes drop it, bookmarks change nothing;
    the RV is the last event's. The watch's store and the watch-list's temporary store agree."""
    model: dict[str, str] = {}
    watch, listing = FakeWatch(), FakeWatch()
    for rv, (event_type, name) in enumerate(events, start=2):
        obj = bookmark(str(rv)) if event_type == EventType.BOOKMARK else pod(name, str(rv))
        watch.action(event_type, obj)
        if event_type != EventType.BOOKMARK:
            listing.action(event_type, obj)  # a watch-list has no bookmark before the end one
        if event_type in (EventType.ADDED, EventType.MODIFIED):
            model[f"default/{name}"] = str(rv)
        elif event_type == EventType.DELETED:
            model.pop(f"default/{name}", None)
    watch.close()
    end = str(len(events) + 2)
    listing.action(EventType.BOOKMARK, bookmark(end, {END: "true"}))

    r = StandIn()
    handle_watch(_as_protocol(r), r.clock.now(), watch, threading.Event(), WatchCycle())
    stored = {key: r.store.get_by_key(key)[0]["metadata"]["resourceVersion"] for key in r.store.list_keys()}
    assert stored == model
    assert r.resource_versions == [str(rv) for rv in range(2, len(events) + 2)]

    temporary = new_store()
    assert handle_watch_list(_as_protocol(StandIn()), 0.0, listing, temporary, threading.Event()) == end
    assert sorted(temporary.list_keys()) == sorted(model)
