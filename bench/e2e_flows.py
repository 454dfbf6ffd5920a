"""End-to-end JobFlow benchmark: the controller as a process, against a real kube-apiserver.

For each ``--worker-threads`` value (1, then 3) on a fresh control plane (etcd + kube-apiserver,
no kube-controller-manager: nothing here needs garbage collection, and its informers would compete
for the two CPUs), it creates 200 three-step chains (a; b after a; c after b) and 100 diamonds (a;
b and c after a; d after b and c), spread over ``NAMESPACES`` namespaces that share four
JobTemplates ``a``..``d`` each, whose Jobs run near-instantly (``Pending:0s,Running:0s,Completed``).

Three processes do the work:

* the controller, ``.venv/bin/jobflow-controller --leader-elect=false --worker-threads=N`` with
  ``--kube-api-qps=1000 --kube-api-burst=2000`` (``--default-qps`` keeps the flags' defaults, 50/100,
  instead), metrics and health on loopback;
* the Volcano job simulator, this file with ``--simulator``: one ``JobSimulator`` per namespace on
  one unthrottled client, so four Jobs advance at once;
* this process: it creates the JobFlows from a thread pool and watches Jobs and JobFlows with its own
  informers, stamping every event with its local receipt time.

Reported per run: seconds from the first JobFlow create until every JobFlow is ``Succeed``; the
controller's API requests per JobFlow by verb and by verb and code (its ``rest_client_requests_total``
scraped before the first create and after the run has settled, divided by 300: the JobTemplate
controller in the same process and the Event writes are included, watch opens count as GETs); the
API server's own count of writes per JobFlow by resource (``apiserver_request_total``, every client:
it shows which resource the controller's writes went to); the work queues' adds and retries per
JobFlow, peak depth (sampled once a second), mean wait in the queue and mean sync time; reaction latencies, each
the difference of two receipt times in this process's Job and JobFlow informers: dependency
``Completed`` (the MODIFIED event that made the last of a Job's targets Completed) to the dependent
Job's ADDED event, JobFlow ADDED to its first Job's ADDED, and the last Job's Completed to the
JobFlow's ``Succeed``; the controller's peak RSS (VmHWM) and CPU seconds (utime+stime from
/proc/<pid>/stat, at start-up and for the run), and the simulator's and kube-apiserver's CPU for the
run, for context. ``--default-qps`` runs take minutes each (the limits are tripled for them).

Prints one JSON document on stdout, progress on stderr; a watchdog fails it after ``TIME_LIMIT``
seconds. Other processes on this machine perturb the timings (the load average is reported).
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

# Run as ``python bench/e2e_flows.py``, this folder comes first on sys.path; the project's packages
# are imported from the repository root instead, as ``bench/informers.py`` must.
_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

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
    phase_of,
    proc_status_kib,
    rest_client,
    seed_namespaces,
    simulator_process,
    wait_until,
)
from bench._health_probe import HealthProbe  # noqa: E402
from bench._memory import smaps_by_mapping, take_snapshot, tracemalloc_by_package  # noqa: E402
from informers import ResourceEventHandlerFuncs, SharedIndexInformer  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from jobflow_controller.local.processes import Process, free_port  # noqa: E402
from tests.e2e.jobflows import chain, flow  # noqa: E402

CHAINS = 200
DIAMONDS = 100
NAMESPACES = 4
SCRIPT = "Pending:0s,Running:0s,Completed"
WORKER_THREADS = (1, 3)
FAST_CLIENT_FLAGS = ["--kube-api-qps=1000", "--kube-api-burst=2000"]
CREATE_WORKERS = 8
TIME_LIMIT = 360.0
RUN_TIMEOUT = 150.0
SETTLE_SECONDS = 2.0
DEPTH_SAMPLE_SECONDS = 1.0
IDLE_SECONDS = 10.0
#: Threads playing Job steps per namespace: at 3,000 JobFlows one thread's round trips paced the run.
SIMULATOR_WORKERS = 4
#: The Deployment's environment (manifests/deployment.yaml); --default-malloc leaves it out.
CONTROLLER_ENVIRONMENT = {"MALLOC_ARENA_MAX": "2"}
#: --heap-snapshot: trace the controller's allocations and attribute them by package at the end
#: (tracing costs memory: the run's RSS figures are then not comparable).
HEAP_SNAPSHOT = False
#: --gc-probe: the cyclic garbage collector's passes and CPU, by generation (bench/_gc_probe).
GC_PROBE = False
#: Set by bench/scale.py --leader-elect: the controller holds a Lease (in `default`, default timings), so
#: /livez judges its renewals as a kubelet's probe would in a cluster.
LEADER_ELECT = False
#: --http-stack: the controller's HTTP stack for non-watch requests (bench/_http_stack), None: the product's.
HTTP_STACK: str | None = None


# -- the workload ----------------------------------------------------------------------------------


def diamond() -> list[dict[str, Any]]:
    return [
        {"name": "a"},
        {"name": "b", "dependsOn": {"targets": ["a"]}},
        {"name": "c", "dependsOn": {"targets": ["a"]}},
        {"name": "d", "dependsOn": {"targets": ["b", "c"]}},
    ]


def workload(namespaces: list[str]) -> list[dict[str, Any]]:
    """Every JobFlow of a run, chains then diamonds, dealt round-robin over the namespaces."""
    flows = [flow(f"chain-{i:03d}", namespaces[i % len(namespaces)], chain("a", "b", "c")) for i in range(CHAINS)]
    flows += [flow(f"diamond-{i:03d}", namespaces[i % len(namespaces)], diamond()) for i in range(DIAMONDS)]
    return flows


def dependencies(job_flow: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(dependent Job key, its target Job keys) for every flow with targets."""
    ns, name = job_flow["metadata"]["namespace"], job_flow["metadata"]["name"]
    out = []
    for step in job_flow["spec"]["flows"]:
        targets = (step.get("dependsOn") or {}).get("targets")
        if targets:
            out.append((f"{ns}/{name}-{step['name']}", [f"{ns}/{name}-{t}" for t in targets]))
    return out


# -- what this process sees -----------------------------------------------------------------------


class Observer:
    """Job and JobFlow informers that stamp, with local receipt time, the events the latencies need."""

    def __init__(self, clientset: Clientset) -> None:
        self.lock = threading.Lock()
        self.job_added: dict[str, float] = {}
        self.job_completed: dict[str, float] = {}
        self.flow_added: dict[str, float] = {}
        self.flow_succeeded: dict[str, float] = {}
        self.stop = threading.Event()
        self.jobs = SharedIndexInformer(clientset.jobs().lister_watcher(), 0.0, name="bench-jobs")
        self.jobs.add_event_handler(
            ResourceEventHandlerFuncs(add_func=self._job_event, update_func=lambda _old, new: self._job_event(new))
        )
        self.flows = SharedIndexInformer(clientset.job_flows().lister_watcher(), 0.0, name="bench-jobflows")
        self.flows.add_event_handler(
            ResourceEventHandlerFuncs(add_func=self._flow_event, update_func=lambda _old, new: self._flow_event(new))
        )

    def _job_event(self, obj: Any) -> None:
        now = time.monotonic()
        key = key_of(obj)
        with self.lock:
            self.job_added.setdefault(key, now)
            if phase_of(obj) == "Completed":
                self.job_completed.setdefault(key, now)

    def _flow_event(self, obj: Any) -> None:
        now = time.monotonic()
        key = key_of(obj)
        with self.lock:
            self.flow_added.setdefault(key, now)
            if phase_of(obj) == "Succeed":
                self.flow_succeeded.setdefault(key, now)

    def start(self) -> None:
        for informer in (self.jobs, self.flows):
            threading.Thread(target=informer.run, args=(self.stop,), name=informer.name, daemon=True).start()
        wait_until(lambda: self.jobs.has_synced() and self.flows.has_synced(), 30.0, "the benchmark's informers")

    def succeeded(self) -> int:
        with self.lock:
            return len(self.flow_succeeded)

    def phases(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for obj in self.flows.get_indexer().list():
            counts[phase_of(obj) or "<none>"] += 1
        return dict(counts)


def latencies(observer: Observer, flows: list[dict[str, Any]]) -> dict[str, Any]:
    single: list[float] = []
    double: list[float] = []
    first_job: list[float] = []
    to_succeed: list[float] = []
    violations: list[str] = []
    missing: list[str] = []
    added, completed = observer.job_added, observer.job_completed
    for job_flow in flows:
        key = key_of(job_flow)
        ns, name = job_flow["metadata"]["namespace"], job_flow["metadata"]["name"]
        first = f"{ns}/{name}-a"
        if first in added and key in observer.flow_added:
            first_job.append(added[first] - observer.flow_added[key])
        jobs = [f"{ns}/{name}-{step['name']}" for step in job_flow["spec"]["flows"]]
        if key in observer.flow_succeeded and all(j in completed for j in jobs):
            to_succeed.append(observer.flow_succeeded[key] - max(completed[j] for j in jobs))
        for dependent, targets in dependencies(job_flow):
            if dependent not in added or not all(t in completed for t in targets):
                missing.append(dependent)
                continue
            delay = added[dependent] - max(completed[t] for t in targets)
            if delay < 0:
                violations.append(dependent)
            (double if len(targets) > 1 else single).append(delay)
    return {
        "dependency_completed_to_dependent_added": latency_summary_ms(single + double),
        "of_which_one_target": latency_summary_ms(single),
        "of_which_two_targets_diamond_d": latency_summary_ms(double),
        "jobflow_added_to_first_job_added": latency_summary_ms(first_job),
        "last_job_completed_to_jobflow_succeed": latency_summary_ms(to_succeed),
        "dependents_created_before_their_targets_completed": violations[:10],
        "dependents_not_observed": missing[:10],
    }


# -- the controller's metrics ----------------------------------------------------------------------


def scrape(port: int) -> dict[str, dict[tuple[str, ...], float]]:
    """The controller's request counts by (method, code) and its work-queue series by queue name."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    wanted = {
        "rest_client_requests_total": "requests",
        "workqueue_adds_total": "queue_adds",
        "workqueue_retries_total": "queue_retries",
        "workqueue_depth": "queue_depth",
        "workqueue_queue_duration_seconds_sum": "queue_wait_sum",
        "workqueue_queue_duration_seconds_count": "queue_wait_count",
        "workqueue_work_duration_seconds_sum": "work_sum",
        "workqueue_work_duration_seconds_count": "work_count",
        "rest_client_rate_limiter_duration_seconds_sum": "limiter_wait_sum",
        "rest_client_rate_limiter_duration_seconds_count": "limiter_wait_count",
        "workqueue_queue_duration_seconds_bucket": "queue_wait_bucket",
        "workqueue_work_duration_seconds_bucket": "work_bucket",
    }
    out: dict[str, dict[tuple[str, ...], float]] = {key: {} for key in wanted.values()}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            series = wanted.get(sample.name)
            if series == "requests":
                out[series][(sample.labels["method"], sample.labels["code"])] = sample.value
            elif series is not None and series.endswith("_bucket"):
                out[series][(sample.labels["name"], sample.labels["le"])] = sample.value
            elif series is not None and series.startswith("limiter_"):
                out[series][(sample.labels["verb"],)] = sample.value
            elif series is not None:
                out[series][(sample.labels["name"],)] = sample.value
    return out


_APISERVER_SAMPLE = re.compile(r"^apiserver_request_total\{([^}]*)\} (\S+)$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')


_APISERVER_SECONDS = re.compile(r"^apiserver_request_duration_seconds_sum\{([^}]*)\} (\S+)$")


def apiserver_seconds(plane: Any) -> dict[str, float]:
    """kube-apiserver's time serving requests (``apiserver_request_duration_seconds_sum``, watches
    excluded: they last as long as they are open), by "VERB resource[/sub]", every client and resource.

    Wall time, not CPU, but on a CPU-bound server the shares of the two follow each other: it says
    which kind of request the API server's CPU goes to.
    """
    out: dict[str, float] = {}
    for line in apiserver_metrics(plane).splitlines():
        match = _APISERVER_SECONDS.match(line)
        if not match:
            continue
        labels = dict(_LABEL.findall(match.group(1)))
        if labels.get("verb") in ("WATCH", "CONNECT"):
            continue
        key = f"{labels.get('verb')} {labels.get('resource', '')}" + (
            f"/{labels['subresource']}" if labels.get("subresource") else ""
        )
        out[key] = out.get(key, 0.0) + float(match.group(2))
    return out


def apiserver_requests(plane: Any) -> dict[str, float]:
    """kube-apiserver's ``apiserver_request_total`` for our resources, by "VERB resource[/sub] code".

    Every client is in it (controller, simulator, this process): it tells which resource the
    controller's writes went to, which the controller's own counter cannot.
    """
    text = apiserver_metrics(plane)
    out: dict[str, float] = {}
    for line in text.splitlines():
        match = _APISERVER_SAMPLE.match(line)
        if not match:
            continue
        labels = dict(_LABEL.findall(match.group(1)))
        if labels.get("group") not in ("batch.volcano.sh", "flow.volcano.sh") and labels.get("resource") != "events":
            continue
        resource = labels.get("resource", "")
        if labels.get("subresource"):
            resource += "/" + labels["subresource"]
        key = f"{labels.get('verb')} {resource} {labels.get('code')}"
        out[key] = out.get(key, 0.0) + float(match.group(2))
    return out


def conflicts(before: dict[Any, float], after: dict[Any, float], api_deltas: dict[str, float]) -> dict[str, Any]:
    """The run's 409s, totals (not per JobFlow), by source.

    The controller is the only client here that writes JobFlow or JobTemplate status (the simulator
    writes Jobs' status, this process only creates JobFlows), and its only PUTs are those status
    writes: each of its PUT 409s is a conflict it caused itself, a status computed from an object
    older than the stored one. Its POST 409s are Jobs it created again because its cache did not
    show them yet. The API server's count splits every client's 409s by resource.
    """

    def delta(key: tuple[str, str]) -> int:
        return int(after.get(key, 0.0) - before.get(key, 0.0))

    return {
        "controller_status_writes": delta(("PUT", "409")),
        "controller_creates_already_existing": delta(("POST", "409")),
        "by_resource_all_clients": {
            key.rsplit(" ", 1)[0]: int(value)
            for key, value in sorted(api_deltas.items())
            if key.endswith(" 409") and value
        },
    }


def histogram_quantile(
    before: dict[str, Any], after: dict[str, Any], series: str, queue: str, q: float
) -> float | None:
    """The upper bound (ms) of the bucket holding quantile `q` of what the run added to a histogram:
    as Prometheus' histogram_quantile would say, without the interpolation inside the bucket."""
    bounds = sorted(
        (float(le), after[series][(name, le)] - before[series].get((name, le), 0.0))
        for (name, le) in after[series]
        if name == queue
    )
    if not bounds or bounds[-1][1] <= 0:
        return None
    wanted = q * bounds[-1][1]
    for bound, cumulative in bounds:
        if cumulative >= wanted:
            return round(bound * 1000.0, 1)
    return None


def requests_total(port: int) -> float:
    return sum(scrape(port)["requests"].values())


def per_flow(before: dict[Any, float], after: dict[Any, float], flows: int) -> dict[str, float]:
    deltas = {key: after.get(key, 0.0) - before.get(key, 0.0) for key in after}
    return {
        key if isinstance(key, str) else "/".join(key): round(value / flows, 2)
        for key, value in sorted(deltas.items())
        if value
    }


def mean_ms(before: dict[str, Any], after: dict[str, Any], total: str, count: str) -> dict[str, float | None]:
    """Per queue, the mean of a histogram over the run, from its _sum and _count deltas."""
    out: dict[str, float | None] = {}
    for key in after[count]:
        n = after[count][key] - before[count].get(key, 0.0)
        seconds = after[total].get(key, 0.0) - before[total].get(key, 0.0)
        out[key[0]] = round(seconds / n * 1000.0, 1) if n else None
    return out


def by_method(per_code: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for key, value in per_code.items():
        out[key.split("/", 1)[0]] += value
    return {k: round(v, 2) for k, v in sorted(out.items())}


# -- one run ----------------------------------------------------------------------------------------


def idle_cpu_rate(pid: int) -> float:
    """The controller's CPU seconds per second over IDLE_SECONDS after the run, nothing scraped."""
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    time.sleep(IDLE_SECONDS)
    return (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)


def _ready(port: int) -> bool:
    """`/readyz`, or `/healthz` for a build that serves no readiness (upstream's vc-controller-manager)."""
    for path in ("/readyz", "/healthz"):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
                return bool(response.status == 200)
        except urllib.error.HTTPError as err:
            if err.code != 404:
                return False
        except OSError:
            return False
    return False


def run_once(workers: int, client_flags: list[str], watchdog: Watchdog, run_timeout: float) -> dict[str, Any]:
    log(f"== --worker-threads={workers}")
    namespaces = [f"bench-flows-{i}" for i in range(NAMESPACES)]
    flows = workload(namespaces)
    with control_plane(watchdog, controller_manager=False) as plane:
        rest = rest_client(plane.kubeconfig_path, agent="bench-e2e-flows")
        clientset = Clientset(rest)
        seed_namespaces(clientset, namespaces, "abcd", SCRIPT)
        kubeconfig = str(plane.kubeconfig_path)
        simulator = simulator_process(plane, namespaces)
        metrics_port, health_port = free_port(), free_port()
        environment = dict(CONTROLLER_ENVIRONMENT)
        if HEAP_SNAPSHOT:
            environment.update(PYTHONTRACEMALLOC="1", JOBFLOW_CONTROLLER_HEAP_SNAPSHOT_DIR=str(plane.root / "heap"))
        if GC_PROBE:
            environment.update(
                PYTHONPATH=str(_BENCH_DIR / "_gc_probe"), JOBFLOW_BENCH_GC_PROBE=str(plane.root / "gc.json")
            )
        if HTTP_STACK is not None:
            environment.update(PYTHONPATH=str(_BENCH_DIR / "_http_stack"), JOBFLOW_BENCH_HTTP_STACK=HTTP_STACK)
        controller_args = [
            *(["env", *(f"{k}={v}" for k, v in environment.items())] if environment else []),
            controller_command(),
            f"--kubeconfig={kubeconfig}",
            *(["--leader-elect-resource-namespace=default"] if LEADER_ELECT else ["--leader-elect=false"]),
            f"--worker-threads={workers}",
            "--enable-metrics",
            f"--listen-address=127.0.0.1:{metrics_port}",
            "--enable-healthz",
            f"--healthz-address=127.0.0.1:{health_port}",
            *client_flags,
        ]
        controller = Process("jobflow-controller", controller_args, plane.root / "controller.log")
        observer = Observer(clientset)
        watchdog.on_timeout(controller.stop)
        watchdog.on_timeout(simulator.stop)
        try:
            simulator.start()
            controller.start()
            assert controller.pid is not None and simulator.pid is not None
            wait_until(lambda: _ready(health_port) or not controller.alive(), 60.0, "the controller's /readyz")
            if not controller.alive():
                raise BenchError("the controller exited at start-up")
            observer.start()
            health = HealthProbe(health_port)
            health.start()
            time.sleep(1.0)  # let the JobTemplate controller's start-up syncs finish before counting
            before = scrape(metrics_port)
            api_before = apiserver_requests(plane)
            api_seconds_before = apiserver_seconds(plane)
            startup_cpu = cpu_seconds(controller.pid)
            apiserver_pid = plane.processes["kube-apiserver"].pid
            assert apiserver_pid is not None
            cpu0 = {"controller": startup_cpu, "sim": cpu_seconds(simulator.pid), "api": cpu_seconds(apiserver_pid)}
            window_start = time.monotonic()
            log(f"controller ready (pid {controller.pid}, {startup_cpu:.1f} CPU s at start-up); creating JobFlows")

            started = time.monotonic()
            create_job_flows(clientset, flows, CREATE_WORKERS, timeout=max(60.0, len(flows) / 5.0))
            created = time.monotonic()
            log(f"created {len(flows)} JobFlows in {created - started:.1f}s; waiting for Succeed")
            deadline = started + run_timeout
            last_report = last_depth = 0.0
            max_depth: dict[str, float] = defaultdict(float)
            while observer.succeeded() < len(flows):
                if not controller.alive():
                    raise BenchError("the controller exited during the run")
                now = time.monotonic()
                if now > deadline:
                    raise BenchError(
                        f"only {observer.succeeded()} of {len(flows)} JobFlows Succeed after {run_timeout:.0f}s;"
                        f" phases {observer.phases()}, {len(observer.job_completed)} Jobs Completed"
                    )
                if now - last_report > 10.0:
                    last_report = now
                    log(f"  {observer.succeeded()}/{len(flows)} Succeed, {len(observer.job_added)} Jobs created")
                # Once a second: each /metrics scrape costs the controller about 4 ms of CPU, so
                # sampling every 0.25 s charged it about 1 ms per JobFlow of the benchmark's own.
                if now - last_depth >= DEPTH_SAMPLE_SECONDS:
                    last_depth = now
                    for (queue_name,), depth in scrape(metrics_port)["queue_depth"].items():
                        max_depth[queue_name] = max(max_depth[queue_name], depth)
                time.sleep(0.25)
            finished = max(observer.flow_succeeded.values())
            log(f"all {len(flows)} JobFlows Succeed after {finished - started:.1f}s; letting the controller settle")

            # Whatever the controller still sends for this work (events, template status) counts too.
            last, quiet_since = requests_total(metrics_port), time.monotonic()
            settle_deadline = time.monotonic() + 20.0
            while time.monotonic() - quiet_since < SETTLE_SECONDS and time.monotonic() < settle_deadline:
                time.sleep(0.25)
                total = requests_total(metrics_port)
                if total != last:
                    last, quiet_since = total, time.monotonic()
            health.stop()
            after = scrape(metrics_port)
            api_after = apiserver_requests(plane)
            api_seconds_after = apiserver_seconds(plane)
            cpu1 = {"controller": cpu_seconds(controller.pid), "sim": cpu_seconds(simulator.pid)}
            window = time.monotonic() - window_start
            cpu1["api"] = cpu_seconds(apiserver_pid)
            peak_kib = proc_status_kib(controller.pid, "VmHWM")
            rss_kib = proc_status_kib(controller.pid, "VmRSS")
            memory: dict[str, Any] = {"smaps_at_end": smaps_by_mapping(controller.pid)}
            idle_cpu_per_s = idle_cpu_rate(controller.pid)
            if HEAP_SNAPSHOT:
                snapshot = take_snapshot(controller.pid, plane.root / "heap")
                memory["tracemalloc_at_end"] = tracemalloc_by_package(snapshot) if snapshot else "no snapshot written"
        except BenchError as err:
            raise BenchError(f"{err}\n--- controller log tail ---\n{controller.log_tail(30)}") from None
        finally:
            observer.stop.set()
            controller.stop()
            simulator.stop()
            rest.close()
            gc_probe = (plane.root / "gc.json").read_text() if GC_PROBE and (plane.root / "gc.json").exists() else None

    requests = per_flow(before["requests"], after["requests"], len(flows))
    api_deltas = {key: api_after.get(key, 0.0) - api_before.get(key, 0.0) for key in api_after}
    return {
        "worker_threads": workers,
        "jobflows": len(flows),
        "jobs": len(observer.job_added),
        "create_jobflows_seconds": round(created - started, 2),
        "seconds_until_all_succeed": round(finished - started, 2),
        "run_seconds": round(window, 2),  # the window of cpu_seconds_run: creation to settled
        "jobflows_per_s": round(len(flows) / (finished - started), 1),
        "api_requests_per_jobflow": {
            "total": round(sum(requests.values()), 2),
            "by_verb": by_method(requests),
            "by_verb_and_code": requests,
        },
        "apiserver_writes_per_jobflow_all_clients": {
            key: value
            for key, value in per_flow(api_before, api_after, len(flows)).items()
            if key.split(" ", 1)[0] in ("POST", "PUT", "PATCH", "DELETE", "APPLY")
        },
        "conflicts": conflicts(before["requests"], after["requests"], api_deltas),
        # Where the API server's time went (every client; the simulator's Job status writes too).
        "apiserver_request_seconds_by_kind_all_clients": {
            key: round(value - api_seconds_before.get(key, 0.0), 2)
            for key, value in sorted(api_seconds_after.items(), key=lambda kv: -kv[1])
            if value - api_seconds_before.get(key, 0.0) >= 0.05
        },
        "workqueue": {
            "adds_per_jobflow": per_flow(before["queue_adds"], after["queue_adds"], len(flows)),
            "retries_per_jobflow": per_flow(before["queue_retries"], after["queue_retries"], len(flows)),
            "max_depth_sampled": {k: int(v) for k, v in sorted(max_depth.items())},
            "mean_wait_in_queue_ms": mean_ms(before, after, "queue_wait_sum", "queue_wait_count"),
            "mean_sync_ms": mean_ms(before, after, "work_sum", "work_count"),
            # The controller's own share of a reaction: time waiting in the queue, then the sync.
            "queue_wait_p99_ms_at_most": histogram_quantile(before, after, "queue_wait_bucket", "jobflow", 0.99),
            "sync_p99_ms_at_most": histogram_quantile(before, after, "work_bucket", "jobflow", 0.99),
        },
        # Per verb, both controllers and the event sink together: the client-side QPS limiter's share.
        "mean_rate_limiter_wait_ms": mean_ms(before, after, "limiter_wait_sum", "limiter_wait_count"),
        "latency": latencies(observer, flows),
        "health": health.figures(),
        "controller": {
            "peak_rss_mib": round(peak_kib / 1024.0, 1),
            "rss_at_end_mib": round(rss_kib / 1024.0, 1),
            "cpu_seconds_startup": round(startup_cpu, 2),
            "cpu_seconds_run": round(cpu1["controller"] - cpu0["controller"], 2),
            "cpu_seconds_total": round(cpu1["controller"], 2),
            # With every object cached and nothing to do: the part of cpu_seconds_run that follows the
            # run's length (timers, resyncs, this benchmark's scrapes) rather than its work.
            "idle_cpu_ms_per_s": round(idle_cpu_per_s * 1000.0, 2),
            "environment": environment,
            **memory,
            **({"gc": json.loads(gc_probe)} if gc_probe else {}),
        },
        "cpu_seconds_run_other_processes": {
            "simulator": round(cpu1["sim"] - cpu0["sim"], 2),
            "kube_apiserver": round(cpu1["api"] - cpu0["api"], 2),
        },
    }


# -- the simulator process --------------------------------------------------------------------------


def simulator_main(kubeconfig: str, namespaces: list[str]) -> None:
    """One JobSimulator per namespace, on one unthrottled client, until SIGTERM."""
    from jobflow_controller.local.simulator import JobSimulator

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    clientset = Clientset(rest_client(kubeconfig, agent="bench-volcano-job-simulator"))
    threads = [
        threading.Thread(
            target=JobSimulator(clientset, namespace=ns, workers=SIMULATOR_WORKERS).run, args=(stop,), name=f"sim-{ns}"
        )
        for ns in namespaces
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# -- main -------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulator", nargs=2, metavar=("KUBECONFIG", "NAMESPACES"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--default-qps",
        action="store_true",
        help="run the controller with its default --kube-api-qps/--kube-api-burst (50/100) instead of 1000/2000",
    )
    parser.add_argument(
        "--worker-threads",
        default=",".join(str(w) for w in WORKER_THREADS),
        help="comma-separated --worker-threads values, one run each (default: %(default)s)",
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        help="multiply the time limits (a machine shared with other work may need 2 or 3)",
    )
    parser.add_argument("--default-malloc", action="store_true", help="without the Deployment's MALLOC_ARENA_MAX=2")
    parser.add_argument("--heap-snapshot", action="store_true", help="trace allocations; by package at the end")
    parser.add_argument("--gc-probe", action="store_true", help="the garbage collector's passes and CPU")
    parser.add_argument(
        "--http-stack",
        choices=("urllib3", "http.client", "http1"),
        help="the controller's HTTP stack for non-watch requests (bench/_http_stack; default: the product's)",
    )
    parser.add_argument(
        "--controller-flag",
        action="append",
        default=[],
        metavar="FLAG",
        help="one more jobflow-controller flag, e.g. --controller-flag=--status-write-interval=0 (repeatable)",
    )
    args = parser.parse_args()
    if args.simulator:
        simulator_main(args.simulator[0], args.simulator[1].split(","))
        return

    client_flags = ([] if args.default_qps else FAST_CLIENT_FLAGS) + args.controller_flag
    global CONTROLLER_ENVIRONMENT, HEAP_SNAPSHOT, GC_PROBE, HTTP_STACK
    CONTROLLER_ENVIRONMENT = {} if args.default_malloc else CONTROLLER_ENVIRONMENT
    HEAP_SNAPSHOT, GC_PROBE = args.heap_snapshot, args.gc_probe
    if args.http_stack and args.gc_probe:
        parser.error("--http-stack and --gc-probe each need their own sitecustomize")
    HTTP_STACK = args.http_stack
    # At 50 requests/s the controller needs minutes per run: give that mode more time.
    slow = (3.0 if args.default_qps else 1.0) * args.time_scale
    watchdog = Watchdog(TIME_LIMIT * slow, "bench/e2e_flows.py")
    result: dict[str, Any] = {
        "benchmark": "e2e_flows",
        **machine(),
        "workload": {
            "chains_3_steps": CHAINS,
            "diamonds_4_steps": DIAMONDS,
            "jobflows": CHAINS + DIAMONDS,
            "jobs": 3 * CHAINS + 4 * DIAMONDS,
            "namespaces": NAMESPACES,
            "job_templates": "a, b, c, d in every namespace, shared by that namespace's JobFlows",
            "job_phase_script": SCRIPT,
        },
        "controller_client_flags": (
            client_flags
            if not args.default_qps
            else ["defaults: --kube-api-qps=50 --kube-api-burst=100", *client_flags]
        ),
        "controller_http_stack": HTTP_STACK or "the product's",
        "simulator": f"separate process, {NAMESPACES} JobSimulators (one per namespace), no client-side rate limit",
        "runs": [],
    }
    try:
        for workers in [int(w) for w in args.worker_threads.split(",")]:
            result["runs"].append(run_once(workers, client_flags, watchdog, RUN_TIMEOUT * slow))
    except BenchError as err:
        log(f"ERROR: {err}")
        sys.exit(1)
    finally:
        watchdog.cancel()
    result["load_average_at_end"] = load_average()
    emit(result)


if __name__ == "__main__":
    main()
