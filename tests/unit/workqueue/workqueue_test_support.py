"""Helpers shared by the workqueue tests: polling waits and a metrics provider that records."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

POLL_INTERVAL = 0.001
WAIT_TIMEOUT = 5.0
#: How long "nothing happens" is watched for. Short, because it is pure waiting.
QUIET_PERIOD = 0.03


def wait_for(predicate: Callable[[], bool], timeout: float = WAIT_TIMEOUT) -> None:
    """Poll ``predicate`` every millisecond (as client-go's delaying-queue tests do) until it holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(POLL_INTERVAL)


def stays(predicate: Callable[[], bool], period: float = QUIET_PERIOD) -> bool:
    """True if ``predicate`` holds at every poll during ``period``."""
    deadline = time.monotonic() + period
    while time.monotonic() < deadline:
        if not predicate():
            return False
        time.sleep(POLL_INTERVAL)
    return predicate()


def start_thread(target: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


class FakeGauge:
    def __init__(self) -> None:
        self.value = 0.0
        self.sets = 0
        self.notify = threading.Event()

    def inc(self) -> None:
        self.value += 1

    def dec(self) -> None:
        self.value -= 1

    def set(self, value: float, /) -> None:
        self.value = value
        self.sets += 1
        self.notify.set()


class FakeCounter:
    def __init__(self) -> None:
        self.value = 0.0

    def inc(self) -> None:
        self.value += 1


class FakeHistogram:
    def __init__(self) -> None:
        self.last: float | None = None
        self.count = 0

    def observe(self, value: float, /) -> None:
        self.last = value
        self.count += 1


class RecordingMetricsProvider:
    """Like client-go's testMetricsProvider: one metric of each kind, shared by every queue name."""

    def __init__(self) -> None:
        self.depth = FakeGauge()
        self.adds = FakeCounter()
        self.latency = FakeHistogram()
        self.duration = FakeHistogram()
        self.unfinished = FakeGauge()
        self.longest = FakeGauge()
        self.retries = FakeCounter()
        self.requested: list[tuple[str, str]] = []

    def new_depth_metric(self, name: str) -> FakeGauge:
        self.requested.append(("depth", name))
        return self.depth

    def new_adds_metric(self, name: str) -> FakeCounter:
        self.requested.append(("adds", name))
        return self.adds

    def new_latency_metric(self, name: str) -> FakeHistogram:
        self.requested.append(("latency", name))
        return self.latency

    def new_work_duration_metric(self, name: str) -> FakeHistogram:
        self.requested.append(("work_duration", name))
        return self.duration

    def new_unfinished_work_seconds_metric(self, name: str) -> FakeGauge:
        self.requested.append(("unfinished_work_seconds", name))
        return self.unfinished

    def new_longest_running_processor_seconds_metric(self, name: str) -> FakeGauge:
        self.requested.append(("longest_running_processor_seconds", name))
        return self.longest

    def new_retries_metric(self, name: str) -> FakeCounter:
        self.requested.append(("retries", name))
        return self.retries
