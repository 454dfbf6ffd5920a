"""Work-queue benchmarks, after client-go's BenchmarkQueue and BenchmarkDelayingQueue_AddAfter.

Prints one JSON document on stdout:

* ``single_thread``: add+get+done cycles per second over 100 distinct keys on one thread (one op is
  one key added, got and done), without metrics and with the Prometheus provider;
* ``threads_4x4``: for 2 s, 4 producer threads keep adding the same 100 keys while 4 consumer
  threads get and done them; ``ops_per_s`` counts processed items (each one add+get+done) and
  ``adds_per_s`` every add call: adds of a key that is already queued collapse, so far fewer items
  are processed than added;
* ``delaying_add_after``: 10,000 ``add_after`` calls with random delays in [0, 10) s on a FakeClock,
  then one step past the longest delay and a full drain, each timed;
* ``peak_rss_mib``: the process's peak resident set size (``resource.getrusage``).

Runs in well under 30 s.
"""

from __future__ import annotations

import json
import platform
import random
import resource
import sys
import threading
import time
from pathlib import Path

# This script is named like the package it measures: run as ``python bench/workqueue.py`` its own
# directory comes first on sys.path and ``import workqueue`` would import this file. Drop it.
_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))

from prometheus_client import CollectorRegistry  # noqa: E402

from workqueue import DelayingQueue, FakeClock, PrometheusMetricsProvider, Queue  # noqa: E402

KEYS = [f"key-{i}" for i in range(100)]


def bench_single_thread(seconds: float, *, with_metrics: bool) -> float:
    """BenchmarkQueue: a fresh queue per round (untimed), then 100x add, get, done."""
    provider = PrometheusMetricsProvider(CollectorRegistry()) if with_metrics else None
    ops = 0
    elapsed = 0.0
    while elapsed < seconds:
        q: Queue[str] = Queue(name="bench" if with_metrics else "", metrics_provider=provider)
        start = time.perf_counter()
        for _ in range(20):
            for key in KEYS:
                q.add(key)
            for _ in KEYS:
                item, _ = q.get()
                q.done(item)
        elapsed += time.perf_counter() - start
        ops += 20 * len(KEYS)
        q.shut_down()
    return ops / elapsed


def bench_threads(seconds: float, producers: int = 4, consumers: int = 4) -> dict[str, float]:
    """Producers keep adding the 100 keys while consumers get and done them, for ``seconds``."""
    q: Queue[str] = Queue()
    stop = threading.Event()
    adds = [0] * producers
    processed = [0] * consumers

    def produce(slot: int) -> None:
        count = 0
        while not stop.is_set():
            for key in KEYS:
                q.add(key)
            count += len(KEYS)
        adds[slot] = count

    def consume(slot: int) -> None:
        count = 0
        while True:
            item, shutdown = q.get()
            if shutdown:
                break
            q.done(item)
            count += 1
        processed[slot] = count

    threads = [threading.Thread(target=consume, args=(i,)) for i in range(consumers)]
    threads += [threading.Thread(target=produce, args=(i,)) for i in range(producers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    q.shut_down()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    return {
        "producers": producers,
        "consumers": consumers,
        "keys": len(KEYS),
        "seconds": round(elapsed, 3),
        "ops_per_s": round(sum(processed) / elapsed),
        "adds_per_s": round(sum(adds) / elapsed),
    }


def bench_add_after(items: int = 10_000, max_delay: float = 10.0) -> dict[str, float]:
    rng = random.Random(1)
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    delays = [rng.uniform(0, max_delay) for _ in range(items)]

    start = time.perf_counter()
    for i, delay in enumerate(delays):
        q.add_after(str(i), delay)
    added = time.perf_counter()
    clock.step(max_delay + 1)
    drained = 0
    while drained < items:
        item, _ = q.get()
        q.done(item)
        drained += 1
    finished = time.perf_counter()
    q.shut_down()
    return {
        "items": items,
        "add_after_seconds": round(added - start, 4),
        "add_after_per_s": round(items / (added - start)),
        "step_and_drain_seconds": round(finished - added, 4),
        "total_seconds": round(finished - start, 4),
    }


def main() -> None:
    result = {
        "benchmark": "workqueue",
        "python": platform.python_version(),
        "single_thread": {
            "keys": len(KEYS),
            "ops_per_s": round(bench_single_thread(2.0, with_metrics=False)),
            "ops_per_s_with_prometheus_metrics": round(bench_single_thread(2.0, with_metrics=True)),
            "op": "add+get+done of one key",
        },
        "threads_4x4": bench_threads(2.0),
        "delaying_add_after": bench_add_after(),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
