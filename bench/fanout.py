"""Fan-out at the API's pace: 40 JobFlows of one 256-index matrix flow each, ``maxParallel: 64`` (issue 47, item 3).

Why: a matrix multiplies one JobFlow's Jobs by up to 256, so at the scale of tens of such JobFlows
the controller's Job creates, not its JobFlows, are what the API server sees. This measures whether
those creates go at the client's pace (``--kube-api-qps``) without a storm of 429s, what a matrix
Job costs in status writes and CPU against a plain flow's (bench/e2e_flows.py), whether the status
size guard (jobflow/status_writer.py) trips on a 256-Job status, and whether other tenants' JobFlows
created in the middle of the fan-out still get their first Job at once.

On a fresh control plane (etcd + kube-apiserver, as bench/e2e_flows.py), ``--jobflows`` (40)
JobFlows, each one flow ``sweep`` with a matrix of ``--indexes`` (256) values and ``maxParallel``
``MAX_PARALLEL`` (64), spread over ``NAMESPACES`` namespaces, their Jobs run near-instantly by the
simulator (bench/e2e_flows.py's, a process of its own). Once a tenth of the Jobs exist,
``BYSTANDERS`` plain three-step chains are created, one at a time, in a namespace of their own.

The controller runs with bench/e2e_flows.py's fast client flags (``--kube-api-qps=1000
--kube-api-burst=2000``), or its defaults (50/100) with ``--default-qps``. Reported: Job creates per
second (over the fan-out, and the busiest second) against the QPS; the 429s the controller received
(its ``rest_client_requests_total``) and those the API server answered to anyone (its
``apiserver_request_total``, and APF's ``apiserver_flowcontrol_rejected_requests_total``); status
writes per Job; the ``StatusTooLarge`` Warnings (events) and log lines; controller CPU per Job and
peak RSS; the bystanders' JobFlow-ADDED-to-first-Job-ADDED latency. Prints one JSON document on
stdout, progress on stderr; a watchdog fails it after its time limit.
"""

from __future__ import annotations

import argparse
import sys
import threading
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
    create_job_flows,
    emit,
    key_of,
    latency_summary_ms,
    load_average,
    log,
    machine,
    proc_status_kib,
    rest_client,
    seed_namespaces,
    simulator_process,
    wait_until,
)
from bench.e2e_flows import (  # noqa: E402
    CONTROLLER_ENVIRONMENT,
    FAST_CLIENT_FLAGS,
    SCRIPT,
    Observer,
    _ready,
    apiserver_requests,
    mean_ms,
    scrape,
)
from jobflow_controller.jobflow.constants import REASON_STATUS_TOO_LARGE  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from jobflow_controller.kube.resources import EVENTS  # noqa: E402
from jobflow_controller.local.processes import Process, free_port  # noqa: E402
from tests.e2e.jobflows import chain, flow, template  # noqa: E402

JOBFLOWS = 40
INDEXES = 256
MAX_PARALLEL = 64
NAMESPACES = 4
BYSTANDERS = 4
BYSTANDER_NAMESPACE = "fanout-bystanders"
#: The bystanders are created once this share of the Jobs exists: the fan-out is in full swing.
BYSTANDERS_AFTER = 0.1
WORKER_THREADS = 3
#: Seconds per 1,000 Jobs allowed, fast flags (the default QPS's runs get three times more).
SECONDS_PER_1000_JOBS = 60.0


def matrix_flow(name: str, namespace: str, indexes: int) -> dict[str, Any]:
    """One JobFlow of one flow `sweep`, a matrix of `indexes` values run at most MAX_PARALLEL at once."""
    values = [str(i) for i in range(indexes)]
    sweep = {"name": "sweep", "matrix": {"params": [{"name": "i", "values": values}], "maxParallel": MAX_PARALLEL}}
    return flow(name, namespace, [sweep])


def apiserver_rejections(plane: Any) -> float:
    """APF's own count of rejected requests (429 before any handler), every client."""
    total = 0.0
    for line in apiserver_metrics(plane).splitlines():
        if line.startswith("apiserver_flowcontrol_rejected_requests_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def create_rates(times: list[float]) -> dict[str, Any]:
    """Creates per second over the whole fan-out and in its busiest one-second window."""
    if len(times) < 2:
        return {"mean_per_s": None, "busiest_second": len(times)}
    times = sorted(times)
    busiest, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] > 1.0:
            start += 1
        busiest = max(busiest, end - start + 1)
    return {"mean_per_s": round(len(times) / (times[-1] - times[0]), 1), "busiest_second": busiest}


def too_large(clientset: Clientset, namespaces: list[str]) -> int:
    """How many StatusTooLarge Warnings the namespaces' events hold (their counts summed)."""
    total = 0
    for ns in namespaces:
        for event in clientset.resource(EVENTS, ns).list():
            if event.get("reason") == REASON_STATUS_TOO_LARGE:
                total += int(event.get("count") or 1)
    return total


def delta(before: dict[Any, float], after: dict[Any, float], match: Any) -> int:
    return int(sum(v - before.get(k, 0.0) for k, v in after.items() if match(k)))


def wait_for_all(observer: Observer, total: int, controller: Process, timeout: float) -> bool:
    """Until every JobFlow Succeeds (True) or `timeout` passes (False: the figures so far are reported)."""
    deadline, last = time.monotonic() + timeout, 0.0
    while observer.succeeded() < total:
        if not controller.alive():
            raise BenchError("the controller exited during the run")
        now = time.monotonic()
        if now > deadline:
            log(f"only {observer.succeeded()} of {total} JobFlows Succeed after {timeout:.0f}s: reporting so far")
            return False
        if now - last > 10.0:
            last = now
            log(f"  {observer.succeeded()}/{total} Succeed, {len(observer.job_added)} Jobs created")
        time.sleep(0.25)
    return True


def start_bystanders(clientset: Clientset, observer: Observer, jobs: int, bystanders: list[dict[str, Any]]) -> None:
    """Once BYSTANDERS_AFTER of the Jobs exist, the bystanders, one every half second (a thread)."""

    def run() -> None:
        wait_until(lambda: len(observer.job_added) >= jobs * BYSTANDERS_AFTER, 600.0, "the fan-out", 0.05)
        log(f"  {len(observer.job_added)} Jobs exist: creating {len(bystanders)} bystanders")
        for job_flow in bystanders:
            clientset.job_flows(BYSTANDER_NAMESPACE).create(job_flow)
            time.sleep(0.5)

    threading.Thread(target=run, name="bystanders", daemon=True).start()


def controller_process(plane: Any, client_flags: list[str], metrics_port: int, health_port: int) -> Process:
    args = [
        "env",
        *(f"{k}={v}" for k, v in CONTROLLER_ENVIRONMENT.items()),
        controller_command(),
        f"--kubeconfig={plane.kubeconfig_path}",
        "--leader-elect=false",
        f"--worker-threads={WORKER_THREADS}",
        "--enable-metrics",
        f"--listen-address=127.0.0.1:{metrics_port}",
        "--enable-healthz",
        f"--healthz-address=127.0.0.1:{health_port}",
        *client_flags,
    ]
    return Process("jobflow-controller", args, plane.root / "controller.log")


def run_once(
    jobflows: int, indexes: int, client_flags: list[str], timeout: float, watchdog: Watchdog
) -> dict[str, Any]:
    namespaces = [f"fanout-{i}" for i in range(NAMESPACES)]
    flows = [matrix_flow(f"sweep-{i:03d}", namespaces[i % NAMESPACES], indexes) for i in range(jobflows)]
    bystanders = [flow(f"bystander-{i}", BYSTANDER_NAMESPACE, chain("a", "b", "c")) for i in range(BYSTANDERS)]
    with control_plane(watchdog) as plane:
        rest = rest_client(plane.kubeconfig_path, agent="bench-fanout")
        clientset = Clientset(rest)
        seed_namespaces(clientset, namespaces, "", SCRIPT)
        for ns in namespaces:
            clientset.job_templates(ns).create(template("sweep", ns, SCRIPT))
        seed_namespaces(clientset, [BYSTANDER_NAMESPACE], "abc", SCRIPT)
        simulator = simulator_process(plane, [*namespaces, BYSTANDER_NAMESPACE])
        metrics_port, health_port = free_port(), free_port()
        controller = controller_process(plane, client_flags, metrics_port, health_port)
        observer = Observer(clientset)
        watchdog.on_timeout(controller.stop)
        watchdog.on_timeout(simulator.stop)
        try:
            simulator.start()
            controller.start()
            assert controller.pid is not None
            wait_until(lambda: _ready(health_port) or not controller.alive(), 60.0, "the controller's /readyz")
            observer.start()
            time.sleep(1.0)
            apiserver_pid = plane.processes["kube-apiserver"].pid
            m: dict[str, Any] = {"load_start": load_average(), "indexes": indexes}
            m["before"] = (scrape(metrics_port), apiserver_requests(plane), apiserver_rejections(plane))
            m["cpu0"] = (cpu_seconds(controller.pid), cpu_seconds(apiserver_pid))
            m["started"] = time.monotonic()
            start_bystanders(clientset, observer, jobflows * indexes, bystanders)
            create_job_flows(clientset, flows, 8, timeout=60.0)
            log(f"created {jobflows} matrix JobFlows ({jobflows * indexes} Jobs to come); waiting for Succeed")
            m["all_succeeded"] = wait_for_all(observer, jobflows + BYSTANDERS, controller, timeout)
            m["finished"] = max(observer.flow_succeeded.values()) if m["all_succeeded"] else time.monotonic()
            time.sleep(3.0)  # the last events and status writes
            m["after"] = (scrape(metrics_port), apiserver_requests(plane), apiserver_rejections(plane))
            m["cpu1"] = (cpu_seconds(controller.pid), cpu_seconds(apiserver_pid))
            m["peak_kib"] = proc_status_kib(controller.pid, "VmHWM")
            m["warnings"] = too_large(clientset, namespaces)
            lines = controller.log_tail(10**7).splitlines()
            m["log_lines"] = sum(1 for line in lines if REASON_STATUS_TOO_LARGE in line)
        except BenchError as err:
            raise BenchError(f"{err}\n--- controller log tail ---\n{controller.log_tail(30)}") from None
        finally:
            observer.stop.set()
            controller.stop()
            simulator.stop()
            rest.close()
    return report(observer, flows, bystanders, m)


def report(observer: Observer, flows: list[Any], bystanders: list[Any], m: dict[str, Any]) -> dict[str, Any]:
    """The run's figures from the measurements `m` run_once took."""
    (before, api_before, apf_before), (after, api_after, apf_after) = m["before"], m["after"]
    matrix_jobs = [t for k, t in observer.job_added.items() if not k.startswith(BYSTANDER_NAMESPACE + "/")]
    first_job = []
    for job_flow in bystanders:
        key = key_of(job_flow)
        first = f"{BYSTANDER_NAMESPACE}/{job_flow['metadata']['name']}-a"
        if key in observer.flow_added and first in observer.job_added:
            first_job.append(observer.job_added[first] - observer.flow_added[key])
    requests = before["requests"], after["requests"]
    jobs = len(observer.job_added)
    status_puts = delta(api_before, api_after, lambda k: k.startswith("PUT jobflows/status"))
    cpu = m["cpu1"][0] - m["cpu0"][0]
    syncs = {k[0]: v - before["work_count"].get(k, 0.0) for k, v in after["work_count"].items()}
    return {
        "jobflows": len(flows),
        "indexes_per_jobflow": m["indexes"],
        "max_parallel": MAX_PARALLEL,
        "bystanders": len(bystanders),
        "jobs": jobs,
        "all_succeeded": m["all_succeeded"],
        "jobflows_succeeded": observer.succeeded(),
        # Until all Succeed, or (all_succeeded false) until the time limit.
        "seconds_until_all_succeed": round(m["finished"] - m["started"], 1),
        "load_average_at_start": m["load_start"],
        "job_creates": create_rates(matrix_jobs),
        "responses_429": {
            "controller": delta(*requests, lambda k: k[1] == "429"),
            "apiserver_all_clients": delta(api_before, api_after, lambda k: k.endswith(" 429")),
            "apf_rejected_all_clients": int(apf_after - apf_before),
        },
        "controller_requests_by_verb_and_code": {
            "/".join(k): int(v - before["requests"].get(k, 0.0))
            for k, v in sorted(after["requests"].items())
            if v - before["requests"].get(k, 0.0)
        },
        "syncs_per_job": {name: round(n / jobs, 2) for name, n in syncs.items() if n and jobs},
        "mean_sync_ms": mean_ms(before, after, "work_sum", "work_count"),
        "status_writes": status_puts,
        "status_writes_per_job": round(status_puts / jobs, 3) if jobs else None,
        "status_too_large": {"warning_events": m["warnings"], "log_lines": m["log_lines"]},
        "controller": {
            "cpu_seconds_run": round(cpu, 2),
            "cpu_ms_per_job": round(cpu / jobs * 1000.0, 2) if jobs else None,
            "peak_rss_mib": round(m["peak_kib"] / 1024.0, 1),
        },
        "kube_apiserver_cpu_seconds_run": round(m["cpu1"][1] - m["cpu0"][1], 2),
        "bystander_first_job": latency_summary_ms(first_job),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobflows", type=int, default=JOBFLOWS, help="matrix JobFlows (default %(default)s)")
    parser.add_argument("--indexes", type=int, default=INDEXES, help="matrix size of each (default %(default)s)")
    parser.add_argument("--default-qps", action="store_true", help="the controller's default --kube-api-qps/burst")
    parser.add_argument("--time-scale", type=float, default=1.0, help="multiply the time limits")
    args = parser.parse_args()
    client_flags = [] if args.default_qps else FAST_CLIENT_FLAGS
    jobs = args.jobflows * args.indexes
    timeout = max(120.0, jobs / 1000.0 * SECONDS_PER_1000_JOBS) * args.time_scale * (3.0 if args.default_qps else 1.0)
    watchdog = Watchdog(timeout + 180.0, "bench/fanout.py")
    result: dict[str, Any] = {
        "benchmark": "fanout",
        **machine(),
        "controller_client_flags": client_flags or ["defaults: --kube-api-qps=50 --kube-api-burst=100"],
        "job_phase_script": SCRIPT,
    }
    try:
        result["run"] = run_once(args.jobflows, args.indexes, client_flags, timeout, watchdog)
    except BenchError as err:
        log(f"ERROR: {err}")
        sys.exit(1)
    finally:
        watchdog.cancel()
    result["load_average_at_end"] = load_average()
    emit(result)


if __name__ == "__main__":
    main()
