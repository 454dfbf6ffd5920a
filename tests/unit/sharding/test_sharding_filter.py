"""The shard filter: a shard's informers see only its namespaces' objects, and every BOOKMARK/ERROR."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "informers"))  # the shared fakes

from informers_fakes import FakeListerWatcher, eventually, new_object

from informers import ListOptions, ListResult, SharedIndexInformer, WatchEvent
from jobflow_controller.sharding import ShardFilter, ShardListerWatcher, shard_for_namespace

SHARDS = 3
#: Namespaces of known shards (pinned by test_sharding_hash): team-a is shard 1, team-b shard 2.
OURS, THEIRS = "team-a", "team-b"
SHARD = ShardFilter(shard_for_namespace(OURS, SHARDS), SHARDS)


class _Page:
    """A ListerWatcher returning one fixed page and one fixed list of watch events."""

    def __init__(self, result: ListResult, events: list[WatchEvent]) -> None:
        self.result = result
        self.events = events
        self.stopped = False

    def list(self, options: ListOptions) -> ListResult:
        return self.result

    def watch(self, options: ListOptions) -> Any:
        page = self

        class _Watch:
            def __iter__(self) -> Any:
                return iter(page.events)

            def stop(self) -> None:
                page.stopped = True

        return _Watch()


def test_filter_owns_exactly_the_namespaces_its_shard_hashes_to() -> None:
    assert SHARD.owns(new_object("x", OURS))
    assert not SHARD.owns(new_object("x", THEIRS))


def test_shard_outside_the_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"not one of 0\.\.2"):
        ShardFilter(3, 3)


def test_list_drops_other_shards_items_and_keeps_resource_version_and_continue_token() -> None:
    inner = _Page(ListResult([new_object("a", OURS), new_object("b", THEIRS)], "42", "next"), [])
    result = ShardListerWatcher(inner, SHARD).list(ListOptions(limit=2))
    assert [item["metadata"]["name"] for item in result.items] == ["a"]
    assert (result.resource_version, result.continue_token) == ("42", "next")


def test_watch_drops_other_shards_events_and_passes_bookmarks_and_errors() -> None:
    events = [
        WatchEvent("ADDED", new_object("a", OURS)),
        WatchEvent("MODIFIED", new_object("b", THEIRS)),
        WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": "7"}}),
        WatchEvent("DELETED", new_object("c", THEIRS)),
        WatchEvent("ERROR", {"kind": "Status", "code": 410}),
    ]
    watch = ShardListerWatcher(_Page(ListResult([], "1"), events), SHARD).watch(ListOptions())
    assert [e.type for e in watch] == ["ADDED", "BOOKMARK", "ERROR"]


def test_stopping_the_filtered_watch_stops_the_inner_one() -> None:
    inner = _Page(ListResult([], "1"), [])
    ShardListerWatcher(inner, SHARD).watch(ListOptions()).stop()
    assert inner.stopped


def test_informer_over_the_filter_caches_only_its_shard_from_the_list_and_the_watch() -> None:
    import threading

    source = FakeListerWatcher([new_object("a", OURS), new_object("b", THEIRS)])
    informer = SharedIndexInformer(ShardListerWatcher(source, SHARD), 0.0)
    stop = threading.Event()
    thread = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    thread.start()
    try:
        eventually(informer.has_synced)
        source.add(new_object("c", OURS))
        source.add(new_object("d", THEIRS))
        eventually(lambda: sorted(informer.get_store().list_keys()) == [f"{OURS}/a", f"{OURS}/c"])
        assert sorted(informer.get_store().list_keys()) == [f"{OURS}/a", f"{OURS}/c"]
    finally:
        stop.set()
        thread.join(5.0)


def test_the_filter_offers_watch_list_exactly_when_the_wrapped_lister_watcher_does() -> None:
    assert ShardListerWatcher(FakeListerWatcher([], watch_list=True), SHARD).is_watch_list_semantics_supported()
    assert not ShardListerWatcher(FakeListerWatcher([]), SHARD).is_watch_list_semantics_supported()


def test_an_informer_syncs_its_shard_over_a_filtered_watch_list_stream_without_a_list() -> None:
    import threading

    source = FakeListerWatcher([new_object("a", OURS), new_object("b", THEIRS)], watch_list=True)
    informer = SharedIndexInformer(ShardListerWatcher(source, SHARD), 0.0)
    stop = threading.Event()
    thread = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    thread.start()
    try:
        eventually(informer.has_synced)
        assert sorted(informer.get_store().list_keys()) == [f"{OURS}/a"]
        assert source.list_calls == []
    finally:
        stop.set()
        thread.join(5.0)
