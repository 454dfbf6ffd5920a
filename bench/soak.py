"""Soak: JobFlows created at a steady rate for ``--minutes`` (default 10) against one controller.

Why: the other benchmarks run one burst for seconds; a leak in a per-JobFlow memory, a JobFlow left
behind by a restart, or RSS that creeps only shows over time and churn.

A fresh control plane (etcd, kube-apiserver, and kube-controller-manager, whose garbage collector
deletes the Jobs of a JobFlow deleted with `jobRetainPolicy: delete` and orphans the others), the
Volcano job simulator as a process (``bench/e2e_flows.py --simulator``) and the controller as a
process as the Deployment runs it (``--worker-threads=3``, the default client QPS, the Deployment's
``MALLOC_ARENA_MAX=2``; ``--default-malloc`` leaves that out). Every JobFlow has
``ttlSecondsAfterFinished`` (``TTL``), so the controller deletes the finished ones and every
JobFlow is gone in the end; half have ``jobRetainPolicy: delete``, and this process deletes the
Jobs the other half leave behind once their JobFlow is gone (as Volcano's Job TTL would), so the
caches hold only what is in flight. The kinds, in turn (``KINDS``): a three-step chain that
Succeeds, a chain whose second step Fails (the JobFlow Fails), a step that fails once and Succeeds
on its retry, and a chain of a slow step deleted by this process while its Job runs.

Along the way kube-apiserver is restarted once and the controller killed once (SIGKILL, started
again at once), both within the first 10 minutes (so minute 10 to the end is one process).

Every ``--row-minutes`` (default 5) one row: the controller's RSS (VmRSS) and CPU seconds (over all
its processes), the jobflow queue's depth, JobFlows stuck (not Succeed or Failed 60 s after their
last Job ended, deleted ones aside: must be 0), and ``jobflow_controller_memory_objects`` by
memory. After the last row creation stops and, once every JobFlow is gone, each memory must be
back at its baseline (read before the first create). One JSON document on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import sys
import tempfile
import time
import tracemalloc
import urllib.request
from pathlib import Path
from typing import Any

_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from bench._common import (  # noqa: E402
    BenchError,
    Watchdog,
    control_plane,
    cpu_seconds,
    create_namespace,
    emit,
    load_average,
    log,
    machine,
    proc_status_kib,
    rest_client,
    simulator_process,
)
from bench._memory import take_snapshot  # noqa: E402
from bench._soak_observer import Observer  # noqa: E402
from bench.chaos import Controller  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from tests.e2e.jobflows import chain, failing_template, flow, template  # noqa: E402

NAMESPACES = 4
TTL = 20
STUCK_AFTER = 60.0
DELETE_RUNNING_AFTER = 6.0
OK = "Pending:1s,Running:3s,Completed"
SLOW = "Pending:1s,Running:30s,Completed"
KINDS = ("ok", "fails", "retries", "deleted")
CONTROLLER_FLAGS = ["--leader-elect=false", "--worker-threads=3"]
#: The Deployment's environment (manifests/deployment.yaml): the soak measures the controller as deployed.
POD_ENVIRONMENT = {"MALLOC_ARENA_MAX": "2"}


# -- the workload ----------------------------------------------------------------------------------


def seed(clientset: Clientset, namespaces: list[str]) -> None:
    """Templates a, b, c (Succeed), f (Fails), r (fails once, Succeeds on its retry), s (slow)."""
    for ns in namespaces:
        create_namespace(clientset, ns)
        for name in "abc":
            clientset.job_templates(ns).create(template(name, ns, OK))
        clientset.job_templates(ns).create(failing_template("f", ns))
        clientset.job_templates(ns).create(failing_template("r", ns, then=OK))
        clientset.job_templates(ns).create(template("s", ns, SLOW))


def job_flow(index: int, namespaces: list[str]) -> tuple[str, dict[str, Any]]:
    """The index-th JobFlow: its kind (KINDS in turn) and its body."""
    kind = KINDS[index % len(KINDS)]
    ns = namespaces[index % len(namespaces)]
    steps = {
        "ok": chain("a", "b", "c"),
        "fails": chain("a", "f", "c"),
        "retries": [
            {"name": "r", "retry": {"maxRetries": 2, "backoff": "1s"}},
            {"name": "b", "dependsOn": {"targets": ["r"]}},
        ],
        "deleted": chain("s", "b"),
    }[kind]
    retain = "delete" if (index // len(KINDS)) % 2 else "retain"
    body = flow(f"soak-{index:05d}-{kind}", ns, steps, retain=retain)
    body["spec"]["ttlSecondsAfterFinished"] = TTL
    return kind, body


# -- the controller's figures ----------------------------------------------------------------------


def gauges(port: int) -> dict[str, Any]:
    """The memory gauges by memory, and the jobflow queue's depth."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    memory: dict[str, int] = {}
    depth = None
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "jobflow_controller_memory_objects":
                memory[sample.labels["memory"]] = int(sample.value)
            elif sample.name == "workqueue_depth" and sample.labels.get("name") == "jobflow":
                depth = int(sample.value)
    return {"memory_objects": memory, "queue_depth": depth}


class CpuMeter:
    """The controller's CPU seconds summed over every process it was (a killed one's last reading)."""

    def __init__(self) -> None:
        self.folded = 0.0
        self.last = 0.0

    def read(self, pid: int) -> float:
        with contextlib.suppress(OSError):
            self.last = cpu_seconds(pid)
        return self.folded + self.last

    def fold(self) -> None:
        self.folded += self.last
        self.last = 0.0


# -- heap snapshots (--tracemalloc) ---------------------------------------------------------------

#: Frames kept per traced allocation: the allocating line only (more frames cost more memory).
TRACEMALLOC_FRAMES = 1


def controller_environment(args: argparse.Namespace, snapshot_dir: Path) -> dict[str, str]:
    environment = {} if args.default_malloc else dict(POD_ENVIRONMENT)
    environment.update(item.split("=", 1) for item in args.env)
    if args.tracemalloc:
        environment["PYTHONTRACEMALLOC"] = str(TRACEMALLOC_FRAMES)
        environment["JOBFLOW_CONTROLLER_HEAP_SNAPSHOT_DIR"] = str(snapshot_dir)
    return environment


def wait_snapshot(pid: int, directory: Path) -> Path:
    path = take_snapshot(pid, directory)
    if path is None:
        raise BenchError(f"the controller wrote no heap snapshot in {directory} within 120 s of SIGUSR2")
    log(f"  heap snapshot {path}")
    return path


def compare_snapshots(snapshots: list[tuple[float, Path]], top: int = 15) -> dict[str, Any]:
    """Traced totals per snapshot, and what grew between consecutive ones, by file and by line."""
    loaded = [(minute, tracemalloc.Snapshot.load(str(path))) for minute, path in snapshots]
    result: dict[str, Any] = {
        "files": [str(path) for _, path in snapshots],
        "traced_mib": {
            str(minute): round(sum(stat.size for stat in snap.statistics("filename")) / 2**20, 2)
            for minute, snap in loaded
        },
        "growth": [],
    }
    for (m0, s0), (m1, s1) in itertools.pairwise(loaded):
        step: dict[str, Any] = {"from_minute": m0, "to_minute": m1}
        for key in ("filename", "lineno"):
            diffs = sorted(s1.compare_to(s0, key), key=lambda d: -abs(d.size_diff))[:top]
            step[f"by_{key}"] = [
                {"where": str(d.traceback), "kib": round(d.size_diff / 1024, 1), "blocks": d.count_diff} for d in diffs
            ]
        result["growth"].append(step)
    return result


# -- the run ---------------------------------------------------------------------------------------


class Soak:
    def __init__(self, args: argparse.Namespace, plane: Any, watchdog: Watchdog) -> None:
        self.args, self.plane = args, plane
        self.namespaces = [f"soak-{i}" for i in range(NAMESPACES)]
        self.rest = rest_client(plane.kubeconfig_path, agent="bench-soak")
        self.clientset = Clientset(self.rest)
        seed(self.clientset, self.namespaces)
        self.simulator = simulator_process(plane, self.namespaces)
        self.snapshot_minutes = sorted(float(m) for m in args.tracemalloc.split(",")) if args.tracemalloc else []
        self.snapshot_dir = Path(args.snapshot_dir or tempfile.mkdtemp(prefix="soak-heap-"))
        self.snapshots: list[tuple[float, Path]] = []
        self.controller = Controller(
            str(plane.kubeconfig_path),
            plane.root / "controller.log",
            CONTROLLER_FLAGS,
            environment=controller_environment(args, self.snapshot_dir),
        )
        watchdog.on_timeout(self.controller.stop)
        watchdog.on_timeout(self.simulator.stop)
        self.observer = Observer(self.clientset)
        self.cpu = CpuMeter()
        self.created = 0
        self.kinds: dict[str, int] = dict.fromkeys(KINDS, 0)
        self.events: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []
        self.errors: list[str] = []

    def row(self, minute: float, started: float) -> dict[str, Any]:
        pid = self.controller.pid
        if self.snapshot_minutes and minute >= self.snapshot_minutes[0] - 0.01:
            self.snapshot_minutes.pop(0)
            self.snapshots.append((round(minute, 1), wait_snapshot(pid, self.snapshot_dir)))
        try:
            figures = gauges(self.controller.metrics_port)
        except OSError as err:
            figures = {"memory_objects": None, "queue_depth": None, "error": str(err)}
        return {
            "minute": round(minute, 1),
            "controller_pid": pid,
            "rss_mib": round(proc_status_kib(pid, "VmRSS") / 1024.0, 1),
            "cpu_seconds": round(self.cpu.read(pid), 1),
            "jobflows_created": self.created,
            **self.observer.counts(),
            "jobflows_stuck": self.observer.stuck(time.monotonic(), STUCK_AFTER),
            "jobflows_without_a_job_after_60s": self.observer.without_a_job(time.monotonic(), STUCK_AFTER),
            **figures,
            "load_average": load_average(),
            "seconds": round(time.monotonic() - started, 1),
        }

    def disrupt(self, at: float, started: float, done: set[str]) -> None:
        """The one kube-apiserver restart and the one controller SIGKILL, each at its minute."""
        horizon = min(self.args.minutes, 10.0)
        if "apiserver" not in done and at >= 0.3 * horizon:
            done.add("apiserver")
            t0 = time.monotonic()
            self.plane.restart_apiserver()
            self.events.append(
                {
                    "minute": round(at, 2),
                    "event": "kube-apiserver restarted",
                    "seconds": round(time.monotonic() - t0, 1),
                }
            )
            log(f"  kube-apiserver restarted at minute {at:.1f}")
        if "controller" not in done and at >= 0.6 * horizon:
            done.add("controller")
            self.cpu.read(self.controller.pid)
            self.controller.kill()
            self.cpu.fold()
            ready = self.controller.start()
            self.events.append(
                {"minute": round(at, 2), "event": "controller SIGKILL, started again", "ready_seconds": round(ready, 1)}
            )
            log(f"  controller killed at minute {at:.1f}; new pid {self.controller.pid} ready after {ready:.1f}s")

    def create(self, index: int) -> None:
        kind, body = job_flow(index, self.namespaces)
        try:
            self.clientset.job_flows(body["metadata"]["namespace"]).create(body)
        except Exception as err:  # noqa: BLE001 - during the API server's restart: counted, not fatal
            self.errors.append(f"create {body['metadata']['name']}: {err}"[:200])
            return
        self.created += 1
        self.kinds[kind] += 1
        self.observer.created(body, deletes_while_running=kind == "deleted")

    def churn(self, started: float) -> None:
        """Create at the rate until the minutes are over; a row every --row-minutes; the disruptions."""
        interval = 1.0 / self.args.rate
        index, done = 0, set()
        next_row = self.args.row_minutes
        end = started + self.args.minutes * 60.0
        while time.monotonic() < end:
            now = time.monotonic()
            minute = (now - started) / 60.0
            self.disrupt(minute, started, done)
            if minute >= next_row:
                self.rows.append(self.row(minute, started))
                log(f"  row {self.rows[-1]}")
                next_row += self.args.row_minutes
            if not self.controller.alive():
                raise BenchError("the controller exited during the soak")
            self.create(index)
            index += 1
            self.observer.housekeeping(self.clientset, DELETE_RUNNING_AFTER)
            time.sleep(max(0.0, started + index * interval - time.monotonic()))
        self.rows.append(self.row((time.monotonic() - started) / 60.0, started))

    def drain(self, started: float) -> dict[str, Any]:
        """Stop creating; wait for every JobFlow to be gone, then read the memories once more."""
        deadline = time.monotonic() + max(180.0, 4 * TTL + 120.0)
        while time.monotonic() < deadline:
            self.observer.housekeeping(self.clientset, DELETE_RUNNING_AFTER)
            if self.observer.present() == 0 and self.observer.jobs_present() == 0:
                break
            time.sleep(1.0)
        time.sleep(5.0)  # the last deletions' events reach the controller
        final = self.row((time.monotonic() - started) / 60.0, started)
        final["jobflows_present"] = self.observer.present()
        final["jobs_present"] = self.observer.jobs_present()
        return final

    def run(self) -> dict[str, Any]:
        self.simulator.start()
        self.controller.start()
        self.observer.start()
        time.sleep(2.0)
        baseline = gauges(self.controller.metrics_port)
        log(f"controller ready (pid {self.controller.pid}); baseline {baseline}; creating {self.args.rate}/s")
        started = time.monotonic()
        self.churn(started)
        log("creation over; waiting for every JobFlow to be gone")
        final = self.drain(started)
        return self.result(baseline, final)

    def result(self, baseline: dict[str, Any], final: dict[str, Any]) -> dict[str, Any]:
        base, end = baseline["memory_objects"], final.get("memory_objects") or {}
        by_minute = {round(r["minute"]): r["rss_mib"] for r in self.rows}
        rss10 = next((r["rss_mib"] for r in self.rows if r["minute"] >= 10.0 - 0.01), None)
        rss30 = next((r["rss_mib"] for r in self.rows if r["minute"] >= 30.0 - 0.01), None)
        rss_end = self.rows[-1]["rss_mib"] if self.rows else None
        return {
            "jobflows_created": self.created,
            "by_kind": self.kinds,
            "create_errors": {"count": len(self.errors), "first": self.errors[:5]},
            "disruptions": self.events,
            "rows": self.rows,
            "baseline_memory_objects": base,
            "after_drain": final,
            "memories_back_at_baseline": {k: end.get(k) == v for k, v in base.items()} if end else None,
            "max_jobflows_stuck": max((r["jobflows_stuck"] for r in self.rows), default=0),
            "max_jobflows_without_a_job_after_60s": max(
                (r["jobflows_without_a_job_after_60s"] for r in self.rows), default=0
            ),
            "rss_mib_by_minute": by_minute,
            "tracemalloc": compare_snapshots(self.snapshots) if self.snapshots else None,
            "rss_growth_minute_10_to_end_pct": (
                round((rss_end - rss10) / rss10 * 100.0, 1) if rss10 and rss_end and self.args.minutes > 10 else None
            ),
            # The event correlator's three LRUs (client-go's 4096 entries each, about 6.4 MiB once
            # full) fill over the first ~4,500 events: about 20 minutes at 1 JobFlow/s.
            "rss_growth_minute_30_to_end_pct": (
                round((rss_end - rss30) / rss30 * 100.0, 1) if rss30 and rss_end and self.args.minutes > 30 else None
            ),
        }

    def close(self) -> None:
        self.observer.stop.set()
        self.controller.stop()
        self.simulator.stop()
        self.rest.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="minutes of creation (default %(default)s)")
    parser.add_argument("--rate", type=float, default=1.0, help="JobFlows created per second (default %(default)s)")
    parser.add_argument("--default-malloc", action="store_true", help="without the Deployment's MALLOC_ARENA_MAX")
    parser.add_argument("--row-minutes", type=float, default=5.0, help="minutes between rows (default %(default)s)")
    parser.add_argument(
        "--tracemalloc",
        metavar="MINUTES",
        help="trace the controller's allocations (PYTHONTRACEMALLOC, which costs memory: RSS rows are then"
        " not comparable) and take a snapshot at the rows of these minutes, e.g. 15,30,60; compared in the JSON",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="one more variable in the controller's environment, e.g. MALLOC_MMAP_THRESHOLD_=131072 (repeatable)",
    )
    parser.add_argument("--snapshot-dir", help="where the snapshots are kept (default: a new temporary directory)")
    args = parser.parse_args()
    watchdog = Watchdog(args.minutes * 60.0 + 900.0, "bench/soak.py")
    result: dict[str, Any] = {
        "benchmark": "soak",
        **machine(),
        "workload": {
            "minutes": args.minutes,
            "jobflows_per_s": args.rate,
            "kinds": list(KINDS),
            "ttl_seconds_after_finished": TTL,
            "retain_policy": "half delete, half retain (their Jobs deleted by the soak once the JobFlow is gone)",
            "controller_flags": CONTROLLER_FLAGS,
            "controller_environment": controller_environment(args, Path("<snapshot-dir>")),
            "stuck_after_seconds": STUCK_AFTER,
        },
    }
    try:
        with control_plane(watchdog, controller_manager=True) as plane:
            soak = Soak(args, plane, watchdog)
            try:
                result.update(soak.run())
            finally:
                soak.close()
    except BenchError as err:
        log(f"ERROR: {err}")
        sys.exit(1)
    finally:
        watchdog.cancel()
    result["load_average_at_end"] = load_average()
    emit(result)
    ok = result["max_jobflows_stuck"] == 0 and result["max_jobflows_without_a_job_after_60s"] == 0
    ok = ok and all((result["memories_back_at_baseline"] or {"x": False}).values())
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
