"""Sharded controllers: throughput and per-replica memory for 1, 2 and 3 replicas (issue 13).

For each replica count N in 1, 2, 3, on a fresh control plane (etcd + kube-apiserver, no
kube-controller-manager), N ``jobflow-controller --shards=N --shard-index=i`` processes (Lease
timings 4 s / 3 s / 0.5 s, Leases in ``default``, ``--kube-api-qps=1000 --kube-api-burst=2000``)
each take their own shard; then 300 JobFlows, three-step chains (a; b after a; c after b), are
created over 12 namespaces whose names are chosen so that every shard gets 12/N of them (the hash
decides a namespace's shard), and run until every one is ``Succeed``. The Volcano job simulator
runs in its own process (``bench/e2e_flows.py --simulator``), Jobs complete near-instantly.

Reported per run: seconds from the first create to the last ``Succeed`` (polled every 2 s) and
JobFlows Succeeded per second; per replica its shards, peak RSS (VmHWM) and CPU seconds for the
run, and its requests to the API server (``rest_client_requests_total``). One CPU-bound machine
runs everything (API server, etcd, simulator, N controllers), so N replicas do not get N times the
CPU: the figure to read is the per-replica RSS, and throughput only says sharding costs nothing.

Then the elastic scenario (bench/_shards_elastic.py): ``--shards=12`` over 1, then 3 replicas that
settle on their quotas, then 3 replicas of which one is SIGKILLed and another started mid-run.
``--scenario static|elastic`` runs one part only, ``--jobflows N`` sizes the elastic part.

Prints one JSON document on stdout, progress on stderr; a watchdog fails it after ``TIME_LIMIT``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))
sys.path.insert(1, str(_BENCH_DIR.parent / "tests" / "e2e"))

from e2e_helpers import FAST_LEASE_FLAGS, ControllerProcess, balanced_namespaces  # noqa: E402

from bench._common import (  # noqa: E402
    BenchError,
    Watchdog,
    control_plane,
    cpu_seconds,
    create_job_flows,
    emit,
    load_average,
    log,
    machine,
    proc_status_kib,
    rest_client,
    seed_namespaces,
    simulator_process,
    wait_until,
)
from bench._shards_elastic import elastic  # noqa: E402
from jobflow_controller.apis import jobflow as jf  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from jobflow_controller.sharding import shard_for_namespace  # noqa: E402
from tests.e2e.jobflows import chain, flow  # noqa: E402

JOBFLOWS = 300
NAMESPACES = 12
REPLICAS = (1, 2, 3)
SCRIPT = "Pending:0s,Running:0s,Completed"
CLIENT_FLAGS = ("--kube-api-qps=1000", "--kube-api-burst=2000", "--worker-threads=3")
CREATE_WORKERS = 8
#: How often the JobFlows are listed to count the Succeeded ones (a LIST of 300 costs the API server).
POLL_SECONDS = 2.0
RUN_TIMEOUT = 600.0
TIME_LIMIT = 3600.0
#: The elastic scenario's size (issue 47); `--jobflows` runs it smaller.
ELASTIC_JOBFLOWS = 3000


def run_once(replicas: int, watchdog: Watchdog) -> dict[str, Any]:
    log(f"== {replicas} replica(s), --shards={replicas}")
    tag = uuid.uuid4().hex[:4]
    namespaces = balanced_namespaces(f"bench-{tag}", replicas, NAMESPACES // replicas)
    logs = Path(tempfile.mkdtemp(prefix="jobflow-bench-shards-"))
    with control_plane(watchdog) as plane:
        clientset = Clientset(rest_client(plane.kubeconfig_path, agent="bench-shards"))
        seed_namespaces(clientset, namespaces, "abc", SCRIPT)
        kubeconfig = str(plane.kubeconfig_path)
        simulator = simulator_process(plane, namespaces)
        base = f"bench-{tag}"
        procs: list[ControllerProcess] = []
        watchdog.on_timeout(simulator.stop)
        try:
            simulator.start()
            for index in range(replicas):
                flags = (*FAST_LEASE_FLAGS, *CLIENT_FLAGS, f"--leader-elect-resource-name={base}")
                procs.append(
                    ControllerProcess(
                        kubeconfig, logs, *flags, f"--shards={replicas}", f"--shard-index={index}", name=f"r{index}"
                    )
                )
            for proc in procs:
                watchdog.on_timeout(proc.stop)
            wait_until(
                lambda: all(
                    p.metric("leader_election_master_status", name=f"{base}-shard-{i}") == 1.0
                    for i, p in enumerate(procs)
                ),
                60.0,
                "every replica to hold its shard",
                interval=0.2,
            )
            wait_until(lambda: all(p.get("/readyz")[0] == 200 for p in procs), 60.0, "every replica Ready")
            cpu0 = [cpu_seconds(p.popen.pid) for p in procs]
            flows = [
                flow(f"chain-{i:03d}", namespaces[i % len(namespaces)], chain("a", "b", "c")) for i in range(JOBFLOWS)
            ]
            started = time.monotonic()
            create_job_flows(clientset, flows, CREATE_WORKERS, timeout=60.0)
            log(f"created {JOBFLOWS} JobFlows in {time.monotonic() - started:.1f}s; waiting for Succeed")
            deadline = started + RUN_TIMEOUT
            last_report = 0.0
            while True:
                succeeded = sum(jf.phase(f) == "Succeed" for f in clientset.job_flows().list())
                now = time.monotonic()
                if succeeded == JOBFLOWS:
                    break
                if now > deadline:
                    raise BenchError(f"only {succeeded} of {JOBFLOWS} JobFlows Succeed after {RUN_TIMEOUT:.0f}s")
                if not all(p.popen.poll() is None for p in procs):
                    raise BenchError("a controller exited during the run")
                if now - last_report > 10.0:
                    last_report = now
                    log(f"  {succeeded}/{JOBFLOWS} Succeed")
                time.sleep(POLL_SECONDS)
            elapsed = time.monotonic() - started
            log(f"all {JOBFLOWS} Succeed after {elapsed:.1f}s")
            per_replica = []
            for index, proc in enumerate(procs):
                pid = proc.popen.pid
                per_replica.append(
                    {
                        "replica": index,
                        "shards_held": int(proc.metric("jobflow_controller_shards_held")),
                        "namespaces": sum(shard_for_namespace(ns, replicas) == index for ns in namespaces),
                        "peak_rss_mib": round(proc_status_kib(pid, "VmHWM") / 1024, 1),
                        "cpu_seconds_run": round(cpu_seconds(pid) - cpu0[index], 2),
                        "api_requests": int(proc.metric("rest_client_requests_total")),
                    }
                )
        finally:
            for proc in procs:
                proc.stop()
            simulator.stop()
    return {
        "replicas": replicas,
        "seconds_to_all_succeed": round(elapsed, 2),
        "jobflows_succeeded_per_second": round(JOBFLOWS / elapsed, 2),
        "per_replica": per_replica,
        "load_average_after": load_average(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=("static", "elastic", "all"), default="all")
    parser.add_argument("--jobflows", type=int, default=ELASTIC_JOBFLOWS, help="the elastic scenario's JobFlows")
    args = parser.parse_args()
    watchdog = Watchdog(TIME_LIMIT, "bench/shards.py")
    result: dict[str, Any] = {
        "benchmark": "shards",
        **machine(),
        "workload": {
            "jobflows": JOBFLOWS,
            "shape": "three-step chains a -> b -> c",
            "namespaces": NAMESPACES,
            "job_phase_script": SCRIPT,
        },
        "controller_flags": [*FAST_LEASE_FLAGS, *CLIENT_FLAGS],
        "runs": [],
    }
    try:
        if args.scenario in ("static", "all"):
            for replicas in REPLICAS:
                result["runs"].append(run_once(replicas, watchdog))
        if args.scenario in ("elastic", "all"):
            result["elastic"] = elastic(args.jobflows, watchdog)
    except BenchError as err:
        log(f"ERROR: {err}")
        sys.exit(1)
    finally:
        watchdog.cancel()
    result["load_average_at_end"] = load_average()
    emit(result)


if __name__ == "__main__":
    main()
