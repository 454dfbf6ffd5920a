"""Shard units fed from the replica's source informers (sharding/fanout.py): one LIST/WATCH and one
decode per replica, each unit seeing its shard only, and a takeover that lists nothing more."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "informers"))  # the shared fakes

from informers_fakes import FakeListerWatcher, eventually, new_object

from informers import ListOptions, SharedIndexInformer
from jobflow_controller.sharding import ShardFilter, shard_for_namespace
from jobflow_controller.sharding.fanout import LocalListerWatcher, SourceHub, SourceStoppedError

SHARDS = 3
#: Namespaces of known shards (pinned by test_sharding_hash): team-a is shard 1, team-b shard 2.
OURS, THEIRS = "team-a", "team-b"
MINE = ShardFilter(shard_for_namespace(OURS, SHARDS), SHARDS)
OTHER = ShardFilter(shard_for_namespace(THEIRS, SHARDS), SHARDS)


class Running:
    """Informers on threads, stopped at the end of the test."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    def run(self, informer: SharedIndexInformer) -> SharedIndexInformer:
        thread = threading.Thread(target=informer.run, args=(self.stop,), daemon=True)
        thread.start()
        self.threads.append(thread)
        return informer


@pytest.fixture
def running() -> Iterator[Running]:
    made = Running()
    yield made
    made.stop.set()
    for thread in made.threads:
        thread.join(5.0)


def keys(informer: SharedIndexInformer) -> list[str]:
    return sorted(informer.get_store().list_keys())


def test_units_see_only_their_shard_and_the_api_is_listed_and_watched_once(running: Running) -> None:
    api = FakeListerWatcher([new_object("a", OURS), new_object("b", THEIRS)])
    hub = SourceHub(running.run(SharedIndexInformer(api, 0.0)))
    mine = running.run(SharedIndexInformer(LocalListerWatcher([hub], MINE.owns, running.stop), 0.0))
    other = running.run(SharedIndexInformer(LocalListerWatcher([hub], OTHER.owns, running.stop), 0.0))
    assert eventually(lambda: mine.has_synced() and other.has_synced())
    assert keys(mine) == [f"{OURS}/a"] and keys(other) == [f"{THEIRS}/b"]
    api.add(new_object("c", OURS))
    api.add(new_object("d", THEIRS))
    assert eventually(lambda: keys(mine) == [f"{OURS}/a", f"{OURS}/c"])
    assert eventually(lambda: keys(other) == [f"{THEIRS}/b", f"{THEIRS}/d"])
    assert len(api.list_calls) == 1 and len(api.watch_calls) == 1


def test_a_unit_caches_the_source_caches_very_objects(running: Running) -> None:
    api = FakeListerWatcher([new_object("a", OURS)])
    source = running.run(SharedIndexInformer(api, 0.0))
    hub = SourceHub(source)
    mine = running.run(SharedIndexInformer(LocalListerWatcher([hub], MINE.owns, running.stop), 0.0))
    assert eventually(mine.has_synced)
    assert mine.get_store().get_by_key(f"{OURS}/a")[0] is source.get_store().get_by_key(f"{OURS}/a")[0]


def test_updates_and_deletes_reach_the_unit_in_order(running: Running) -> None:
    api = FakeListerWatcher([new_object("a", OURS, phase="Pending")])
    hub = SourceHub(running.run(SharedIndexInformer(api, 0.0)))
    mine = running.run(SharedIndexInformer(LocalListerWatcher([hub], MINE.owns, running.stop), 0.0))
    assert eventually(mine.has_synced)
    api.modify(new_object("a", OURS, phase="Running"))
    assert eventually(lambda: mine.get_store().get_by_key(f"{OURS}/a")[0]["phase"] == "Running")
    api.delete(new_object("a", OURS))
    assert eventually(lambda: keys(mine) == [])


def test_a_unit_started_later_lists_the_cache_not_the_api(running: Running) -> None:
    api = FakeListerWatcher([new_object(f"f{i}", ns) for i in range(5) for ns in (OURS, THEIRS)])
    hub = SourceHub(running.run(SharedIndexInformer(api, 0.0)))
    assert eventually(hub.informer.has_synced)
    late = running.run(SharedIndexInformer(LocalListerWatcher([hub], MINE.owns, running.stop), 0.0))
    assert eventually(late.has_synced)
    assert keys(late) == sorted(f"{OURS}/f{i}" for i in range(5))
    assert len(api.list_calls) == 1


def test_a_view_waits_for_the_source_to_sync_before_it_lists() -> None:
    api = FakeListerWatcher([new_object("a", OURS)])
    hub = SourceHub(SharedIndexInformer(api, 0.0))  # never started: never synced
    stop = threading.Event()
    view = LocalListerWatcher([hub], MINE.owns, stop)
    stop.set()
    with pytest.raises(SourceStoppedError):
        view.list(ListOptions())


def test_a_closed_view_is_no_longer_routed_to(running: Running) -> None:
    api = FakeListerWatcher([new_object("a", OURS)])
    hub = SourceHub(running.run(SharedIndexInformer(api, 0.0)))
    assert eventually(hub.informer.has_synced)
    view = LocalListerWatcher([hub], MINE.owns, running.stop)
    view.list(ListOptions())
    assert hub.subscribers() == 1
    view.close()
    assert hub.subscribers() == 0


def test_a_relist_replaces_the_subscription(running: Running) -> None:
    api = FakeListerWatcher([new_object("a", OURS)])
    hub = SourceHub(running.run(SharedIndexInformer(api, 0.0)))
    assert eventually(hub.informer.has_synced)
    view = LocalListerWatcher([hub], MINE.owns, running.stop)
    view.list(ListOptions())
    view.list(ListOptions())
    assert hub.subscribers() == 1


def test_a_change_already_in_the_snapshot_is_not_delivered_again() -> None:
    api = FakeListerWatcher([new_object("a", OURS)])
    informer = SharedIndexInformer(api, 0.0)
    hub = SourceHub(informer)
    stop = threading.Event()
    thread = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert eventually(informer.has_synced)
        view = LocalListerWatcher([hub], MINE.owns, stop)
        listed = view.list(ListOptions())
        assert [o["metadata"]["name"] for o in listed.items] == ["a"]
        assert view.event_for(f"{OURS}/a") is None  # same resourceVersion as listed
        api.modify(new_object("a", OURS, phase="Running"))
        assert eventually(lambda: informer.get_store().get_by_key(f"{OURS}/a")[0].get("phase") == "Running")
        event = view.event_for(f"{OURS}/a")
        assert event is not None and event.type == "MODIFIED"
        assert view.event_for(f"{OURS}/a") is None
        api.delete(new_object("a", OURS))
        assert eventually(lambda: informer.get_store().get_by_key(f"{OURS}/a")[1] is False)
        deleted = view.event_for(f"{OURS}/a")
        assert deleted is not None and deleted.type == "DELETED"
        assert view.event_for(f"{OURS}/unknown") is None
    finally:
        stop.set()
        thread.join(5.0)


def test_two_sources_make_one_stream_and_an_object_moving_between_them_stays(running: Running) -> None:
    labelled = FakeListerWatcher([new_object("a", OURS)])
    rest = FakeListerWatcher([new_object("b", OURS)])
    first = SourceHub(running.run(SharedIndexInformer(labelled, 0.0)))
    second = SourceHub(running.run(SharedIndexInformer(rest, 0.0)))
    mine = running.run(SharedIndexInformer(LocalListerWatcher([first, second], MINE.owns, running.stop), 0.0))
    assert eventually(mine.has_synced)
    assert keys(mine) == [f"{OURS}/a", f"{OURS}/b"]
    labelled.add(new_object("b", OURS, moved="yes"))  # b gained the label: now in both for a moment
    rest.delete(new_object("b", OURS))
    assert eventually(lambda: mine.get_store().get_by_key(f"{OURS}/b")[0].get("moved") == "yes")
    assert keys(mine) == [f"{OURS}/a", f"{OURS}/b"]
