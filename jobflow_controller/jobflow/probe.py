"""`dependsOn.probe` as a dependency condition (ours: upstream stores the field and never reads it).

What a probe gates (docs/probe.md): upstream's design (docs/design/jobflow/README.md) lists probes
among the *dependency types* ("depend on the completion of the previous job or other status when
running ... conditional dependencies, probes"), so a probe is another way for a target to be met,
not an extra hurdle after Completed. An HTTP or TCP check against the pods of a Completed Job could
never pass (Volcano's pods have exited by then), so "Completed AND probes" would make two of the
three lists dead. Our rule, per target of a flow:

* the target is met when its Job is Completed (upstream's rule, unchanged), or
* when the probe entries that apply to it (those naming one of its Job's tasks) all pass.

A target no entry applies to keeps upstream's rule alone. An entry whose task no target's Job (or,
before the Job exists, JobTemplate) has is a spec error: a Warning `InvalidProbe` and that flow
waits. A flow without a probe is judged exactly as upstream judges it.

Network checks never run on a worker thread: `ProbeCache` runs them on a small bounded pool and
caches each result per (JobFlow uid, flow, check, pod) for `PROBE_POLL_PERIOD`; a worker only reads
the cache and, while a check is failing or still running, puts the JobFlow back with `add_after`.
A finished check also enqueues its JobFlow at once, so a pass is acted on without waiting for the
poll.
"""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from jobflow_controller import __version__
from jobflow_controller.apis import meta
from jobflow_controller.apis.probe import HttpGet, Probe, ProbeCheck, TaskStatus, TcpSocket
from workqueue import Clock

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]

#: kubelet's default `timeoutSeconds`: one second per HTTP or TCP check.
PROBE_TIMEOUT = 1.0
#: How long a check's result stands, and how soon a JobFlow waiting on a failing check is synced
#: again. kubelet's default `periodSeconds` is 10; a dependency gate wants a quicker answer, and one
#: check per pod and entry every 2 s costs little.
PROBE_POLL_PERIOD = 2.0
#: The pool that runs the checks: at most this many at once, whatever the number of JobFlows.
PROBE_WORKERS = 4
#: At most this many checks queued or running; more wait for a later sync (the poll brings it).
MAX_PENDING_CHECKS = 256
#: A result nobody asked for in this long is dropped (a JobFlow deleted, a target long Completed).
RESULT_EXPIRY = 10 * PROBE_POLL_PERIOD
#: kubelet reads at most this much of a probe's response body.
MAX_BODY_BYTES = 10 * 1024
USER_AGENT = f"jobflow-controller-probe/{__version__}"

#: The labels Volcano's job controller puts on every pod of a Job (batch/v1alpha1 `JobNameKey`,
#: `TaskSpecKey`): the Job's name and the task the pod belongs to.
JOB_NAME_LABEL = "volcano.sh/job-name"
TASK_SPEC_LABEL = "volcano.sh/task-spec"


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    message: str = ""


class ProbeRunner(Protocol):
    """Runs one network check; called on the probe pool, never on a worker."""

    def http_get(self, host: str, check: HttpGet, timeout: float) -> ProbeResult: ...

    def tcp_socket(self, host: str, check: TcpSocket, timeout: float) -> ProbeResult: ...


class NetworkProbeRunner:
    """kubelet's HTTP and TCP probes: GET succeeds on 2xx and 3xx (redirects are not followed, and a
    3xx counts as success, as kubelet counts a redirect it does not follow); TCP on a completed
    connect."""

    def http_get(self, host: str, check: HttpGet, timeout: float) -> ProbeResult:
        headers = {"User-Agent": USER_AGENT, "Accept": "*/*"}
        if check.header is not None:
            headers[check.header[0]] = check.header[1]
        conn = http.client.HTTPConnection(host, check.port, timeout=timeout)
        try:
            conn.request("GET", check.path or "/", headers=headers)
            response = conn.getresponse()
            response.read(MAX_BODY_BYTES)
            status = response.status
        except (OSError, http.client.HTTPException) as err:
            return ProbeResult(False, f"GET http://{host}:{check.port}{check.path or '/'}: {err or type(err).__name__}")
        finally:
            conn.close()
        if 200 <= status < 400:
            return ProbeResult(True, f"HTTP {status}")
        return ProbeResult(False, f"GET http://{host}:{check.port}{check.path or '/'}: HTTP {status}")

    def tcp_socket(self, host: str, check: TcpSocket, timeout: float) -> ProbeResult:
        try:
            with socket.create_connection((host, check.port), timeout=timeout):
                return ProbeResult(True)
        except OSError as err:
            return ProbeResult(False, f"dial tcp {host}:{check.port}: {err or type(err).__name__}")


@dataclass(frozen=True)
class ProbeKey:
    """One check of one pod for one flow of one JobFlow object (the uid: a re-created JobFlow starts afresh)."""

    job_flow_uid: str
    flow: str
    check: ProbeCheck
    pod: str


@dataclass
class _Entry:
    result: ProbeResult | None
    #: When the check that gave `result` was submitted (clock.now()).
    at: float
    last_asked: float


class ProbeCache:
    """Runs checks on a bounded pool and keeps each result for `ttl` seconds.

    `result(key, run, done)` never blocks: it returns a result younger than `ttl`, or None when there
    is none, after submitting `run` unless that key's check is already running or the pool has
    `max_pending` checks in hand. `done` is called (on the pool's thread) once the check finished.

    A result's age counts from when its check was submitted, not from when it finished: the sync
    that submitted it puts the JobFlow back after `ttl` (the poll period), and that later sync must
    find the result expired and check again, not reuse it for one more period.
    """

    def __init__(
        self,
        clock: Clock,
        *,
        executor: Executor | None = None,
        ttl: float = PROBE_POLL_PERIOD,
        max_pending: int = MAX_PENDING_CHECKS,
        expiry: float = RESULT_EXPIRY,
    ) -> None:
        self._clock = clock
        self._executor = executor or ThreadPoolExecutor(max_workers=PROBE_WORKERS, thread_name_prefix="probe")
        self._ttl = ttl
        self._max_pending = max_pending
        self._expiry = expiry
        self._lock = threading.Lock()
        self._entries: dict[ProbeKey, _Entry] = {}
        self._running: set[ProbeKey] = set()
        self._closed = False

    def result(self, key: ProbeKey, run: Callable[[], ProbeResult], done: Callable[[], None]) -> ProbeResult | None:
        now = self._clock.now()
        with self._lock:
            self._expire(now)
            entry = self._entries.get(key)
            if entry is not None:
                entry.last_asked = now
                if entry.result is not None and now - entry.at < self._ttl:
                    return entry.result
            if key in self._running or self._closed or len(self._running) >= self._max_pending:
                return None  # a result older than `ttl` is never used, even while it is re-checked
            self._running.add(key)
            if entry is None:
                self._entries[key] = _Entry(None, now, now)
        try:
            self._executor.submit(self._run, key, run, done, now)
        except RuntimeError:  # the pool was shut down under us: the process is stopping
            with self._lock:
                self._running.discard(key)
            return None
        with self._lock:  # an inline executor (tests) has finished already
            entry = self._entries.get(key)
            return entry.result if entry is not None and key not in self._running else None

    def _run(self, key: ProbeKey, run: Callable[[], ProbeResult], done: Callable[[], None], started: float) -> None:
        try:
            outcome = run()
        except Exception as err:  # noqa: BLE001 - a check that raised is a failed check
            outcome = ProbeResult(False, f"probe error: {err}")
        with self._lock:
            self._running.discard(key)
            entry = self._entries.get(key)
            if entry is None:
                return  # forgotten meanwhile (the JobFlow was deleted)
            entry.result, entry.at = outcome, started
        done()

    def _expire(self, now: float) -> None:
        stale = [k for k, e in self._entries.items() if k not in self._running and now - e.last_asked > self._expiry]
        for key in stale:
            del self._entries[key]

    def forget(self, job_flow_uid: str) -> None:
        """Drop every result of one JobFlow object (it was deleted)."""
        with self._lock:
            for key in [k for k in self._entries if k.job_flow_uid == job_flow_uid]:
                del self._entries[key]

    def pending(self) -> int:
        with self._lock:
            return len(self._running)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def shutdown(self) -> None:
        """Stop taking checks; the running ones end within their timeout (threads are not joined)."""
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)


class PodSource(Protocol):
    """The pods of one task of one Job, from a cache; None while that cache has not synced."""

    def task_pods(self, namespace: str, job_name: str, task: str) -> list[Obj] | None: ...


def job_tasks(job_or_template: Obj) -> dict[str, int]:
    """Task name -> replicas of a Volcano Job (or JobTemplate) spec."""
    spec = job_or_template.get("spec")
    tasks = spec.get("tasks") if isinstance(spec, Mapping) else None
    out: dict[str, int] = {}
    for task in tasks if isinstance(tasks, list) else []:
        if isinstance(task, Mapping):
            replicas = task.get("replicas")
            out[str(task.get("name") or "")] = replicas if isinstance(replicas, int) else 0
    return out


def task_phase_count(job: Obj, task: str, phase: str) -> int:
    """`status.taskStatusCount[task].phase[phase]`, 0 when absent."""
    status = job.get("status")
    counts = status.get("taskStatusCount") if isinstance(status, Mapping) else None
    entry = counts.get(task) if isinstance(counts, Mapping) else None
    phases = entry.get("phase") if isinstance(entry, Mapping) else None
    value = phases.get(phase) if isinstance(phases, Mapping) else None
    return value if isinstance(value, int) else 0


def ready_pods(pods: Sequence[Obj], job: Obj) -> list[tuple[str, str]]:
    """(pod uid or name, pod IP) of the pods the checks run against: controlled by this Job (by
    uid), Running, not being deleted, with an IP."""
    out = []
    for pod in pods:
        if not meta.is_controlled_by(pod, job) or meta.metadata(pod).get("deletionTimestamp"):
            continue
        status = pod.get("status")
        if not isinstance(status, Mapping) or status.get("phase") != "Running" or not status.get("podIP"):
            continue
        out.append((meta.uid(pod) or meta.name(pod), str(status["podIP"])))
    return out


class ProbeGate:
    """Decides whether a target's probes pass, from the Job, the pod cache and the probe cache.

    `requeue(namespace, name, delay)` is the controller's `queue.add_after` (delay 0: `queue.add`).
    """

    def __init__(
        self,
        cache: ProbeCache,
        runner: ProbeRunner,
        pods: PodSource,
        requeue: Callable[[str, str, float], None],
        *,
        timeout: float = PROBE_TIMEOUT,
        poll_period: float = PROBE_POLL_PERIOD,
    ) -> None:
        self.cache = cache
        self.runner = runner
        self.pods = pods
        self.requeue = requeue
        self.timeout = timeout
        self.poll_period = poll_period

    def target_met(self, job_flow: Obj, flow: str, probe: Probe, job: Obj) -> bool:
        """Whether the entries of `probe` that name a task of `job` all pass (False when none does).

        Every check is looked at (none short-circuits), so all of one target's network checks are
        started in one sync. A failing or unfinished network check puts the JobFlow back after the
        poll period; a task phase needs no poll, as a Job status change enqueues the JobFlow.
        """
        tasks = job_tasks(job)
        checks = probe.for_tasks(set(tasks))
        if not checks:
            return False
        met, poll = True, False
        for check in checks:
            replicas = max(1, tasks[check.task_name])
            if isinstance(check, TaskStatus):
                met = task_phase_count(job, check.task_name, check.phase) >= replicas and met
                continue
            passed = self._network_check_passed(job_flow, flow, check, job, replicas)
            met = passed and met
            poll = poll or not passed
        if poll:
            self.requeue(meta.namespace(job_flow), meta.name(job_flow), self.poll_period)
        return met

    def _network_check_passed(
        self, job_flow: Obj, flow: str, check: HttpGet | TcpSocket, job: Obj, replicas: int
    ) -> bool:
        """At least `replicas` Running pods of the task pass `check` (each pod checked on the pool)."""
        ns = meta.namespace(job_flow)
        pods = self.pods.task_pods(ns, meta.name(job), check.task_name)
        if pods is None:
            return False  # the pod cache is still filling
        passing = 0
        for pod_id, ip in ready_pods(pods, job):
            key = ProbeKey(meta.uid(job_flow), flow, check, f"{pod_id}@{ip}")
            outcome = self.cache.result(key, self._runner_for(check, ip), self._done(job_flow))
            if outcome is not None and outcome.ok:
                passing += 1
            elif outcome is not None:
                log.info(
                    f"probe {check.describe()} of flow {flow} failed on {ip}: {outcome.message}",
                    jobflow=f"{ns}/{meta.name(job_flow)}",
                )
        return passing >= replicas

    def _runner_for(self, check: HttpGet | TcpSocket, ip: str) -> Callable[[], ProbeResult]:
        if isinstance(check, HttpGet):
            return lambda: self.runner.http_get(ip, check, self.timeout)
        return lambda: self.runner.tcp_socket(ip, check, self.timeout)

    def _done(self, job_flow: Obj) -> Callable[[], None]:
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        return lambda: self.requeue(ns, name, 0.0)


def unmatched_tasks(probe: Probe, target_tasks: Mapping[str, set[str] | None]) -> list[str]:
    """The tasks `probe` names that no target has; [] while some target's tasks are unknown.

    `target_tasks` maps each target to the task names of its Job (or, before the Job exists, of its
    JobTemplate), or None when neither can be seen yet: then nothing can be said.
    """
    if any(tasks is None for tasks in target_tasks.values()):
        return []
    known: set[str] = set().union(*(t for t in target_tasks.values() if t is not None))
    return [task for task in probe.task_names() if task not in known]
