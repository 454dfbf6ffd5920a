"""client-go's util/retry: RetryOnConflict retries 409 Conflicts only, a bounded number of times."""

from __future__ import annotations

import threading
import time

import pytest

from jobflow_controller.kube.conflict import DEFAULT_BACKOFF, DEFAULT_RETRY, Backoff, on_error, retry_on_conflict
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError, from_status

FAST = Backoff(steps=5, duration=0.001)


def _conflict() -> Exception:
    return from_status(409, "Conflict", "the object has been modified")


def test_default_retry_and_backoff_are_client_gos() -> None:
    assert (DEFAULT_RETRY.steps, DEFAULT_RETRY.duration, DEFAULT_RETRY.factor, DEFAULT_RETRY.jitter) == (
        5,
        0.010,
        1.0,
        0.1,
    )
    assert (DEFAULT_BACKOFF.steps, DEFAULT_BACKOFF.duration, DEFAULT_BACKOFF.factor) == (4, 0.010, 5.0)


def test_a_conflict_is_retried_until_the_call_succeeds() -> None:
    calls: list[int] = []

    def fn() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise _conflict()
        return "written"

    assert retry_on_conflict(FAST, fn) == "written"
    assert len(calls) == 3


def test_the_last_conflict_is_raised_as_itself_once_the_steps_are_used_up() -> None:
    calls: list[int] = []

    def fn() -> None:
        calls.append(1)
        raise _conflict()

    with pytest.raises(ConflictError):
        retry_on_conflict(FAST, fn)
    assert len(calls) == 5


def test_already_exists_and_other_errors_are_not_retried() -> None:
    for err in (from_status(409, "AlreadyExists", "taken"), RuntimeError("boom")):
        calls: list[int] = []

        def fn(e: Exception = err, seen: list[int] = calls) -> None:
            seen.append(1)
            raise e

        with pytest.raises(type(err)):
            retry_on_conflict(FAST, fn)
        assert len(calls) == 1
    assert isinstance(from_status(409, "AlreadyExists", "taken"), AlreadyExistsError)


def test_a_conflict_wrapped_in_another_error_is_retried() -> None:
    calls: list[int] = []

    def fn() -> None:
        calls.append(1)
        try:
            raise _conflict()
        except ConflictError as err:
            raise RuntimeError("sync failed") from err

    with pytest.raises(RuntimeError):
        retry_on_conflict(FAST, fn)
    assert len(calls) == 5


def test_the_sleeps_follow_the_backoff() -> None:
    backoff = Backoff(steps=4, duration=0.010, factor=5.0)
    assert [backoff.delay(n) for n in (1, 2, 3)] == pytest.approx([0.010, 0.050, 0.250])
    jittered = Backoff(steps=2, duration=1.0, jitter=0.1)
    assert all(1.0 <= jittered.delay(1) <= 1.1 for _ in range(100))


def test_stop_ends_the_waiting_at_once() -> None:
    stop = threading.Event()
    slow = Backoff(steps=3, duration=30.0)
    calls: list[int] = []

    def fn() -> None:
        calls.append(1)
        stop.set()
        raise _conflict()

    started = time.monotonic()
    with pytest.raises(ConflictError):
        on_error(slow, lambda e: isinstance(e, ConflictError), fn, stop=stop)
    assert time.monotonic() - started < 1.0
    assert len(calls) == 1


class _RecordingStop(threading.Event):
    """A stop that is never set and records each wait instead of sleeping."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(float(timeout or 0.0))
        return False


@pytest.mark.parametrize(("steps", "failures"), [(5, 10), (5, 2), (4, 3), (2, 5), (1, 5)])
def test_every_attempt_and_sleep_follows_the_backoff(steps: int, failures: int) -> None:
    backoff = Backoff(steps=steps, duration=0.010, factor=2.0)
    stop = _RecordingStop()
    calls: list[int] = []

    def fn() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise _conflict()
        return "done"

    attempts = min(steps, failures + 1)
    if failures >= steps:
        with pytest.raises(ConflictError):
            retry_on_conflict(backoff, fn, stop=stop)
    else:
        assert retry_on_conflict(backoff, fn, stop=stop) == "done"
    assert len(calls) == attempts
    assert stop.waits == pytest.approx([backoff.delay(n) for n in range(1, attempts)])


def test_a_call_that_succeeds_at_once_leaves_no_garbage_for_the_cyclic_collector() -> None:
    import gc
    import os

    import tenacity

    import jobflow_controller.kube.conflict as conflict

    places = (conflict.__file__, os.path.dirname(tenacity.__file__))

    def ours(obj: object) -> bool:
        """A frame, function or object of conflict.py's or tenacity's: what a cycle in the retry
        loop would leave. (Other threads of the process, e.g. a test's queue left running, make
        garbage of their own while the collector is off.)"""
        code = getattr(obj, "f_code", None) or getattr(obj, "__code__", None)
        if code is not None:
            return str(code.co_filename).startswith(places)
        return type(obj).__module__.startswith((conflict.__name__, "tenacity"))

    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(100):
            retry_on_conflict(DEFAULT_RETRY, lambda: 1)
        gc.collect()
        assert [o for o in gc.garbage if ours(o)] == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
