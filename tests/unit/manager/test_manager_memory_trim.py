"""The memory trimmer: glibc's malloc_trim now and then, never in the way of the process."""

from __future__ import annotations

import threading

import pytest

from jobflow_controller.manager import memory_trim
from jobflow_controller.manager.memory_trim import glibc_malloc_trim, run_memory_trim, start_memory_trim


def test_glibc_malloc_trim_is_found_and_returns_an_int() -> None:
    trim = glibc_malloc_trim()
    assert trim is not None  # this machine (and the image) runs glibc
    assert trim() in (0, 1)


def test_freed_heap_goes_back_to_the_kernel() -> None:
    def rss_kib() -> int:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))

    trim = glibc_malloc_trim()
    assert trim is not None
    # Chunks malloc'd by CPython (above its 512-byte small-object limit), every 50th one kept, so
    # the freed ones are holes glibc cannot give back by shrinking the heap's top.
    junk = [b"x" * (600 + i % 900) for i in range(100_000)]
    kept = junk[::50]
    before = rss_kib()
    del junk
    trim()
    assert rss_kib() < before - 40_000
    assert len(kept) == 2_000


def test_the_loop_trims_each_interval_until_stopped() -> None:
    stop = threading.Event()
    calls: list[int] = []

    def trim() -> int:
        calls.append(1)
        if len(calls) == 3:
            stop.set()
        return 1

    run_memory_trim(stop, trim, interval=0.001)
    assert len(calls) == 3


def test_a_trim_that_raises_ends_the_loop_without_raising() -> None:
    stop = threading.Event()
    calls: list[int] = []

    def trim() -> int:
        calls.append(1)
        raise OSError("no")

    run_memory_trim(stop, trim, interval=0.001)
    assert calls == [1]
    assert not stop.is_set()


def test_no_thread_where_the_c_library_cannot_trim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_trim, "glibc_malloc_trim", lambda: None)
    assert memory_trim.start_memory_trim(threading.Event()) is None


def test_the_thread_stops_with_the_process() -> None:
    stop = threading.Event()
    thread = start_memory_trim(stop, interval=0.01, trim=lambda: 1)
    assert thread is not None and thread.daemon
    stop.set()
    thread.join(timeout=2.0)
    assert not thread.is_alive()
