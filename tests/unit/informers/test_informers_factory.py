"""SharedInformerFactory (client-go ``informers/factory.go``) and wait_for_cache_sync."""

from __future__ import annotations

import threading
import time

from informers_fakes import FakeClock, FakeListerWatcher, new_object

from informers import (
    NewInformerFunc,
    SharedIndexInformer,
    SharedInformerFactory,
    strip_managed_fields,
    wait_for_cache_sync,
)


def builder(lw: FakeListerWatcher, resyncs: list[float]) -> NewInformerFunc:
    def new_informer(resync: float) -> SharedIndexInformer:
        resyncs.append(resync)
        return SharedIndexInformer(lw, resync, clock=FakeClock(), name="jobs")

    return new_informer


def test_one_informer_per_key() -> None:
    factory = SharedInformerFactory(30.0)
    lw = FakeListerWatcher()
    resyncs: list[float] = []
    first = factory.informer_for("jobs", builder(lw, resyncs))
    again = factory.informer_for("jobs", builder(lw, resyncs))
    other = factory.informer_for("flows", builder(FakeListerWatcher(), resyncs))
    assert first is again
    assert other is not first
    assert resyncs == [30.0, 30.0]


def test_custom_resync_per_key() -> None:
    factory = SharedInformerFactory(30.0, custom_resync={"flows": 5.0})
    resyncs: list[float] = []
    factory.informer_for("flows", builder(FakeListerWatcher(), resyncs))
    assert resyncs == [5.0]


def test_the_factory_transform_is_installed_on_its_informers() -> None:
    source = new_object("job-1")
    source["metadata"]["managedFields"] = [{"manager": "x"}]
    factory = SharedInformerFactory(transform=strip_managed_fields)
    informer = factory.informer_for("jobs", builder(FakeListerWatcher([source]), []))
    stop = threading.Event()
    factory.start(stop)
    try:
        assert factory.wait_for_cache_sync(stop, timeout=5.0) == {"jobs": True}
        cached, _ = informer.get_store().get_by_key("default/job-1")
        assert "managedFields" not in cached["metadata"]
    finally:
        stop.set()
        factory.shutdown()


def test_start_runs_only_informers_not_yet_started_and_wait_covers_started_ones() -> None:
    factory = SharedInformerFactory()
    jobs = factory.informer_for("jobs", builder(FakeListerWatcher([new_object("a")]), []))
    stop = threading.Event()
    factory.start(stop)
    flows = factory.informer_for("flows", builder(FakeListerWatcher(), []))
    assert factory.wait_for_cache_sync(stop, timeout=5.0) == {"jobs": True}
    assert not flows.has_started()
    factory.start(stop)
    assert factory.wait_for_cache_sync(stop, timeout=5.0) == {"jobs": True, "flows": True}
    assert jobs.has_synced() and flows.has_synced()
    stop.set()
    factory.shutdown()
    assert jobs.is_stopped() and flows.is_stopped()


def test_nothing_starts_after_shutdown() -> None:
    factory = SharedInformerFactory()
    stop = threading.Event()
    stop.set()
    factory.shutdown()
    informer = factory.informer_for("jobs", builder(FakeListerWatcher(), []))
    factory.start(stop)
    assert not informer.has_started()


def test_wait_for_cache_sync_reports_unsynced_informers_on_timeout() -> None:
    lw = FakeListerWatcher()
    lw.fail_next_list(*[RuntimeError("down")] * 100)
    factory = SharedInformerFactory()
    factory.informer_for("jobs", builder(lw, []))
    stop = threading.Event()
    factory.start(stop)
    assert factory.wait_for_cache_sync(stop, timeout=0.05) == {"jobs": False}
    stop.set()
    factory.shutdown()


def test_wait_for_cache_sync_checks_immediately() -> None:
    started = time.monotonic()
    assert wait_for_cache_sync(threading.Event(), lambda: True, lambda: True)
    assert time.monotonic() - started < 0.05


def test_wait_for_cache_sync_polls_until_synced() -> None:
    answers = iter([False, False, True])
    assert wait_for_cache_sync(threading.Event(), lambda: next(answers), poll_period=0.001)


def test_wait_for_cache_sync_is_false_when_stopped() -> None:
    stop = threading.Event()
    threading.Timer(0.01, stop.set).start()
    assert not wait_for_cache_sync(stop, lambda: False)


def test_wait_for_cache_sync_is_false_after_the_timeout() -> None:
    assert not wait_for_cache_sync(threading.Event(), lambda: False, timeout=0.02, poll_period=0.005)
