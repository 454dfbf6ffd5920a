"""Reflector list/watch semantics, ported from client-go's ``tools/cache/reflector_test.go``."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest
from informers_fakes import FakeClock, FakeListerWatcher, FakeWatch, eventually, new_object, status_object

from informers import (
    ApiStatusError,
    BackoffManager,
    ExpiredError,
    ListOptions,
    ListResult,
    Reflector,
    TooManyRequestsError,
    new_store,
)
from informers.pager import ListCancelled, ListPager
from informers.store import Cache


def pod(name: str, rv: str) -> dict[str, Any]:
    return new_object(name, resource_version=rv)


class ScriptedLW:
    """A ListerWatcher answering from scripts; once a script runs out, lists are empty and watches
    block until stopped."""

    def __init__(
        self,
        lists: list[ListResult | BaseException | Callable[[ListOptions], ListResult]] | None = None,
        watches: list[FakeWatch | BaseException | Callable[[ListOptions], FakeWatch]] | None = None,
    ) -> None:
        self.lists = deque(lists or [])
        self.watches = deque(watches or [])
        self.list_calls: list[ListOptions] = []
        self.watch_calls: list[ListOptions] = []
        self.opened: list[FakeWatch] = []
        self._cond = threading.Condition()

    def list(self, options: ListOptions) -> ListResult:
        with self._cond:
            self.list_calls.append(options)
            self._cond.notify_all()
            step = self.lists.popleft() if self.lists else ListResult([], "1")
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            return step(options)
        return step

    def watch(self, options: ListOptions) -> FakeWatch:
        with self._cond:
            self.watch_calls.append(options)
            self._cond.notify_all()
            step = self.watches.popleft() if self.watches else FakeWatch()
        if isinstance(step, BaseException):
            raise step
        w = step(options) if callable(step) else step
        with self._cond:
            self.opened.append(w)
        return w

    def wait_for_watch_calls(self, n: int) -> bool:
        return eventually(lambda: len(self.watch_calls) >= n)


class RecordingBackoff(BackoffManager):
    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock, rand=lambda: 0.0)
        self.delays: list[float] = []

    def next_delay(self) -> float:
        delay = super().next_delay()
        self.delays.append(round(delay, 6))
        return delay


class Runner:
    """Runs a call in a thread and keeps what it returned or raised."""

    def __init__(self, target: Callable[..., Any], *args: Any) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(target, *args), daemon=True)
        self.thread.start()

    def _run(self, target: Callable[..., Any], *args: Any) -> None:
        try:
            self.result = target(*args)
        except BaseException as err:  # noqa: BLE001 - kept for the test to inspect
            self.error = err

    def join(self, timeout: float = 2.0) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "still running"

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()


def new_reflector(lw: Any, store: Any = None, **kwargs: Any) -> Reflector:
    kwargs.setdefault("clock", FakeClock())
    return Reflector(lw, store if store is not None else new_store(), name="test", **kwargs)


def rvs(calls: list[ListOptions]) -> list[str | None]:
    return [c.resource_version for c in calls]


# -- stopping ---------------------------------------------------------------------------------


def test_an_error_event_ends_list_and_watch_and_stops_the_watch() -> None:
    w = FakeWatch()
    w.error(pod("bar", "2"))  # not a Status: an unexpected object
    lw = ScriptedLW(watches=[w])
    new_reflector(lw).list_and_watch(threading.Event())
    assert w.stopped


def test_run_returns_once_stopped_and_stops_the_watch() -> None:
    lw = ScriptedLW()
    stop = threading.Event()
    runner = Runner(new_reflector(lw).run, stop)
    assert lw.wait_for_watch_calls(1)
    stop.set()
    runner.join()
    assert lw.opened[0].stopped


def test_a_stop_before_list_and_watch_makes_no_calls() -> None:
    lw = ScriptedLW()
    stop = threading.Event()
    stop.set()
    reflector = new_reflector(lw)
    reflector.list_and_watch(stop)
    reflector.run(stop)
    assert lw.list_calls == []
    assert lw.watch_calls == []


def test_a_stop_during_the_watch_stops_it_and_returns() -> None:
    lw = ScriptedLW()
    stop = threading.Event()
    runner = Runner(new_reflector(lw).list_and_watch, stop)
    assert lw.wait_for_watch_calls(1)
    stop.set()
    runner.join()
    assert runner.error is None
    assert lw.opened[0].stopped


def test_a_stop_interrupts_the_backoff_between_attempts() -> None:
    lw = ScriptedLW(lists=[RuntimeError("down")])
    clock = FakeClock()
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock).run, stop)
    assert clock.wait_for_waiters(1)
    stop.set()
    runner.join()
    assert len(lw.list_calls) == 1


# -- the watch ----------------------------------------------------------------------------------


def test_watch_events_update_the_store_and_other_kinds_are_skipped() -> None:
    w = FakeWatch()
    w.add(new_object("rejected", kind="Service", resource_version="1"))
    w.delete(pod("foo", "10"))
    w.modify(pod("bar", "55"))
    w.add(pod("baz", "32"))
    w.close()
    lw = ScriptedLW(lists=[ListResult([pod("foo", "1"), pod("bar", "2")], "2")], watches=[w])
    store = new_store()
    reflector = new_reflector(lw, store, expected_gvk=("v1", "Pod"))
    stop = threading.Event()
    runner = Runner(reflector.list_and_watch, stop)
    assert lw.wait_for_watch_calls(2)
    stop.set()
    runner.join()

    assert sorted(store.list_keys()) == ["default/bar", "default/baz"]
    assert store.get_by_key("default/bar")[0]["metadata"]["resourceVersion"] == "55"
    assert store.get_by_key("default/baz")[0]["metadata"]["resourceVersion"] == "32"
    # The last event's RV, not the largest one seen.
    assert reflector.last_sync_resource_version() == "32"
    assert lw.watch_calls[1].resource_version == "32"


def test_first_list_is_rv_zero_with_limit_500_and_the_watch_starts_at_the_list_rv() -> None:
    w = FakeWatch()
    for i, name in enumerate(["foo", "bar", "baz", "qux", "zoo"], start=2):
        w.add(pod(name, str(i)))
    lw = ScriptedLW(lists=[ListResult([], "1")], watches=[w])
    store = new_store()
    stop = threading.Event()
    runner = Runner(new_reflector(lw, store).list_and_watch, stop)
    assert eventually(lambda: len(store.list()) == 5)
    stop.set()
    runner.join()

    assert lw.list_calls == [ListOptions(resource_version="0", limit=500)]
    assert len(lw.watch_calls) == 1
    watch_options = lw.watch_calls[0]
    assert watch_options.resource_version == "1"
    assert watch_options.allow_watch_bookmarks is True
    assert watch_options.timeout_seconds is not None and 300 <= watch_options.timeout_seconds < 600
    assert {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in store.list()} == {
        "foo": "2",
        "bar": "3",
        "baz": "4",
        "qux": "5",
        "zoo": "6",
    }


def test_a_list_error_propagates_with_context() -> None:
    err = RuntimeError("list failed")
    lw = ScriptedLW(lists=[err])
    with pytest.raises(RuntimeError, match="list failed") as caught:
        new_reflector(lw).list_and_watch(threading.Event())
    assert caught.value is err
    assert caught.value.__notes__ == ["failed to list test"]
    assert lw.watch_calls == []


def test_a_non_retriable_error_opening_the_watch_propagates() -> None:
    err = RuntimeError("watch failed")
    lw = ScriptedLW(watches=[err])
    with pytest.raises(RuntimeError, match="watch failed"):
        new_reflector(lw).list_and_watch(threading.Event())
    assert len(lw.list_calls) == 1


def test_the_store_holds_the_previous_list_plus_events_before_each_relist() -> None:
    w1 = FakeWatch()
    w1.add(pod("b", "3"))
    w1.error(status_object(410, "Expired"))
    w2 = FakeWatch()
    w2.delete(pod("a", "5"))
    w2.error(status_object(410, "Expired"))
    snapshots: list[list[str]] = []
    store = new_store()

    def listing(items: list[dict[str, Any]], rv: str) -> Callable[[ListOptions], ListResult]:
        def respond(options: ListOptions) -> ListResult:
            snapshots.append(sorted(store.list_keys()))
            return ListResult(items, rv)

        return respond

    lw = ScriptedLW(
        lists=[listing([pod("a", "1")], "2"), listing([pod("a", "1"), pod("b", "3")], "4"), listing([], "6")],
        watches=[w1, w2],
    )
    reflector = new_reflector(lw, store)
    stop = threading.Event()
    reflector.list_and_watch(stop)
    reflector.list_and_watch(stop)
    runner = Runner(reflector.list_and_watch, stop)
    assert lw.wait_for_watch_calls(3)
    stop.set()
    runner.join()
    assert snapshots == [[], ["default/a", "default/b"], ["default/b"]]


def test_a_normal_close_rewatches_from_the_last_rv_without_relisting_or_delay() -> None:
    clock = FakeClock()

    def slow_watch(options: ListOptions) -> FakeWatch:
        w = FakeWatch()
        w.add(pod("foo", "5"))
        w.close()
        return w

    lw = ScriptedLW(lists=[ListResult([], "1")], watches=[slow_watch])
    backoff = RecordingBackoff(clock)
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock, backoff=backoff).list_and_watch, stop)
    assert lw.wait_for_watch_calls(2)
    stop.set()
    runner.join()
    assert rvs(lw.watch_calls) == ["1", "5"]
    assert len(lw.list_calls) == 1
    assert backoff.delays == []


def test_a_watch_closing_within_a_second_with_no_events_is_an_error() -> None:
    closed = FakeWatch()
    closed.close()
    lw = ScriptedLW(watches=[closed])
    new_reflector(lw).list_and_watch(threading.Event())  # returns: the run loop will relist
    assert len(lw.watch_calls) == 1


def test_an_empty_watch_lasting_a_second_is_a_normal_close() -> None:
    clock = FakeClock()

    def one_second_watch(options: ListOptions) -> FakeWatch:
        clock.step(1.0)
        w = FakeWatch()
        w.close()
        return w

    lw = ScriptedLW(watches=[one_second_watch])
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock).list_and_watch, stop)
    assert lw.wait_for_watch_calls(2)
    stop.set()
    runner.join()
    assert len(lw.list_calls) == 1


@pytest.mark.parametrize("how", ["error-event", "raised"])
def test_a_410_on_the_watch_ends_it_so_the_run_loop_relists_at_the_last_rv(how: str) -> None:
    w = FakeWatch()
    w.add(pod("foo", "7"))
    if how == "error-event":
        w.error(status_object(410, "Expired", "too old resource version: 7 (9)"))
    else:
        w.fail(ExpiredError("too old resource version: 7 (9)"))
    clock = FakeClock()
    backoff = RecordingBackoff(clock)
    lw = ScriptedLW(lists=[ListResult([], "1"), ListResult([], "9")], watches=[w])
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock, backoff=backoff).run, stop)
    assert clock.wait_for_waiters(1)  # one backoff step before the relist
    assert len(lw.list_calls) == 1
    clock.step(1.6)
    assert lw.wait_for_watch_calls(2)
    stop.set()
    runner.join()
    assert rvs(lw.list_calls) == ["0", "7"]
    assert lw.list_calls[1].limit is None
    assert backoff.delays == [0.8]
    assert w.stopped


def test_a_410_opening_the_watch_relists_at_the_last_rv_after_a_backoff_step() -> None:
    clock = FakeClock()
    backoff = RecordingBackoff(clock)
    lw = ScriptedLW(lists=[ListResult([], "5"), ListResult([], "6")], watches=[ExpiredError()])
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock, backoff=backoff).run, stop)
    assert clock.wait_for_waiters(1)
    clock.step(backoff.delays[-1])
    assert lw.wait_for_watch_calls(2)
    stop.set()
    runner.join()
    assert rvs(lw.list_calls) == ["0", "5"]
    assert rvs(lw.watch_calls) == ["5", "6"]


def test_a_bookmark_advances_the_resource_version_only() -> None:
    w = FakeWatch()
    w.bookmark("7")
    w.close()
    lw = ScriptedLW(lists=[ListResult([pod("foo", "1")], "1")], watches=[w])
    store = new_store()
    reflector = new_reflector(lw, store)
    stop = threading.Event()
    runner = Runner(reflector.list_and_watch, stop)
    assert lw.wait_for_watch_calls(2)
    stop.set()
    runner.join()
    assert reflector.last_sync_resource_version() == "7"
    assert store.list_keys() == ["default/foo"]
    assert rvs(lw.watch_calls) == ["1", "7"]


def test_watch_timeout_is_drawn_between_five_and_ten_minutes() -> None:
    def timeouts(rand: float, minimum: float | None = None) -> int | None:
        lw = ScriptedLW()
        stop = threading.Event()
        runner = Runner(new_reflector(lw, rand=lambda: rand, min_watch_timeout=minimum).list_and_watch, stop)
        assert lw.wait_for_watch_calls(1)
        stop.set()
        runner.join()
        return lw.watch_calls[0].timeout_seconds

    assert timeouts(0.0) == 300
    assert timeouts(0.999) == 599
    assert timeouts(0.0, minimum=1.0) == 300  # a minimum below 5 minutes is ignored
    assert timeouts(0.0, minimum=1800.0) == 1800
    assert timeouts(0.999, minimum=1800.0) == 3598


# -- retriable watch errors -------------------------------------------------------------------------


def test_connection_refused_backs_off_and_rewatches_without_relisting() -> None:
    clock = FakeClock()
    backoff = RecordingBackoff(clock)
    lw = ScriptedLW(watches=[ConnectionRefusedError("refused") for _ in range(5)])
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock, backoff=backoff).list_and_watch, stop)
    for _ in range(5):
        assert clock.wait_for_waiters(1)
        clock.step(backoff.delays[-1])
    assert lw.wait_for_watch_calls(6)
    stop.set()
    runner.join()
    assert runner.error is None
    assert len(lw.list_calls) == 1
    assert backoff.delays == [0.8, 1.6, 3.2, 6.4, 12.8]


def test_connection_refused_wrapped_by_the_transport_is_recognised() -> None:
    clock = FakeClock()
    try:
        raise OSError("Max retries exceeded") from ConnectionRefusedError("refused")
    except OSError as err:
        wrapped = err
    lw = ScriptedLW(watches=[wrapped])
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock).list_and_watch, stop)
    assert clock.wait_for_waiters(1)
    clock.step(2.0)
    assert lw.wait_for_watch_calls(2)
    stop.set()
    runner.join()
    assert len(lw.list_calls) == 1


def test_too_many_requests_opening_or_during_the_watch_backs_off_each_time() -> None:
    clock = FakeClock()
    backoff = RecordingBackoff(clock)
    in_stream = FakeWatch()
    in_stream.error(status_object(429, "TooManyRequests", "slow down"))
    lw = ScriptedLW(watches=[TooManyRequestsError(), in_stream])
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock, backoff=backoff).list_and_watch, stop)
    for _ in range(2):
        assert clock.wait_for_waiters(1)
        clock.step(60.0)
    assert lw.wait_for_watch_calls(3)
    stop.set()
    runner.join()
    assert runner.error is None
    assert len(backoff.delays) == 2
    assert len(lw.list_calls) == 1


def test_too_many_requests_never_relists() -> None:
    clock = FakeClock()
    lw = ScriptedLW(watches=[TooManyRequestsError() for _ in range(4)])
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock).list_and_watch, stop)
    for _ in range(4):
        assert clock.wait_for_waiters(1)
        clock.step(60.0)
    assert lw.wait_for_watch_calls(5)
    stop.set()
    runner.join()
    assert (len(lw.list_calls), len(lw.watch_calls)) == (1, 5)


# -- resync -----------------------------------------------------------------------------------


class ResyncCountingStore(Cache):
    def __init__(self, fail_on: int = 0) -> None:
        super().__init__()
        self.resyncs = 0
        self.fail_on = fail_on

    def resync(self) -> None:
        self.resyncs += 1
        if self.resyncs == self.fail_on:
            raise RuntimeError("resync failed")


def test_resync_runs_every_period_on_the_clock() -> None:
    clock = FakeClock()
    store = ResyncCountingStore()
    stop = threading.Event()
    runner = Runner(new_reflector(ScriptedLW(), store, clock=clock, resync_period=1.0).list_and_watch, stop)
    for expected in (1, 2):
        assert clock.wait_for_waiters(1)
        clock.step(1.0)
        assert eventually(lambda expected=expected: store.resyncs == expected)  # type: ignore[misc]
    stop.set()
    runner.join()


def test_resync_is_skipped_when_should_resync_says_no() -> None:
    clock = FakeClock()
    store = ResyncCountingStore()
    answers = deque([False, True])
    lw = ScriptedLW()
    stop = threading.Event()
    reflector = new_reflector(lw, store, clock=clock, resync_period=1.0, should_resync=answers.popleft)
    runner = Runner(reflector.list_and_watch, stop)
    for _ in range(2):
        assert clock.wait_for_waiters(1)
        clock.step(1.0)
    assert clock.wait_for_waiters(1)
    assert store.resyncs == 1
    stop.set()
    runner.join()


def test_a_resync_error_ends_the_watch_without_propagating() -> None:
    clock = FakeClock()
    store = ResyncCountingStore(fail_on=2)
    lw = ScriptedLW()
    stop = threading.Event()
    runner = Runner(new_reflector(lw, store, clock=clock, resync_period=1.0).list_and_watch, stop)
    for _ in range(2):
        assert clock.wait_for_waiters(1)
        clock.step(1.0)
    runner.join()
    assert runner.error is None
    assert store.resyncs == 2
    assert lw.opened[0].stopped


# -- listing: pagination and resourceVersion rules ----------------------------------------------------


def test_a_configured_page_size_pages_the_list() -> None:
    lw = FakeListerWatcher([pod(f"p{i}", "") for i in range(10)])
    store = new_store()
    stop = threading.Event()
    runner = Runner(new_reflector(lw, store, watch_list_page_size=4).list_and_watch, stop)
    assert lw.wait_for_watch_calls(1)
    stop.set()
    runner.join()
    assert [(c.resource_version, c.limit, c.continue_token is not None) for c in lw.list_calls] == [
        ("0", 4, False),
        ("", 4, True),
        ("", 4, True),
    ]
    assert len(store.list()) == 10


def test_a_relist_at_a_specific_rv_is_not_paginated() -> None:
    lw = FakeListerWatcher([pod(f"p{i}", "") for i in range(10)], expired_as_event=True)
    reflector = new_reflector(lw)
    stop = threading.Event()
    first = Runner(reflector.list_and_watch, stop)
    assert lw.wait_for_watch_calls(1)
    lw.expire_watches()
    first.join()
    second = Runner(reflector.list_and_watch, stop)
    assert lw.wait_for_watch_calls(2)
    stop.set()
    second.join()
    assert lw.list_calls == [ListOptions(resource_version="0", limit=500), ListOptions(resource_version="10")]


def _paged(rv: str, pages: int = 2) -> list[Callable[[ListOptions], ListResult]]:
    def page(i: int) -> Callable[[ListOptions], ListResult]:
        def respond(options: ListOptions) -> ListResult:
            token = f"c{i + 1}" if i + 1 < pages else None
            return ListResult([pod(f"p{i}", rv)], rv, token)

        return respond

    return [page(i) for i in range(pages)]


def _expired_watch() -> FakeWatch:
    w = FakeWatch()
    w.error(status_object(410, "Expired"))
    return w


def test_when_the_first_list_came_back_paginated_relists_stay_paginated() -> None:
    lw = ScriptedLW(lists=[*_paged("10"), *_paged("20")], watches=[_expired_watch()])
    reflector = new_reflector(lw)
    stop = threading.Event()
    reflector.list_and_watch(stop)
    runner = Runner(reflector.list_and_watch, stop)
    assert lw.wait_for_watch_calls(2)
    stop.set()
    runner.join()
    assert [(c.resource_version, c.limit, c.continue_token) for c in lw.list_calls] == [
        ("0", 500, None),
        ("", 500, "c1"),
        ("10", 500, None),
        ("", 500, "c1"),
    ]


def test_relists_ask_for_the_last_synced_rv() -> None:
    sizes: list[int] = []
    store = new_store()

    def listing(n: int, rv: str) -> Callable[[ListOptions], ListResult]:
        def respond(options: ListOptions) -> ListResult:
            sizes.append(len(store.list()))
            return ListResult([pod(f"p{i}", rv) for i in range(n)], rv)

        return respond

    lw = ScriptedLW(lists=[listing(4, "10"), listing(8, "11")], watches=[_expired_watch(), _expired_watch()])
    reflector = new_reflector(lw, store)
    stop = threading.Event()
    reflector.list_and_watch(stop)
    reflector.list_and_watch(stop)
    assert rvs(lw.list_calls) == ["0", "10"]
    assert sizes == [0, 4]
    assert len(store.list()) == 8


def test_an_expired_rv_on_relist_is_retried_at_once_with_rv_empty() -> None:
    lw = ScriptedLW(
        lists=[ListResult([pod("a", "10")], "10"), ExpiredError(), ListResult([pod("b", "12")], "12")],
        watches=[_expired_watch(), _expired_watch()],
    )
    reflector = new_reflector(lw)
    stop = threading.Event()
    reflector.list_and_watch(stop)
    reflector.list_and_watch(stop)
    assert rvs(lw.list_calls) == ["0", "10", ""]
    assert reflector.last_sync_resource_version() == "12"


def test_an_expired_continue_token_falls_back_to_one_full_list() -> None:
    lw = ScriptedLW(
        lists=[
            ListResult([pod(f"p{i}", "10") for i in range(4)], "10"),
            ListResult([pod(f"p{i}", "10") for i in range(4)], "10", "C1"),
            ExpiredError("The provided continue parameter is too old"),
            ListResult([pod(f"p{i}", "10") for i in range(10)], "10"),
        ],
        watches=[_expired_watch(), _expired_watch()],
    )
    store = new_store()
    reflector = new_reflector(lw, store, watch_list_page_size=4)
    stop = threading.Event()
    reflector.list_and_watch(stop)
    reflector.list_and_watch(stop)
    assert rvs(lw.list_calls) == ["0", "10", "", "10"]
    assert lw.list_calls[2].continue_token == "C1"
    assert lw.list_calls[3].limit is None and lw.list_calls[3].continue_token is None
    assert len(store.list()) == 10


@pytest.mark.parametrize(
    "too_large",
    [
        ApiStatusError(504, "Timeout", "too large", details={"causes": [{"reason": "ResourceVersionTooLarge"}]}),
        ApiStatusError(504, "Timeout", "timeout", details={"causes": [{"message": "Too large resource version"}]}),
        ApiStatusError(504, "Timeout", "Too large resource version: 20, current: 10"),
    ],
    ids=["cause-type", "cause-message", "message"],
)
def test_a_too_large_rv_on_relist_is_retried_at_once_with_rv_empty(too_large: ApiStatusError) -> None:
    lw = ScriptedLW(
        lists=[ListResult([], "20"), too_large, ListResult([], "30")],
        watches=[_expired_watch(), _expired_watch()],
    )
    reflector = new_reflector(lw)
    stop = threading.Event()
    reflector.list_and_watch(stop)
    reflector.list_and_watch(stop)
    assert rvs(lw.list_calls) == ["0", "20", ""]


def test_after_an_rv_empty_relist_succeeds_the_next_relist_uses_the_new_rv() -> None:
    lw = ScriptedLW(
        lists=[ListResult([], "20"), ExpiredError(), ListResult([], "30"), ListResult([], "40")],
        watches=[_expired_watch(), _expired_watch(), _expired_watch()],
    )
    reflector = new_reflector(lw)
    stop = threading.Event()
    for _ in range(3):
        reflector.list_and_watch(stop)
    assert rvs(lw.list_calls) == ["0", "20", "", "30"]


# -- the run loop ---------------------------------------------------------------------------------


def test_run_waits_one_growing_backoff_step_between_attempts() -> None:
    clock = FakeClock()
    backoff = RecordingBackoff(clock)
    lw = ScriptedLW(lists=[RuntimeError("down"), RuntimeError("down"), RuntimeError("down")])
    stop = threading.Event()
    runner = Runner(new_reflector(lw, clock=clock, backoff=backoff).run, stop)
    for attempt in (1, 2, 3):
        assert clock.wait_for_waiters(1)
        assert len(lw.list_calls) == attempt
        clock.step(backoff.delays[-1])
    assert lw.wait_for_watch_calls(1)
    stop.set()
    runner.join()
    assert backoff.delays == [0.8, 1.6, 3.2]


def test_list_failures_reach_the_watch_error_handler() -> None:
    clock = FakeClock()
    seen: list[str] = []
    lw = ScriptedLW(lists=[RuntimeError("Access Denied")])
    stop = threading.Event()
    reflector = new_reflector(lw, clock=clock, watch_error_handler=lambda r, err: seen.append(f"{r.name}: {err}"))
    runner = Runner(reflector.run, stop)
    assert eventually(lambda: seen == ["test: Access Denied"])
    stop.set()
    runner.join()


def test_a_stop_between_pages_sends_no_further_page_and_leaves_the_store_untouched() -> None:
    stop = threading.Event()
    store = new_store()

    def first_page(options: ListOptions) -> ListResult:
        # The process is asked to stop while the first page is on the wire.
        stop.set()
        return ListResult([pod("p0", "10")], "10", "c1")

    lw = ScriptedLW(lists=[first_page, *_paged("10")[1:]])
    new_reflector(lw, store).list_and_watch(stop)
    assert [c.continue_token for c in lw.list_calls] == [None]
    assert store.list() == []
    assert lw.opened == []


def test_the_pager_raises_list_cancelled_when_stopped_between_pages() -> None:
    stop = threading.Event()
    calls: list[ListOptions] = []

    def page(options: ListOptions) -> ListResult:
        calls.append(options)
        stop.set()
        return ListResult([pod(f"p{len(calls)}", "10")], "10", f"c{len(calls)}")

    with pytest.raises(ListCancelled):
        ListPager(page, 1).list(ListOptions(resource_version="0"), stop)
    assert len(calls) == 1
    # Without a stop event the same pager goes on to the end.
    pages = iter(_paged("10", pages=3))
    result, paginated = ListPager(lambda o: next(pages)(o), 1).list(ListOptions(resource_version="0"))
    assert (len(result.items), paginated) == (3, True)


# -- the transform --------------------------------------------------------------------------------


class CountingTransform:
    """Tags each object it is given and counts the calls by object name."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, obj: Any) -> Any:
        self.calls.append(obj["metadata"]["name"])
        return {**obj, "transformed": True}


def test_list_items_are_transformed_page_by_page_once_each() -> None:
    lw = FakeListerWatcher([pod(f"p{i}", "1") for i in range(5)])
    transform = CountingTransform()
    store = new_store()
    reflector = new_reflector(lw, store, transform=transform, watch_list_page_size=2)
    reflector._list(threading.Event())
    assert sorted(transform.calls) == ["p0", "p1", "p2", "p3", "p4"]
    assert all(o["transformed"] for o in store.list())


def test_list_pages_are_transformed_as_they_arrive() -> None:
    transform = CountingTransform()
    seen_before_page: list[list[str]] = []
    lw = FakeListerWatcher([pod(f"p{i}", "1") for i in range(4)])
    inner_list = lw.list

    def list_page(options: ListOptions) -> ListResult:
        seen_before_page.append(list(transform.calls))
        return inner_list(options)

    lw.list = list_page  # type: ignore[method-assign]
    new_reflector(lw, transform=transform, watch_list_page_size=2)._list(threading.Event())
    assert seen_before_page == [[], ["p0", "p1"]]


def test_watch_events_are_transformed_once_before_the_store() -> None:
    w = FakeWatch()
    lw = ScriptedLW(lists=[ListResult([], "1")], watches=[w])
    transform = CountingTransform()
    store = new_store()
    stop = threading.Event()
    runner = Runner(new_reflector(lw, store, transform=transform).list_and_watch, stop)
    w.add(pod("a", "2"))
    w.modify(pod("a", "3"))
    w.bookmark("4")
    assert eventually(lambda: store.list() and store.list()[0]["metadata"]["resourceVersion"] == "3")
    stop.set()
    runner.join()
    assert transform.calls == ["a", "a"]
    assert store.list()[0]["transformed"] is True


# -- watch-list -----------------------------------------------------------------------------------


class WatchListLW(ScriptedLW):
    def is_watch_list_semantics_supported(self) -> bool:
        return True


def initial_events(*objects: dict[str, Any], end_rv: str) -> FakeWatch:
    w = FakeWatch()
    for obj in objects:
        w.add(obj)
    w.action(
        "BOOKMARK",
        {"metadata": {"resourceVersion": end_rv, "annotations": {"k8s.io/initial-events-end": "true"}}},
    )
    return w


def test_watch_list_streams_the_initial_state_instead_of_listing() -> None:
    w = initial_events(pod("a", "2"), pod("b", "3"), end_rv="5")
    lw = WatchListLW(watches=[w])
    store = new_store()
    stop = threading.Event()
    reflector = new_reflector(lw, store)
    runner = Runner(reflector.list_and_watch, stop)
    assert eventually(lambda: reflector.last_sync_resource_version() == "5")
    assert sorted(o["metadata"]["name"] for o in store.list()) == ["a", "b"]
    assert lw.list_calls == []
    (options,) = lw.watch_calls
    assert options.send_initial_events is True
    assert options.resource_version == ""
    assert options.resource_version_match == "NotOlderThan"
    assert options.allow_watch_bookmarks is True
    stop.set()
    runner.join()


def test_the_watch_list_watch_goes_on_after_the_initial_events() -> None:
    w = initial_events(pod("a", "2"), end_rv="2")
    lw = WatchListLW(watches=[w])
    store = new_store()
    stop = threading.Event()
    reflector = new_reflector(lw, store)
    runner = Runner(reflector.list_and_watch, stop)
    assert eventually(lambda: reflector.last_sync_resource_version() == "2")
    w.add(pod("b", "3"))
    assert eventually(lambda: len(store.list()) == 2)
    assert reflector.last_sync_resource_version() == "3"
    assert len(lw.watch_calls) == 1  # the same watch
    stop.set()
    runner.join()
    assert w.stopped


def test_the_store_is_replaced_only_once_the_bookmark_arrives() -> None:
    w = FakeWatch()
    lw = WatchListLW(watches=[w])
    store = new_store()
    store.add(pod("old", "1"))
    stop = threading.Event()
    reflector = new_reflector(lw, store)
    runner = Runner(reflector.list_and_watch, stop)
    w.add(pod("a", "2"))
    assert lw.wait_for_watch_calls(1)
    assert [o["metadata"]["name"] for o in store.list()] == ["old"]
    w.action("BOOKMARK", {"metadata": {"resourceVersion": "3", "annotations": {"k8s.io/initial-events-end": "true"}}})
    assert eventually(lambda: [o["metadata"]["name"] for o in store.list()] == ["a"])
    stop.set()
    runner.join()


def test_initial_events_are_transformed_once_as_they_arrive() -> None:
    w = initial_events(pod("a", "2"), pod("b", "3"), end_rv="3")
    lw = WatchListLW(watches=[w])
    transform = CountingTransform()
    store = new_store()
    stop = threading.Event()
    reflector = new_reflector(lw, store, transform=transform)
    runner = Runner(reflector.list_and_watch, stop)
    assert eventually(lambda: reflector.last_sync_resource_version() == "3")
    stop.set()
    runner.join()
    assert transform.calls == ["a", "b"]
    assert all(o["transformed"] for o in store.list())


def test_a_listerwatcher_without_watch_list_support_is_listed() -> None:
    lw = ScriptedLW(lists=[ListResult([pod("a", "1")], "1")])
    reflector = new_reflector(lw)
    assert reflector.use_watch_list is False
    stop = threading.Event()
    runner = Runner(reflector.list_and_watch, stop)
    assert lw.wait_for_watch_calls(1)
    assert [c.resource_version for c in lw.list_calls] == ["0"]
    assert lw.watch_calls[0].send_initial_events is False
    stop.set()
    runner.join()


def test_watch_list_can_be_turned_off() -> None:
    lw = WatchListLW(lists=[ListResult([], "1")])
    stop = threading.Event()
    runner = Runner(new_reflector(lw, use_watch_list=False).list_and_watch, stop)
    assert lw.wait_for_watch_calls(1)
    assert len(lw.list_calls) == 1
    stop.set()
    runner.join()


def test_a_failed_watch_list_falls_back_to_list() -> None:
    lw = WatchListLW(lists=[ListResult([pod("a", "4")], "4")], watches=[ApiStatusError(400, "BadRequest", "no")])
    store = new_store()
    stop = threading.Event()
    reflector = new_reflector(lw, store)
    runner = Runner(reflector.list_and_watch, stop)
    assert lw.wait_for_watch_calls(2)
    assert len(lw.list_calls) == 1
    assert [o["metadata"]["name"] for o in store.list()] == ["a"]
    assert lw.watch_calls[1].send_initial_events is False  # the ordinary watch after the list
    stop.set()
    runner.join()


def test_an_expired_resource_version_retries_the_watch_list_at_the_newest() -> None:
    lw = WatchListLW(watches=[ExpiredError("too old"), initial_events(pod("a", "9"), end_rv="9")])
    reflector = new_reflector(lw)
    reflector.set_last_sync_resource_version("5")
    stop = threading.Event()
    runner = Runner(reflector.list_and_watch, stop)
    assert eventually(lambda: reflector.last_sync_resource_version() == "9")
    assert rvs(lw.watch_calls) == ["5", ""]
    assert lw.list_calls == []
    stop.set()
    runner.join()


def test_an_expired_error_event_retries_the_watch_list_at_the_newest() -> None:
    expired = FakeWatch()
    expired.error(status_object(410, "Expired", "too old"))
    lw = WatchListLW(watches=[expired, initial_events(end_rv="9")])
    reflector = new_reflector(lw)
    reflector.set_last_sync_resource_version("5")
    stop = threading.Event()
    runner = Runner(reflector.list_and_watch, stop)
    assert eventually(lambda: reflector.last_sync_resource_version() == "9")
    assert rvs(lw.watch_calls) == ["5", ""]
    assert expired.stopped
    stop.set()
    runner.join()


def test_a_refused_connection_backs_off_and_retries_the_watch_list() -> None:
    clock = FakeClock()
    backoff = RecordingBackoff(clock)
    lw = WatchListLW(watches=[ConnectionRefusedError("refused"), initial_events(end_rv="3")])
    reflector = new_reflector(lw, clock=clock, backoff=backoff)
    stop = threading.Event()
    runner = Runner(reflector.list_and_watch, stop)
    assert clock.wait_for_waiters(1)
    clock.step(60)
    assert eventually(lambda: reflector.last_sync_resource_version() == "3")
    assert len(backoff.delays) == 1
    assert lw.list_calls == []
    stop.set()
    runner.join()


def test_a_stream_that_ends_before_the_bookmark_is_asked_again() -> None:
    cut = FakeWatch()
    cut.add(pod("a", "2"))
    cut.close()
    lw = WatchListLW(watches=[cut, initial_events(pod("a", "2"), end_rv="2")])
    store = new_store()
    reflector = new_reflector(lw, store)
    stop = threading.Event()
    runner = Runner(reflector.list_and_watch, stop)
    assert eventually(lambda: reflector.last_sync_resource_version() == "2")
    assert len(lw.watch_calls) == 2
    assert [o["metadata"]["name"] for o in store.list()] == ["a"]
    stop.set()
    runner.join()


def test_a_stop_during_the_initial_events_leaves_the_store_alone() -> None:
    w = FakeWatch()
    w.add(pod("a", "2"))
    lw = WatchListLW(watches=[w])
    store = new_store()
    stop = threading.Event()
    runner = Runner(new_reflector(lw, store).list_and_watch, stop)
    assert lw.wait_for_watch_calls(1)
    stop.set()
    runner.join()
    assert runner.error is None
    assert store.list() == []
    assert w.stopped
    assert lw.list_calls == []


def test_an_informer_syncs_through_a_watch_list_against_the_fake_api() -> None:
    lw = FakeListerWatcher([pod("a", "1"), pod("b", "1")], watch_list=True)
    store = new_store()
    stop = threading.Event()
    reflector = new_reflector(lw, store)
    runner = Runner(reflector.list_and_watch, stop)
    assert eventually(lambda: len(store.list()) == 2)
    lw.add(pod("c", "1"))
    assert eventually(lambda: len(store.list()) == 3)
    assert lw.list_calls == []
    assert len(lw.watch_calls) == 1
    stop.set()
    runner.join()


def test_a_plain_bookmark_during_the_initial_events_falls_back_to_list() -> None:
    ignored = FakeWatch()
    ignored.add(pod("a", "2"))
    ignored.bookmark("3")  # a server that ignored sendInitialEvents: no end annotation
    lw = WatchListLW(lists=[ListResult([pod("a", "2")], "3")], watches=[ignored])
    store = new_store()
    reflector = new_reflector(lw, store)
    stop = threading.Event()
    runner = Runner(reflector.list_and_watch, stop)
    assert lw.wait_for_watch_calls(2)
    assert len(lw.list_calls) == 1
    assert ignored.stopped
    assert [o["metadata"]["name"] for o in store.list()] == ["a"]
    stop.set()
    runner.join()
