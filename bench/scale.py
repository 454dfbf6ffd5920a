"""Scale: 300, 1,000 and 3,000 JobFlows (about 10,000 Jobs at 3,000) in flight against one controller.

Why: bench/e2e_flows.py measures 300 JobFlows; a cost that grows with the number in flight (a scan
of every JobFlow per sync, a cache that keeps what it should drop) only shows past it.

Each size is one run of bench/e2e_flows.py's ``run_once`` (a fresh control plane, the simulator as
a process, the controller as a process with ``--worker-threads=3`` and the fast client flags), its
workload two thirds three-step chains and one third four-step diamonds, created at once. Per size:
seconds until all Succeed, API writes and controller CPU per JobFlow, peak RSS, the reaction and
first-Job percentiles. Then the growth from the smallest to the largest size: per-JobFlow costs
must stay flat (within 20 %: ratios at most 1.2), and RSS must grow no faster than the objects the
controller caches (JobFlows + Jobs + templates): ``rss_over_objects`` = RSS ratio / objects ratio,
at most 1. One JSON document on stdout; ``--sizes`` picks others (a machine shared with other work
may need ``--time-scale``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import Any

_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))

from bench import e2e_flows  # noqa: E402
from bench._common import BenchError, Watchdog, emit, load_average, log, machine  # noqa: E402

SIZES = (300, 1000, 3000)
WORKERS = 3


def writes(run: dict[str, Any]) -> float:
    by_verb = run["api_requests_per_jobflow"]["by_verb"]
    return round(sum(v for k, v in by_verb.items() if k in ("POST", "PUT", "PATCH", "DELETE")), 2)


def figures(size: int, run: dict[str, Any]) -> dict[str, Any]:
    """What the issue asks of one size, from run_once's document."""
    latency = run["latency"]
    objects = run["jobflows"] + run["jobs"] + 4 * e2e_flows.NAMESPACES
    cpu_ms, idle_ms_per_s = run["controller"]["cpu_seconds_run"] * 1000.0, run["controller"]["idle_cpu_ms_per_s"]
    return {
        "jobflows": size,
        "jobs": run["jobs"],
        "objects_cached": objects,
        "seconds_until_all_succeed": run["seconds_until_all_succeed"],
        "create_jobflows_seconds": run["create_jobflows_seconds"],
        "writes_per_jobflow": writes(run),
        "requests_per_jobflow_by_verb_and_code": run["api_requests_per_jobflow"]["by_verb_and_code"],
        "cpu_ms_per_jobflow": round(run["controller"]["cpu_seconds_run"] / size * 1000.0, 2),
        # The run's CPU less what the controller spends per second with nothing to do, times the
        # run's length: the work's own cost, which a longer run (a slower simulator) does not inflate.
        "idle_cpu_ms_per_s": idle_ms_per_s,
        "work_cpu_ms_per_jobflow": round((cpu_ms - idle_ms_per_s * run["run_seconds"]) / size, 2),
        "peak_rss_mib": run["controller"]["peak_rss_mib"],
        "reaction_ms": latency["dependency_completed_to_dependent_added"],
        "first_job_ms": latency["jobflow_added_to_first_job_added"],
        "to_succeed_ms": latency["last_job_completed_to_jobflow_succeed"],
        "max_queue_depth": run["workqueue"]["max_depth_sampled"].get("jobflow"),
        "health": run["health"],
        "mean_sync_ms": run["workqueue"]["mean_sync_ms"].get("jobflow"),
        "queue_wait_p99_ms_at_most": run["workqueue"]["queue_wait_p99_ms_at_most"],
        "sync_p99_ms_at_most": run["workqueue"]["sync_p99_ms_at_most"],
        "kube_apiserver_cpu_s": run["cpu_seconds_run_other_processes"]["kube_apiserver"],
        "queue_adds_per_jobflow": run["workqueue"]["adds_per_jobflow"],
        **({"gc": run["controller"]["gc"]} if "gc" in run["controller"] else {}),
    }


def growth(sizes: list[dict[str, Any]]) -> dict[str, Any]:
    """Largest over smallest: per-JobFlow costs (flat is 1.0) and RSS against the objects cached."""
    first, last = sizes[0], sizes[-1]

    def ratio(key: str) -> float | None:
        return round(last[key] / first[key], 2) if first[key] else None

    rss, objects = last["peak_rss_mib"] / first["peak_rss_mib"], last["objects_cached"] / first["objects_cached"]
    marginal = [
        round((b["peak_rss_mib"] - a["peak_rss_mib"]) * 1024.0 / (b["objects_cached"] - a["objects_cached"]), 2)
        for a, b in itertools.pairwise(sizes)
    ]
    return {
        "from_to": [first["jobflows"], last["jobflows"]],
        "cpu_ms_per_jobflow": ratio("cpu_ms_per_jobflow"),
        "work_cpu_ms_per_jobflow": ratio("work_cpu_ms_per_jobflow"),
        "writes_per_jobflow": ratio("writes_per_jobflow"),
        "seconds_per_jobflow": round(
            (last["seconds_until_all_succeed"] / last["jobflows"])
            / (first["seconds_until_all_succeed"] / first["jobflows"]),
            2,
        ),
        "rss": round(rss, 2),
        "objects_cached": round(objects, 2),
        "rss_over_objects": round(rss / objects, 2),
        "marginal_kib_per_object_between_sizes": marginal,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="JobFlow counts (default %(default)s)")
    parser.add_argument("--time-scale", type=float, default=1.0, help="multiply the time limits")
    parser.add_argument("--gc-probe", action="store_true", help="the cyclic GC's passes and CPU at each size")
    parser.add_argument("--leader-elect", action="store_true", help="the controller holds a Lease; /livez judges it")
    args = parser.parse_args()
    e2e_flows.GC_PROBE = args.gc_probe
    e2e_flows.LEADER_ELECT = args.leader_elect
    sizes = [int(s) for s in args.sizes.split(",")]
    per_run = [e2e_flows.RUN_TIMEOUT * max(1.0, size / 300.0) * args.time_scale for size in sizes]
    watchdog = Watchdog(sum(per_run) + 300.0 * len(sizes), "bench/scale.py")
    result: dict[str, Any] = {"benchmark": "scale", **machine(), "worker_threads": WORKERS, "sizes": []}
    try:
        for size, timeout in zip(sizes, per_run, strict=True):
            e2e_flows.CHAINS, e2e_flows.DIAMONDS = size * 2 // 3, size - size * 2 // 3
            log(f"== {size} JobFlows ({e2e_flows.CHAINS} chains, {e2e_flows.DIAMONDS} diamonds)")
            run = e2e_flows.run_once(WORKERS, e2e_flows.FAST_CLIENT_FLAGS, watchdog, timeout)
            result["sizes"].append({**figures(size, run), "load_average_after": load_average()})
    except BenchError as err:
        log(f"ERROR: {err}")
        sys.exit(1)
    finally:
        watchdog.cancel()
    result["summary"] = {"all_succeeded": 1, "growth": growth(result["sizes"]) if len(sizes) > 1 else None}
    result["load_average_at_end"] = load_average()
    emit(result)


if __name__ == "__main__":
    main()
