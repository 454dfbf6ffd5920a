"""Our informers against a real API server: order, an API server restart, and a compacted etcd.

These tests restart kube-apiserver, so they get a control plane of their own rather than the
session's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from e2e_helpers import wait_for

from informers import DeletedFinalStateUnknown, ListOptions, ListResult, ResourceEventHandlerFuncs, SharedIndexInformer
from informers.listwatch import Watch
from jobflow_controller.apis import job as vcjob
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.informers import default_transform
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import install_crds
from jobflow_controller.local.resources import NAMESPACES

NS = "informers"


@pytest.fixture(scope="module")
def own_plane() -> Iterator[ControlPlane]:
    plane = ControlPlane(controller_manager=False).start()
    try:
        install_crds(plane.kubeconfig_path)
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="module")
def own_clientset(own_plane: ControlPlane) -> Clientset:
    clientset = Clientset(RestClient(build_config(str(own_plane.kubeconfig_path)), qps=500, burst=1000))
    clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    return clientset


class GatedListerWatcher:
    """A real ListerWatcher whose watches can be cut off, like a network partition."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.open = threading.Event()
        self.open.set()
        self.watches: list[Watch] = []
        self.lists = 0

    def list(self, options: ListOptions) -> ListResult:
        if not self.open.is_set():
            raise ConnectionRefusedError("partitioned")
        self.lists += 1
        result: ListResult = self.inner.list(options)
        return result

    def watch(self, options: ListOptions) -> Watch:
        if not self.open.is_set():
            raise ConnectionRefusedError("partitioned")
        watch: Watch = self.inner.watch(options)
        self.watches.append(watch)
        return watch

    def cut(self) -> None:
        self.open.clear()
        for watch in self.watches:
            watch.stop()


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple[str, str, str]] = []  # (kind, name, phase)

    def handler(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(
            add_func=lambda obj, *_: self._add("add", obj),
            update_func=lambda old, new: self._add("update", new),
            delete_func=lambda obj: self._add("delete", obj),
        )

    def _add(self, kind: str, obj: Any) -> None:
        tombstone = isinstance(obj, DeletedFinalStateUnknown)
        inner = obj.obj if tombstone else obj
        phase = vcjob.phase(inner)
        with self.lock:
            self.events.append((kind + ("-tombstone" if tombstone else ""), inner["metadata"]["name"], phase))

    def of(self, kind: str) -> list[str]:
        with self.lock:
            return [name for k, name, _ in self.events if k == kind]


def _job(name: str) -> dict[str, Any]:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name}, "spec": {}}


def _start(lw: Any) -> tuple[SharedIndexInformer, Recorder, threading.Event]:
    informer = SharedIndexInformer(lw)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    stop = threading.Event()
    threading.Thread(target=informer.run, args=(stop,), daemon=True).start()
    wait_for(informer.has_synced, 30, what="the informer to sync")
    return informer, recorder, stop


def _cached(informer: SharedIndexInformer) -> list[str]:
    return sorted(o["metadata"]["name"] for o in informer.get_store().list())


def _live(clientset: Clientset) -> list[str]:
    return sorted(j["metadata"]["name"] for j in clientset.jobs(NS).list())


def test_adds_updates_and_deletes_reach_a_handler_in_order(own_clientset: Clientset) -> None:
    jobs = own_clientset.jobs(NS)
    _, recorder, stop = _start(jobs.lister_watcher(label_selector="test=order"))
    try:
        job = _job("ordered")
        job["metadata"]["labels"] = {"test": "order"}
        jobs.create(job)
        for phase in ("Pending", "Running", "Completed"):
            jobs.patch_status("ordered", {"status": {"state": {"phase": phase}}})
        jobs.delete("ordered")
        wait_for(lambda: recorder.of("delete") == ["ordered"], 30)
        with recorder.lock:
            seen = list(recorder.events)
        assert seen == [
            ("add", "ordered", ""),
            ("update", "ordered", "Pending"),
            ("update", "ordered", "Running"),
            ("update", "ordered", "Completed"),
            ("delete", "ordered", "Completed"),
        ]
    finally:
        stop.set()


def test_a_restarted_api_server_is_reconnected_and_the_cache_converges(
    own_plane: ControlPlane, own_clientset: Clientset
) -> None:
    jobs = own_clientset.jobs(NS)
    for name in ("r1", "r2"):
        jobs.create(_job(name))
    informer, recorder, stop = _start(jobs.lister_watcher())
    try:
        own_plane.restart_apiserver()
        jobs.create(_job("r3"))
        jobs.delete("r1")
        wait_for(lambda: _cached(informer) == _live(own_clientset), 60, what="the cache to converge")
        assert "r3" in _cached(informer)
        # The handler hears of the store's changes on its own thread, a moment later.
        wait_for(lambda: recorder.of("delete") + recorder.of("delete-tombstone") == ["r1"], 10, what="r1's delete")
        assert sorted(recorder.of("add")) == sorted(set(recorder.of("add")))  # no object added twice
    finally:
        stop.set()
        for name in _live(own_clientset):
            jobs.delete(name)


def test_a_delete_missed_during_compaction_arrives_as_a_tombstone_after_the_relist(
    own_plane: ControlPlane, own_clientset: Clientset
) -> None:
    jobs = own_clientset.jobs(NS)
    for name in ("c1", "c2"):
        jobs.create(_job(name))
    gated = GatedListerWatcher(jobs.lister_watcher())
    informer, recorder, stop = _start(gated)
    try:
        lists_before = gated.lists
        gated.cut()
        jobs.delete("c1")
        jobs.create(_job("c3"))
        own_plane.compact_etcd()
        # A fresh watch cache starts at the compacted revision: the informer's old resourceVersion
        # is now too old for both etcd and the cache, so its re-watch gets 410 Gone.
        own_plane.restart_apiserver()
        gated.open.set()
        wait_for(lambda: _cached(informer) == ["c2", "c3"], 60, what="the relist")
        assert gated.lists > lists_before
        wait_for(lambda: recorder.of("delete-tombstone") == ["c1"], 10, what="the tombstone")
        assert recorder.of("delete") == []
        assert sorted(recorder.of("add")) == ["c1", "c2", "c3"]
    finally:
        stop.set()
        for name in _live(own_clientset):
            jobs.delete(name)


class CountingListerWatcher(GatedListerWatcher):
    """A gated ListerWatcher that keeps the watch options and passes watch-list support through."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.watch_options: list[ListOptions] = []

    def is_watch_list_semantics_supported(self) -> bool:
        return bool(self.inner.is_watch_list_semantics_supported())

    def watch(self, options: ListOptions) -> Watch:
        self.watch_options.append(options)
        return super().watch(options)


def test_the_initial_state_streams_through_a_watch_list_and_the_watch_goes_on(own_clientset: Clientset) -> None:
    jobs = own_clientset.jobs(NS)
    for name in ("w1", "w2"):
        jobs.create(_job(name))
    counting = CountingListerWatcher(jobs.lister_watcher())
    informer = SharedIndexInformer(counting, transform=default_transform())
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    stop = threading.Event()
    threading.Thread(target=informer.run, args=(stop,), daemon=True).start()
    try:
        wait_for(informer.has_synced, 30, what="the informer to sync")
        assert _cached(informer) == _live(own_clientset) == ["w1", "w2"]
        assert counting.lists == 0
        assert counting.watch_options[0].send_initial_events is True
        assert all("managedFields" not in o["metadata"] for o in informer.get_store().list())
        jobs.create(_job("w3"))
        wait_for(lambda: _cached(informer) == ["w1", "w2", "w3"], 30, what="w3 from the same watch")
        assert len(counting.watch_options) == 1
        # The store is updated before the handler hears of it (its own dispatch thread): wait for it.
        wait_for(lambda: sorted(recorder.of("add")) == ["w1", "w2", "w3"], 10, what="the handler's add of w3")
    finally:
        stop.set()
        for name in _live(own_clientset):
            jobs.delete(name)
