"""Memory per cached JobFlow and per cached Job: this controller against another build (issue 47 item 1).

Why: at 10,000 JobFlows (30,000 Jobs) the controller's memory is its caches. A run of that size end to
end takes the better part of an hour on this machine for each build; what the comparison needs is
what each build holds per object once its caches are full, which a cluster that already holds the
objects shows in minutes.

Per size N (a fresh etcd + kube-apiserver each): 20 namespaces with JobTemplates a, b, c; N three-step
chains; their 3N Jobs, built as the controller builds them (`apis.builders.new_job`: the template's
spec, the createdBy labels and annotations, the controlling owner reference), each with a Completed
status as Volcano's job controller writes it (a merge patch of `status`, so each Job carries two
managedFields entries, as in a cluster). Then each build in turn, alone, with `--leader-elect=false`
and the fast client flags: started, given until every JobFlow has a phase (Succeed; upstream's
build leaves them Running, docs/deviations.md row 3), its informers past their LIST and its CPU
idle and RSS steady for IDLE_SECONDS, then its RSS
(VmRSS) and peak (VmHWM) read and the process stopped. The memory per object is the slope between
the sizes: (RSS at the larger - RSS at the smaller) / (objects added), so the interpreter's or the Go
runtime's baseline drops out. One JSON document on stdout.

    .venv/bin/python bench/cache_memory.py --sizes 3000,10000 \
        --other ~/.cache/jobflow-controller/upstream/v1.13.0/jobflow-controllers
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))

from bench._common import (  # noqa: E402
    BenchError,
    Watchdog,
    apiserver_metrics,
    control_plane,
    controller_command,
    cpu_seconds,
    emit,
    load_average,
    log,
    machine,
    proc_status_kib,
    rest_client,
    run_pool,
    seed_namespaces,
    wait_until,
)
from jobflow_controller.apis.builders import new_job  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from jobflow_controller.local.processes import Process, free_port  # noqa: E402
from tests.e2e.jobflows import chain, flow  # noqa: E402

SIZES = (3000, 10000)
NAMESPACES = 20
STEPS = "abc"
SCRIPT = "Pending:0s,Running:0s,Completed"
CREATE_WORKERS = 16
IDLE_SECONDS = 10.0
#: CPU seconds per second below which a controller counts as idle.
IDLE_RATE = 0.05
#: RSS growth (KiB) over IDLE_SECONDS below which the caches count as full.
RSS_STEADY_KIB = 1024
WATCHED = ("jobflows", "jobtemplates", "jobs")
_WATCHES = re.compile(r"^apiserver_longrunning_requests\{([^}]*)\} (\S+)$")
FAST_CLIENT_FLAGS = ["--kube-api-qps=1000", "--kube-api-burst=2000"]
COMPLETED = {"status": {"state": {"phase": "Completed"}, "succeeded": 1, "minAvailable": 1, "version": 2}}


def populate(clientset: Clientset, size: int) -> int:
    """The templates, JobFlows and Completed Jobs of `size` chains; returns the objects made."""
    namespaces = [f"bench-cache-{i:02d}" for i in range(NAMESPACES)]
    seed_namespaces(clientset, namespaces, STEPS, SCRIPT)
    templates = {(ns, t["metadata"]["name"]): t for ns in namespaces for t in clientset.job_templates(ns).list()}
    flows = [flow(f"chain-{i:05d}", namespaces[i % NAMESPACES], chain(*STEPS)) for i in range(size)]
    created = run_pool(
        lambda f: clientset.job_flows(f["metadata"]["namespace"]).create(f), flows, CREATE_WORKERS, "jobflows", 1800.0
    )
    jobs = [
        new_job(jf, step, f"{jf['metadata']['name']}-{step}", templates[(jf["metadata"]["namespace"], step)], None)
        for jf in created
        for step in STEPS
    ]

    def make(job: dict[str, Any]) -> None:
        jobs_client = clientset.jobs(job["metadata"]["namespace"])
        jobs_client.create(job)
        jobs_client.patch_status(job["metadata"]["name"], COMPLETED)

    run_pool(make, jobs, CREATE_WORKERS, "jobs", 3600.0)
    return len(created) + len(jobs) + len(templates)


def watches(plane: Any) -> dict[str, float]:
    """The API server's open WATCHes per resource of ours: a LIST-then-WATCH informer (client-go's
    without watch-list, upstream's) opens its watch only once its LIST has come back whole."""
    text = apiserver_metrics(plane)
    out = dict.fromkeys(WATCHED, 0.0)
    for line in text.splitlines():
        match = _WATCHES.match(line)
        if match and 'verb="WATCH"' in match.group(1):
            resource = re.search(r'resource="([^"]*)"', match.group(1))
            if resource and resource.group(1) in out:
                out[resource.group(1)] += float(match.group(2))
    return out


def settle(pid: int) -> None:
    """Until the process's CPU is idle and its RSS steady for IDLE_SECONDS together."""
    last_cpu, last_rss, quiet_since = cpu_seconds(pid), proc_status_kib(pid, "VmRSS"), time.monotonic()
    while time.monotonic() - quiet_since < IDLE_SECONDS:
        time.sleep(1.0)
        cpu, rss = cpu_seconds(pid), proc_status_kib(pid, "VmRSS")
        if cpu - last_cpu > IDLE_RATE or abs(rss - last_rss) > RSS_STEADY_KIB:
            quiet_since, last_rss = time.monotonic(), rss
        last_cpu = cpu


def measure(command: str, plane: Any, clientset: Clientset, size: int, label: str) -> dict[str, Any]:
    """Start one build, wait for every JobFlow synced and an idle CPU, read its memory, stop it."""
    metrics_port, health_port = free_port(), free_port()
    argv = [
        command,
        f"--kubeconfig={plane.kubeconfig_path}",
        "--leader-elect=false",
        "--worker-threads=3",
        "--enable-metrics",
        f"--listen-address=127.0.0.1:{metrics_port}",
        "--enable-healthz",
        f"--healthz-address=127.0.0.1:{health_port}",
        *FAST_CLIENT_FLAGS,
    ]
    controller = Process(label, argv, plane.root / f"{label}.log")
    started = time.monotonic()
    controller.start()
    assert controller.pid is not None
    try:

        def all_synced() -> bool:
            # Succeed, or Running: upstream's build leaves a JobFlow whose Jobs all Completed before
            # its first sync in Running (docs/deviations.md row 3), and nothing here changes after.
            phases = [((f.get("status") or {}).get("state") or {}).get("phase") for f in clientset.job_flows().list()]
            return sum(p in ("Succeed", "Running") for p in phases) == size

        wait_until(all_synced, 1800.0, f"{label}: every JobFlow synced", interval=5.0)
        succeeded = time.monotonic() - started
        # Nothing else watches these resources here, so a watch open on each is this build's
        # informers past their initial LIST (a build that syncs by watch-list opens it sooner, and
        # the steady RSS below covers it).
        wait_until(lambda: all(watches(plane).values()), 1800.0, f"{label}: its informers' watches", interval=2.0)
        settle(controller.pid)
        return {
            "rss_mib": round(proc_status_kib(controller.pid, "VmRSS") / 1024.0, 1),
            "peak_rss_mib": round(proc_status_kib(controller.pid, "VmHWM") / 1024.0, 1),
            "cpu_seconds": round(cpu_seconds(controller.pid), 2),
            "seconds_until_all_synced": round(succeeded, 1),
        }
    finally:
        controller.stop()


def slope(sizes: list[dict[str, Any]], build: str, key: str) -> float | None:
    first, last = sizes[0], sizes[-1]
    added = last["objects"] - first["objects"]
    if build not in first or build not in last or added <= 0:
        return None
    return round((last[build][key] - first[build][key]) * 1024.0 * 1024.0 / added, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="JobFlow counts (default %(default)s)")
    parser.add_argument("--other", help="the other build's executable (upstream's, hack/build-upstream.sh)")
    parser.add_argument("--only", choices=("ours", "other"), help="measure this build alone")
    args = parser.parse_args()
    builds = {"ours": controller_command(), **({"other": args.other} if args.other else {})}
    if args.only:
        builds = {args.only: builds[args.only]}
    watchdog = Watchdog(7200.0, "bench/cache_memory.py")
    result: dict[str, Any] = {"benchmark": "cache_memory", **machine(), "sizes": []}
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            with control_plane(watchdog) as plane:
                clientset = Clientset(rest_client(plane.kubeconfig_path, agent="bench-cache-memory"))
                log(f"== {size} JobFlows: populating")
                t0 = time.monotonic()
                row: dict[str, Any] = {"jobflows": size, "objects": populate(clientset, size)}
                row["populate_seconds"] = round(time.monotonic() - t0, 1)
                for build, command in builds.items():
                    log(f"   {build}")
                    row[build] = measure(command, plane, clientset, size, build)
                row["load_average_after"] = load_average()
                result["sizes"].append(row)
    except BenchError as err:
        log(f"ERROR: {err}")
        sys.exit(1)
    finally:
        watchdog.cancel()
    sizes = result["sizes"]
    result["bytes_per_object"] = {b: slope(sizes, b, "rss_mib") for b in builds}
    if "other" in builds and len(sizes) > 1 and result["bytes_per_object"]["other"]:
        result["ratio_per_object"] = round(result["bytes_per_object"]["ours"] / result["bytes_per_object"]["other"], 2)
    result["ratio_rss_by_size"] = {
        str(row["jobflows"]): round(row["ours"]["rss_mib"] / row["other"]["rss_mib"], 2)
        for row in sizes
        if "other" in row and "ours" in row
    }
    result["load_average_at_end"] = load_average()
    emit(result)


if __name__ == "__main__":
    main()
