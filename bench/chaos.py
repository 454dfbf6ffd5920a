"""Chaos benchmark: the faults of issue 10 against 300 JobFlows in flight, on a real kube-apiserver.

Each fault gets a fresh run: a new control plane (etcd + kube-apiserver; no
kube-controller-manager, since no fault here needs garbage collection or namespace deletion), the
workload of ``bench/e2e_flows.py`` (200 three-step chains and 100 diamonds dealt round-robin over
``NAMESPACES`` namespaces sharing JobTemplates ``a``..``d``) whose Jobs take long enough for the
faults to hit flows in flight (``SCRIPT``), the real ``jobflow-controller`` as a child process
(``--leader-elect=false --worker-threads=3 --max-requeue-num=3 --resync-period=RESYNC``, client
limits lifted as in e2e_flows), and the Volcano job simulator as a separate process. The faults,
each started once every JobFlow has been created:

* ``annotate``: four client threads merge-patch an annotation onto every JobFlow's metadata, each
  thread going through its batch of flows and starting the batch again 50 ms later, for
  ``ANNOTATE_SECONDS`` or until every JobFlow is ``Succeed``;
* ``apiserver_restarts``: three kube-apiserver restarts, 3 s apart;
* ``controller_sigkill``: the controller killed with SIGKILL three times, restarted at once each
  time, the next kill 3 s after the new process is ready;
* ``sigstop``: the controller frozen with SIGSTOP while some in-flight Jobs are deleted by hand,
  etcd is compacted and kube-apiserver restarts; then SIGCONT.

Reported per fault: ``flows_stranded`` (JobFlows not ``Succeed`` by a direct LIST after recovery
gave up: every JobFlow ``Succeed``, or no Job/JobFlow progress for ``STALL_RESYNCS`` resync periods
plus ``STALL_GRACE`` seconds counted from the fault's end, or the hard cap; must be 0);
``duplicate_job_creations`` (Job names this process's own watch saw with more than one uid, the Jobs
the benchmark deleted by hand excluded; those are reported apart, by their phase when deleted: one
deleted in flight must be created again exactly once, one that had completed must not be, as a Job
that ran to completion is never run again); ``recovery_seconds`` (end of the fault until every
JobFlow is ``Succeed``, as this process's watch or a direct LIST every ``LIST_INTERVAL`` saw it
first, whichever was earlier: after an outage the watch itself backs off for up to 30 s; or until
the last progress when some never are); ``total_seconds`` (first create to the same point); the
JobFlows whose status lists disagree with their Jobs, and the Jobs not controlled by their JobFlow,
after the run; the controller's requests by verb and code and its 409s
(``rest_client_requests_total``, summed over every controller process of the run: each is scraped
every ``SCRAPE_INTERVAL`` and right before it is killed), its work-queue adds and retries, and its
dropped requests (``dropping request out of the queue`` lines of its JSON log, and the Warning
events ``<action> JobFlow failed for ...`` in the API; no metric counts them); the load average,
sampled through the run, since other work on this machine slows everything down.

Prints one JSON document on stdout, progress on stderr; exits 1 after printing it if any JobFlow is
stranded, a Job deleted in flight was never created again, or a run failed, and a watchdog fails it
after ``TIME_LIMIT`` seconds. ``--quick`` runs 60 JobFlows instead of 300; ``--faults`` picks some
of the faults.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as ``python bench/chaos.py``, this folder comes first on sys.path; the project's packages are
# imported from the repository root instead (see bench/e2e_flows.py).
_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))

from bench._common import (  # noqa: E402
    REPO_ROOT,
    VENV_BIN,
    BenchError,
    Watchdog,
    control_plane,
    controller_command,
    create_job_flows,
    emit,
    key_of,
    load_average,
    log,
    machine,
    phase_of,
    rest_client,
    seed_namespaces,
    simulator_process,
    wait_until,
)
from bench.e2e_flows import diamond, scrape  # noqa: E402
from informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedIndexInformer  # noqa: E402
from informers.errors import NotFoundError  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from jobflow_controller.local.controlplane import find_binaries  # noqa: E402
from jobflow_controller.local.processes import Process, free_port  # noqa: E402
from tests.e2e.jobflows import chain, flow  # noqa: E402

FAULTS = ("annotate", "apiserver_restarts", "controller_sigkill", "sigstop")
CHAINS, DIAMONDS = 200, 100
QUICK_CHAINS, QUICK_DIAMONDS = 40, 20
NAMESPACES = 4
SCRIPT = "Pending:0.2s,Running:1.5s,Completed"
RESYNC = 10.0
CONTROLLER_FLAGS = [
    "--leader-elect=false",
    "--worker-threads=3",
    "--max-requeue-num=3",
    "--kube-api-qps=1000",
    "--kube-api-burst=2000",
    "--log-format=json",
]
CREATE_WORKERS = 8
#: When the fault starts, in seconds after the last JobFlow was created.
FAULT_DELAY = 3.0
ANNOTATE_SECONDS, QUICK_ANNOTATE_SECONDS = 40.0, 15.0
ANNOTATE_THREADS = 4
ANNOTATE_PAUSE = 0.05
RESTARTS = 3
RESTART_GAP = 3.0
#: Jobs deleted by hand in the sigstop fault, as a fraction of the Jobs in flight (at most 30).
HAND_DELETE_FRACTION, HAND_DELETE_MAX = 0.2, 30
#: Recovery gives up once nothing has moved for this many resync periods plus the grace...
STALL_RESYNCS, STALL_GRACE = 2, 15.0
#: ...or at this many seconds after the fault ended, whichever comes first.
RECOVERY_CAP = 240.0
SCRAPE_INTERVAL = 0.5
#: How often recovery LISTs the JobFlows itself, in case this process's own watch lags.
LIST_INTERVAL = 1.0
#: How long recovery waits for this process's watches once a LIST shows every JobFlow Succeed.
WATCH_CATCH_UP = 60.0
TIME_LIMIT, QUICK_TIME_LIMIT = 900.0, 420.0
ANNOTATION = "chaos.bench.jobflow.volcano.sh/tick"
DROP_LOG_EVENT = "dropping request out of the queue"
DROP_EVENT_MESSAGE = "JobFlow failed for"


def workload(namespaces: list[str], chains: int, diamonds: int) -> list[dict[str, Any]]:
    """As bench/e2e_flows.py builds it: chains then diamonds, dealt round-robin over the namespaces."""
    flows = [flow(f"chain-{i:03d}", namespaces[i % len(namespaces)], chain("a", "b", "c")) for i in range(chains)]
    flows += [flow(f"diamond-{i:03d}", namespaces[i % len(namespaces)], diamond()) for i in range(diamonds)]
    return flows


# -- what this process sees ------------------------------------------------------------------------


class Observer:
    """Its own Job and JobFlow informers: every uid each Job name had, the phases, the last progress.

    A Job deleted and created again under its name shows a second uid even when both happened while
    this watch was down (the relist replaces the object), so uids, not ADDED events, count creations.
    """

    def __init__(self, clientset: Clientset) -> None:
        self.lock = threading.Lock()
        self.job_uids: dict[str, list[str]] = defaultdict(list)
        self.job_phase: dict[str, str] = {}
        self.job_added: dict[str, float] = {}
        self.job_completed: dict[str, float] = {}
        self.first_completed: dict[str, float] = {}
        self.flow_phase: dict[str, str] = {}
        self.flow_succeeded: dict[str, float] = {}
        #: Each deleted Job's phase at its (first) deletion, as the DELETED event showed it.
        self.deleted_phase: dict[str, str] = {}
        self.last_progress = time.monotonic()
        self.stop = threading.Event()
        self.jobs = SharedIndexInformer(clientset.jobs().lister_watcher(), 0.0, name="chaos-jobs")
        self.jobs.add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._job_event,
                update_func=lambda _old, new: self._job_event(new),
                delete_func=self._job_deleted,
            )
        )
        self.flows = SharedIndexInformer(clientset.job_flows().lister_watcher(), 0.0, name="chaos-jobflows")
        self.flows.add_event_handler(
            ResourceEventHandlerFuncs(add_func=self._flow_event, update_func=lambda _old, new: self._flow_event(new))
        )

    def _job_event(self, obj: Any) -> None:
        now = time.monotonic()
        key, uid, phase = key_of(obj), obj["metadata"].get("uid", ""), phase_of(obj)
        with self.lock:
            uids = self.job_uids[key]
            if uid not in uids:
                uids.append(uid)
                self.last_progress = now
            self.job_added.setdefault(key, now)
            if self.job_phase.get(key) != phase:
                self.job_phase[key] = phase
                self.last_progress = now
            if phase == "Completed":
                self.job_completed.setdefault(key, now)
                self.first_completed.setdefault(key, now)

    def _job_deleted(self, obj: Any) -> None:
        tombstone = isinstance(obj, DeletedFinalStateUnknown)
        if tombstone:
            obj = obj.obj
        phase = phase_of(obj) or "<none>"
        with self.lock:
            # A watch DELETED event carries the Job as it was when deleted; a tombstone (the delete
            # fell in a watch gap) only the last state this process saw.
            self.deleted_phase.setdefault(key_of(obj), f"last seen {phase}" if tombstone else phase)
            self.job_phase.pop(key_of(obj), None)
            self.job_completed.pop(key_of(obj), None)
            self.last_progress = time.monotonic()

    def _flow_event(self, obj: Any) -> None:
        now = time.monotonic()
        key, phase = key_of(obj), phase_of(obj)
        with self.lock:
            if self.flow_phase.get(key) != phase:
                self.flow_phase[key] = phase
                self.last_progress = now
            if phase == "Succeed":
                self.flow_succeeded.setdefault(key, now)

    def start(self) -> None:
        for informer in (self.jobs, self.flows):
            threading.Thread(target=informer.run, args=(self.stop,), name=informer.name, daemon=True).start()
        wait_until(lambda: self.jobs.has_synced() and self.flows.has_synced(), 30.0, "the benchmark's informers")

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            phases = Counter(self.job_phase.values())
            return {
                "jobflows_succeed": len(self.flow_succeeded),
                "jobs_created": sum(len(u) for u in self.job_uids.values()),
                "jobs_completed": phases.get("Completed", 0),
                "jobs_in_flight": sum(n for p, n in phases.items() if p != "Completed"),
            }

    def in_flight_jobs(self) -> list[str]:
        """Jobs not Completed whose JobFlow has not Succeeded, newest first.

        The simulator goes on while the controller is frozen: the oldest Jobs in flight are the
        likeliest to complete between this look and their deletion, and a Job deleted after it
        completed is, rightly, not run again; the newest are first to be deleted in time.
        """
        with self.lock:
            return [
                key
                for key, phase in sorted(
                    self.job_phase.items(), key=lambda kv: self.job_added.get(kv[0], 0.0), reverse=True
                )
                if phase != "Completed" and self.flow_phase.get(key.rsplit("-", 1)[0]) != "Succeed"
            ]


# -- the controller process ------------------------------------------------------------------------


@dataclass
class Controller:
    """The jobflow-controller child: restartable, its metrics summed over every process it was."""

    kubeconfig: str
    log_path: Path
    flags: list[str]
    process: Process | None = None
    metrics_port: int = 0
    health_port: int = 0
    frozen: bool = False
    pids: list[int] = field(default_factory=list)
    expected_exits: int = 0
    #: Extra environment of the process (the soak gives it the Deployment's MALLOC_ARENA_MAX).
    environment: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _generation: int = 0
    _base: dict[str, dict[tuple[str, ...], float]] = field(default_factory=dict)
    _last: dict[str, dict[tuple[str, ...], float]] = field(default_factory=dict)

    def start(self) -> float:
        """Start a new process on fresh ports; the seconds until it is ready."""
        self.metrics_port, self.health_port = free_port(), free_port()
        args = [
            *(["env", *(f"{k}={v}" for k, v in self.environment.items())] if self.environment else []),
            controller_command(),
            f"--kubeconfig={self.kubeconfig}",
            *self.flags,
            "--enable-metrics",
            f"--listen-address=127.0.0.1:{self.metrics_port}",
            "--enable-healthz",
            f"--healthz-address=127.0.0.1:{self.health_port}",
        ]
        started = time.monotonic()
        process = Process("jobflow-controller", args, self.log_path)
        process.start()
        with self._lock:
            self.process = process
        assert process.pid is not None
        self.pids.append(process.pid)
        wait_until(lambda: self._ready() or not process.alive(), 60.0, "the controller's /readyz", interval=0.05)
        if not process.alive():
            raise BenchError(f"the controller exited at start-up:\n{process.log_tail(30)}")
        return time.monotonic() - started

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}/readyz", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def alive(self) -> bool:
        return self.process is not None and self.process.alive()

    @property
    def pid(self) -> int:
        assert self.process is not None and self.process.pid is not None
        return self.process.pid

    def scrape_once(self) -> None:
        """Keep the current process's latest counters (skipped while it is frozen or gone)."""
        with self._lock:
            if self.frozen or not self.alive():
                return
            port, generation = self.metrics_port, self._generation
        try:
            sample = scrape(port)
        except OSError:
            return
        with self._lock:
            if generation == self._generation:  # not a late reply from a process already folded in
                self._last = sample

    def kill(self) -> None:
        """SIGKILL the process (after one last scrape) and fold its counters into the run's."""
        self.scrape_once()
        with self._lock:
            assert self.process is not None and self.process.popen is not None
            self.expected_exits += 1
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            self.process.popen.wait(timeout=30)
            self._fold()

    def freeze(self) -> None:
        with self._lock:
            self.frozen = True
            os.killpg(self.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        with self._lock:
            os.killpg(self.pid, signal.SIGCONT)
            self.frozen = False

    def stop(self) -> None:
        with self._lock:
            process = self.process
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            if self.frozen and process.pid is not None:
                os.killpg(process.pid, signal.SIGCONT)
        self.scrape_once()
        process.stop()
        with self._lock:
            self._fold()
            self.process = None

    def _fold(self) -> None:
        for series, values in self._last.items():
            into = self._base.setdefault(series, {})
            for key, value in values.items():
                into[key] = into.get(key, 0.0) + value
        self._last = {}
        self._generation += 1

    def totals(self) -> dict[str, dict[tuple[str, ...], float]]:
        with self._lock:
            out: dict[str, dict[tuple[str, ...], float]] = {}
            for source in (self._base, self._last):
                for series, values in source.items():
                    into = out.setdefault(series, {})
                    for key, value in values.items():
                        into[key] = into.get(key, 0.0) + value
            return out

    def log_counts(self) -> dict[str, int]:
        """How many JSON log lines of every process so far carry each event."""
        counts: Counter[str] = Counter()
        with contextlib.suppress(FileNotFoundError), self.log_path.open(errors="replace") as f:
            for line in f:
                if not line.startswith("{"):
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("controller", "jobflow-controller") != "jobflow-controller":
                    continue  # the JobTemplate controller's lines
                counts[str(record.get("event", ""))] += 1
        return dict(counts)


class Sampler:
    """A thread that scrapes the controller and samples the load average until stopped."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller
        self.stop = threading.Event()
        self.load: list[float] = []
        self.thread = threading.Thread(target=self._run, name="sampler", daemon=True)

    def _run(self) -> None:
        ticks = 0
        while not self.stop.wait(SCRAPE_INTERVAL):
            self.controller.scrape_once()
            ticks += 1
            if ticks % 4 == 0:
                self.load.append(os.getloadavg()[0])


# -- the faults --------------------------------------------------------------------------------------


@dataclass
class Harness:
    plane: Any
    clientset: Clientset
    flows: list[dict[str, Any]]
    controller: Controller
    observer: Observer
    annotate_seconds: float
    hand_deleted: set[str] = field(default_factory=set)
    #: When a direct LIST first showed every JobFlow Succeed (see wait_for_recovery).
    listed_all_succeed_at: float | None = None

    def all_succeeded(self) -> bool:
        return self.observer.snapshot()["jobflows_succeed"] >= len(self.flows)


def fault_annotate(h: Harness) -> dict[str, Any]:
    """Merge-patch an annotation onto every JobFlow, batch after batch, 50 ms between passes."""
    stop = threading.Event()
    patched, failed = Counter[int](), Counter[int]()
    passes = Counter[int]()
    batches = [h.flows[i::ANNOTATE_THREADS] for i in range(ANNOTATE_THREADS)]

    def patch_batch(index: int) -> None:
        tick = 0
        while not stop.is_set():
            tick += 1
            for job_flow in batches[index]:
                if stop.is_set():
                    return
                md = job_flow["metadata"]
                body = {"metadata": {"annotations": {ANNOTATION: f"{index}-{tick}"}}}
                try:
                    h.clientset.job_flows(md["namespace"]).patch(md["name"], body)
                    patched[index] += 1
                except Exception:  # noqa: BLE001 - counted; the patcher carries on as kubectl loops would
                    failed[index] += 1
            passes[index] += 1
            stop.wait(ANNOTATE_PAUSE)

    threads = [threading.Thread(target=patch_batch, args=(i,), name=f"annotate-{i}") for i in range(ANNOTATE_THREADS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    deadline = started + h.annotate_seconds
    while time.monotonic() < deadline and not h.all_succeeded():
        if not h.controller.alive():
            break
        time.sleep(0.25)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    seconds = time.monotonic() - started
    total = sum(patched.values())
    return {
        "patcher_threads": ANNOTATE_THREADS,
        "pause_between_passes_ms": ANNOTATE_PAUSE * 1000,
        "seconds": round(seconds, 1),
        "stopped_early_because_all_succeed": seconds < h.annotate_seconds - 0.5,
        "patches": total,
        "patch_errors": sum(failed.values()),
        "patches_per_s": round(total / seconds, 1) if seconds else None,
        "mean_seconds_between_patches_of_one_jobflow": round(seconds / (sum(passes.values()) / ANNOTATE_THREADS), 3)
        if passes
        else None,
    }


def fault_apiserver_restarts(h: Harness) -> dict[str, Any]:
    downtime = []
    for i in range(RESTARTS):
        if i:
            time.sleep(RESTART_GAP)
        t0 = time.monotonic()
        h.plane.restart_apiserver()
        downtime.append(round(time.monotonic() - t0, 2))
        log(f"  kube-apiserver restart {i + 1}/{RESTARTS}: usable again after {downtime[-1]}s")
    return {"restarts": RESTARTS, "gap_seconds": RESTART_GAP, "restart_seconds": downtime}


def fault_controller_sigkill(h: Harness) -> dict[str, Any]:
    ready = []
    for i in range(RESTARTS):
        if i:
            time.sleep(RESTART_GAP)
        h.controller.kill()
        ready.append(round(h.controller.start(), 2))
        log(f"  SIGKILL {i + 1}/{RESTARTS}: new controller (pid {h.controller.pid}) ready after {ready[-1]}s")
    return {"kills": RESTARTS, "gap_seconds": RESTART_GAP, "seconds_until_new_process_ready": ready}


def fault_sigstop(h: Harness) -> dict[str, Any]:
    t0 = time.monotonic()
    h.controller.freeze()
    in_flight = h.observer.in_flight_jobs()
    # Spread over the Jobs in flight, so that the victims are in every phase short of Completed (the
    # newest have no status yet; the oldest may complete before their turn comes: they are counted
    # apart, see in_flight_jobs).
    count = min(HAND_DELETE_MAX, max(1, int(len(in_flight) * HAND_DELETE_FRACTION)))
    victims = in_flight[:: max(1, len(in_flight) // count)][:count]
    deleted = []
    for key in victims:
        namespace, name = key.split("/", 1)
        h.hand_deleted.add(key)  # before the request: a delete that times out may still have happened
        try:
            h.clientset.jobs(namespace).delete(name)
            deleted.append(key)
        except NotFoundError:
            h.hand_deleted.discard(key)  # it had gone already: nothing was deleted by hand
        except Exception as err:  # noqa: BLE001 - a Job that just finished may be gone already
            log(f"  could not delete {key}: {err}")
    revision = h.plane.compact_etcd()
    log(f"  controller frozen; {len(deleted)} Jobs deleted by hand, etcd compacted at revision {revision}")
    t1 = time.monotonic()
    h.plane.restart_apiserver()
    restart = time.monotonic() - t1
    h.controller.thaw()
    log(f"  kube-apiserver restarted in {restart:.1f}s; controller resumed after {time.monotonic() - t0:.1f}s")
    return {
        "jobs_in_flight_at_freeze": len(in_flight),
        "jobs_deleted_by_hand": len(deleted),
        "etcd_compacted_at_revision": revision,
        "apiserver_restart_seconds": round(restart, 2),
        "seconds_frozen": round(time.monotonic() - t0, 2),
    }


FAULT_FUNCS: dict[str, Callable[[Harness], dict[str, Any]]] = {
    "annotate": fault_annotate,
    "apiserver_restarts": fault_apiserver_restarts,
    "controller_sigkill": fault_controller_sigkill,
    "sigstop": fault_sigstop,
}


# -- the verdict -------------------------------------------------------------------------------------


def _retrying(fn: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + 30.0
    while True:
        try:
            return fn()
        except Exception as err:
            if time.monotonic() > deadline:
                raise BenchError(f"{what}: {err}") from err
            time.sleep(0.5)


def final_state(h: Harness) -> dict[str, Any]:
    """From direct LISTs: stranded JobFlows, status lists that disagree with the Jobs, ownership."""
    flows = _retrying(lambda: h.clientset.job_flows().list(), "list JobFlows")
    jobs = _retrying(lambda: h.clientset.jobs().list(), "list Jobs")
    by_flow: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for job in jobs:
        for ref in job["metadata"].get("ownerReferences") or []:
            if ref.get("kind") == "JobFlow" and ref.get("controller"):
                by_flow[f"{job['metadata']['namespace']}/{ref.get('uid')}"].append(job)
    stranded: dict[str, dict[str, Any]] = {}
    mismatched, not_controlled = [], []
    for job_flow in flows:
        md, status = job_flow["metadata"], job_flow.get("status") or {}
        ns, name = md["namespace"], md["name"]
        owned = by_flow.get(f"{ns}/{md['uid']}", [])
        expected = {f"{name}-{step['name']}" for step in job_flow["spec"]["flows"]}
        named = [j for j in jobs if j["metadata"]["namespace"] == ns and j["metadata"]["name"] in expected]
        not_controlled += [key_of(j) for j in named if j not in owned]
        actual = {j["metadata"]["name"]: phase_of(j) for j in owned}
        lists = {
            "Pending": "pendingJobs",
            "Running": "runningJobs",
            "Completed": "completedJobs",
            "Failed": "failedJobs",
            "Terminated": "terminatedJobs",
        }
        reported = {phase: sorted(status.get(field_name) or []) for phase, field_name in lists.items()}
        truth = {phase: sorted(n for n, p in actual.items() if p == phase) for phase in lists}
        if reported != truth:
            mismatched.append(f"{ns}/{name}")
        phase = phase_of(job_flow)
        if phase != "Succeed":
            stranded[f"{ns}/{name}"] = {
                "phase": phase or "<none>",
                "jobs": {n: actual.get(n, "<missing>") for n in sorted(expected)},
                "status_lists": {k: v for k, v in reported.items() if v},
            }
    return {
        "jobflows_listed": len(flows),
        "jobs_listed": len(jobs),
        "stranded": stranded,
        "status_mismatch": sorted(mismatched),
        "jobs_not_controlled_by_their_jobflow": sorted(not_controlled),
    }


def order_violations(h: Harness) -> dict[str, list[str]]:
    """Dependents this process saw ADDED before it saw all their targets Completed, or never.

    The flows with a Job deleted by hand are left out: their targets ran twice. Through a watch gap
    the relist delivers a flow's Jobs in name order, targets (a, b, c) before dependents.
    """
    skip = {key.rsplit("-", 1)[0] for key in h.hand_deleted}
    early, unseen = [], []
    with h.observer.lock:
        added, completed = dict(h.observer.job_added), dict(h.observer.first_completed)
    for job_flow in h.flows:
        ns, name = job_flow["metadata"]["namespace"], job_flow["metadata"]["name"]
        if f"{ns}/{name}" in skip:
            continue
        for step in job_flow["spec"]["flows"]:
            targets = [f"{ns}/{name}-{t}" for t in (step.get("dependsOn") or {}).get("targets") or []]
            dependent = f"{ns}/{name}-{step['name']}"
            if not targets or dependent not in added:
                continue
            if not all(t in completed for t in targets):
                unseen.append(dependent)
            elif added[dependent] < max(completed[t] for t in targets):
                early.append(dependent)
    return {"created_before_targets_completed": early, "created_with_targets_never_seen_completed": unseen}


def drop_warning_events(clientset: Clientset, namespaces: list[str]) -> int:
    total = 0
    for ns in namespaces:
        client = clientset.events(ns)
        for event in _retrying(client.list, "list events"):
            if event.get("type") == "Warning" and DROP_EVENT_MESSAGE in str(event.get("message") or ""):
                total += int(event.get("count") or 1)
    return total


def controller_metrics(totals: dict[str, dict[tuple[str, ...], float]]) -> dict[str, Any]:
    requests = totals.get("requests", {})
    by_code: dict[str, int] = defaultdict(int)
    for (method, code), value in requests.items():
        by_code[f"{method}/{code}"] += int(value)
    queue = {name: int(v) for (name,), v in totals.get("queue_adds", {}).items()}
    retries = {name: int(v) for (name,), v in totals.get("queue_retries", {}).items()}
    return {
        "requests_total": int(sum(requests.values())),
        "requests_409": int(sum(v for (_m, code), v in requests.items() if code == "409")),
        "requests_by_verb_and_code": dict(sorted(by_code.items())),
        "workqueue_adds": queue,
        "workqueue_retries": retries,
    }


# -- one fault, one run ------------------------------------------------------------------------------


def listed_succeed(h: Harness) -> int | None:
    """How many JobFlows a direct LIST shows ``Succeed`` (None when the LIST fails)."""
    try:
        return sum(1 for job_flow in h.clientset.job_flows().list() if phase_of(job_flow) == "Succeed")
    except Exception:  # noqa: BLE001 - the API may still be coming back: the next poll tries again
        return None


def wait_for_recovery(h: Harness, fault_end: float, stall: float) -> str:
    """Until every JobFlow is Succeed (the reason returned says which end came first).

    The stall clock starts no earlier than the fault's end: during an outage nothing can move, and
    that is the fault, not a stall. This process's own watches back off after an outage as any
    client-go reflector does (up to 30 s), so they can lag well behind the controller: a direct
    LIST every ``LIST_INTERVAL`` is the other witness. A change in its Succeed count is progress,
    and the first LIST showing every JobFlow Succeed is recorded in ``h.listed_all_succeed_at``;
    the wait then gives the watches ``WATCH_CATCH_UP`` seconds more to see it too, since the
    duplicate and ordering checks read what they saw.
    """
    last_report = last_list = time.monotonic()
    listed = -1
    while True:
        now = time.monotonic()
        snap = h.observer.snapshot()
        if snap["jobflows_succeed"] >= len(h.flows):
            return "all_succeed"
        if h.listed_all_succeed_at is not None and now - h.listed_all_succeed_at > WATCH_CATCH_UP:
            return f"all_succeed_by_list_but_the_benchmark_watch_lagged_over_{WATCH_CATCH_UP:.0f}s"
        if not h.controller.alive():
            return "controller_exited"
        if now - last_list >= LIST_INTERVAL:
            last_list = now
            count = listed_succeed(h)
            if count is not None and count != listed:
                listed = count
                with h.observer.lock:
                    h.observer.last_progress = max(h.observer.last_progress, now)
                if count >= len(h.flows) and h.listed_all_succeed_at is None:
                    h.listed_all_succeed_at = now
        with h.observer.lock:
            idle = now - max(h.observer.last_progress, fault_end)
        if idle > stall:
            return f"no_progress_for_{stall:.0f}s"
        if now - fault_end > RECOVERY_CAP:
            return f"cap_{RECOVERY_CAP:.0f}s"
        if now - last_report > 10.0:
            last_report = now
            log(f"  {snap} (a direct LIST: {listed} Succeed)")
        time.sleep(0.1)


def run_fault(fault: str, chains: int, diamonds: int, args: argparse.Namespace, watchdog: Watchdog) -> dict[str, Any]:
    log(f"== fault {fault}")
    namespaces = [f"chaos-{i}" for i in range(NAMESPACES)]
    flows = workload(namespaces, chains, diamonds)
    resync_flags = [f"--resync-period={args.resync:g}s"] if args.resync_supported else []
    with control_plane(watchdog, controller_manager=False) as plane:
        rest = rest_client(plane.kubeconfig_path, agent="bench-chaos")
        clientset = Clientset(rest)
        seed_namespaces(clientset, namespaces, "abcd", SCRIPT)
        kubeconfig = str(plane.kubeconfig_path)
        simulator = simulator_process(plane, namespaces)
        controller = Controller(kubeconfig, plane.root / "controller.log", [*CONTROLLER_FLAGS, *resync_flags])
        observer = Observer(clientset)
        sampler = Sampler(controller)
        watchdog.on_timeout(controller.stop)
        watchdog.on_timeout(simulator.stop)
        harness = Harness(
            plane, clientset, flows, controller, observer, QUICK_ANNOTATE_SECONDS if args.quick else ANNOTATE_SECONDS
        )
        try:
            simulator.start()
            controller.start()
            observer.start()
            sampler.thread.start()
            load_before = load_average()
            started = time.monotonic()
            create_job_flows(clientset, flows, CREATE_WORKERS, timeout=90.0)
            created = time.monotonic()
            log(f"created {len(flows)} JobFlows in {created - started:.1f}s")
            time.sleep(FAULT_DELAY)
            at_start = observer.snapshot()
            log(f"fault {fault} starts: {at_start}")
            fault_start = time.monotonic()
            details = FAULT_FUNCS[fault](harness)
            fault_end = time.monotonic()
            at_end = observer.snapshot()
            log(f"fault {fault} ended after {fault_end - fault_start:.1f}s: {at_end}")
            stall = STALL_RESYNCS * (args.resync if args.resync_supported else 30.0) + STALL_GRACE
            ended = wait_for_recovery(harness, fault_end, stall)
            log(f"recovery ended: {ended}: {observer.snapshot()}")
            sampler.stop.set()
            controller.scrape_once()
            state = final_state(harness)
            order = order_violations(harness)
            drop_events = drop_warning_events(clientset, namespaces)
            controller_alive = controller.alive()
            unexpected_exits = len(controller.pids) - 1 - controller.expected_exits + (0 if controller_alive else 1)
        except BenchError as err:
            raise BenchError(
                f"{err}\n--- controller log tail ---\n{controller.process.log_tail(30) if controller.process else ''}"
            ) from None
        finally:
            sampler.stop.set()
            observer.stop.set()
            controller.stop()
            simulator.stop()
            rest.close()
        logs = controller.log_counts()
        metrics = controller_metrics(controller.totals())

    with observer.lock:
        succeeded = dict(observer.flow_succeeded)
        uids = {k: list(v) for k, v in observer.job_uids.items()}
        deleted_phase = {k: observer.deleted_phase.get(k, "<delete not seen>") for k in harness.hand_deleted}
    duplicates = {k: len(v) for k, v in uids.items() if len(v) > 1 and k not in harness.hand_deleted}
    recreated = {k: len(v) for k, v in uids.items() if k in harness.hand_deleted}
    # The end: every JobFlow Succeed, by whichever witness saw it first (the watch stamps each flow
    # as it happens; the LIST is at most LIST_INTERVAL late, and is the one to trust after an outage,
    # when the watch may still be backing off). With some flow never Succeed: the last progress.
    watch_end = max(succeeded.values()) if len(succeeded) >= len(flows) else None
    ends = [t for t in (watch_end, harness.listed_all_succeed_at) if t is not None]
    end = min(ends) if ends and not state["stranded"] else observer.last_progress
    watch_lag = (
        round(watch_end - harness.listed_all_succeed_at, 2)
        if watch_end is not None and harness.listed_all_succeed_at is not None
        else None
    )
    stranded = state["stranded"]
    return {
        "fault": fault,
        "fault_details": details,
        "jobflows": len(flows),
        "flows_stranded": len(stranded),
        "stranded_examples": dict(list(stranded.items())[:5]),
        "stranded_by_phase": dict(Counter(v["phase"] for v in stranded.values())),
        "duplicate_job_creations": sum(n - 1 for n in duplicates.values()),
        "duplicate_examples": dict(list(duplicates.items())[:10]),
        "hand_deleted_jobs": len(harness.hand_deleted),
        "hand_deleted_jobs_created_more_than_twice": sorted(k for k, n in recreated.items() if n > 2),
        # A Job deleted after it completed is never run again (issue 14 (1)); one deleted while in
        # flight must be created again, or its flow's Succeed is a lie.
        "hand_deleted_jobs_by_phase_when_deleted": dict(Counter(deleted_phase.values())),
        "hand_deleted_completed_jobs_recreated": sorted(
            k for k, n in recreated.items() if n > 1 and deleted_phase[k] == "Completed"
        ),
        "hand_deleted_in_flight_jobs_not_recreated": sorted(
            k for k, n in recreated.items() if n < 2 and deleted_phase[k] != "Completed"
        ),
        "recovery_seconds": round(max(0.0, end - fault_end), 2),
        "recovery_ended_by": ended,
        "benchmark_watch_saw_all_succeed_seconds_after_the_list": watch_lag,
        "fault_seconds": round(fault_end - fault_start, 2),
        "total_seconds": round(end - started, 2),
        "create_jobflows_seconds": round(created - started, 2),
        "progress_at_fault_start": at_start,
        "progress_at_fault_end": at_end,
        "jobs_listed_at_end": state["jobs_listed"],
        "jobflows_status_lists_disagree_with_jobs": len(state["status_mismatch"]),
        "status_mismatch_examples": state["status_mismatch"][:10],
        "jobs_not_controlled_by_their_jobflow": state["jobs_not_controlled_by_their_jobflow"][:10],
        "dependents_created_before_targets_completed": len(order["created_before_targets_completed"]),
        "dependents_created_with_targets_never_seen_completed": len(order["created_with_targets_never_seen_completed"]),
        "order_violation_examples": (
            order["created_before_targets_completed"] + order["created_with_targets_never_seen_completed"]
        )[:10],
        "controller": {
            "processes": len(controller.pids),
            "alive_at_end": controller_alive,
            "unexpected_exits": unexpected_exits,
            **metrics,
            "dropped_requests_logged": logs.get(DROP_LOG_EVENT, 0),
            "drop_warning_events": drop_events,
            "requeues_after_conflict_logged": logs.get("requeue after conflict", 0),
            "requeues_logged": logs.get("requeue", 0),
        },
        "load_average_before": load_before,
        "load_average_1m_during": {
            "min": round(min(sampler.load), 2) if sampler.load else None,
            "max": round(max(sampler.load), 2) if sampler.load else None,
        },
    }


# -- main ---------------------------------------------------------------------------------------------


def resync_flag_supported() -> bool:
    result = subprocess.run(
        [str(VENV_BIN / "jobflow-controller"), "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    return "--resync-period" in result.stdout


def source_tree() -> dict[str, Any]:
    """Which controller was measured: it runs from this checkout, uncommitted edits included."""

    def git(*argv: str) -> str:
        return subprocess.run(["git", *argv], cwd=REPO_ROOT, capture_output=True, text=True, check=False).stdout

    dirty = git("status", "--porcelain", "--", "jobflow_controller", "informers", "workqueue", "cmd").splitlines()
    return {"commit": git("rev-parse", "--short", "HEAD").strip(), "uncommitted_product_files": len(dirty)}


def wait_for_binaries(timeout: float) -> None:
    """The control-plane binaries may still be being built by another process: wait, never build."""
    deadline = time.monotonic() + timeout
    announced = False
    while True:
        try:
            find_binaries(build=False)
            return
        except Exception as err:
            if time.monotonic() > deadline:
                raise BenchError(f"control-plane binaries still missing after {timeout:.0f}s: {err}") from err
            if not announced:
                log("waiting for the control-plane binaries to be built")
                announced = True
            time.sleep(5.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_CHAINS + QUICK_DIAMONDS} JobFlows, not 300")
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"comma-separated subset of {','.join(FAULTS)}")
    parser.add_argument("--resync", type=float, default=RESYNC, help="the controller's --resync-period, seconds")
    args = parser.parse_args()
    faults = [f for f in args.faults.split(",") if f]
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown:
        parser.error(f"unknown faults {unknown}; choose from {list(FAULTS)}")
    chains, diamonds = (QUICK_CHAINS, QUICK_DIAMONDS) if args.quick else (CHAINS, DIAMONDS)
    watchdog = Watchdog(QUICK_TIME_LIMIT if args.quick else TIME_LIMIT, "bench/chaos.py")
    args.resync_supported = resync_flag_supported()
    if not args.resync_supported:
        log("this jobflow-controller has no --resync-period flag yet: running without it")
    wall = time.monotonic()
    result: dict[str, Any] = {
        "benchmark": "chaos",
        **machine(),
        "source": source_tree(),
        "workload": {
            "chains_3_steps": chains,
            "diamonds_4_steps": diamonds,
            "jobflows": chains + diamonds,
            "jobs": 3 * chains + 4 * diamonds,
            "namespaces": NAMESPACES,
            "job_phase_script": SCRIPT,
            "fault_starts_seconds_after_last_create": FAULT_DELAY,
        },
        "controller_flags": [*CONTROLLER_FLAGS, f"--resync-period={args.resync:g}s" if args.resync_supported else ""],
        "resync_period_seconds": args.resync if args.resync_supported else None,
        "recovery_gives_up_after_no_progress_seconds": STALL_RESYNCS * (args.resync if args.resync_supported else 30.0)
        + STALL_GRACE,
        "runs": [],
    }
    result["controller_flags"] = [f for f in result["controller_flags"] if f]
    failed = False
    try:
        wait_for_binaries(600.0)
        for fault in faults:
            run = run_fault(fault, chains, diamonds, args, watchdog)
            result["runs"].append(run)
            failed = failed or run["flows_stranded"] > 0 or bool(run["hand_deleted_in_flight_jobs_not_recreated"])
    except BenchError as err:
        log(f"ERROR: {err}")
        result["error"] = str(err).splitlines()[0]
        failed = True
    finally:
        watchdog.cancel()
    result["flows_stranded_total"] = sum(r["flows_stranded"] for r in result["runs"])
    result["duplicate_job_creations_total"] = sum(r["duplicate_job_creations"] for r in result["runs"])
    result["wall_seconds"] = round(time.monotonic() - wall, 1)
    result["load_average_at_end"] = load_average()
    emit(result)
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
