"""A stand-in for Volcano's job controller: drives `jobs.batch.volcano.sh` through scripted phases.

No Volcano runs here, yet the JobFlow controller only ever reacts to a Job's status. The simulator
watches Jobs and, through the status subresource, walks each one through the phase script on its
first task's pod-template annotation `sim.jobflow.volcano.sh/phases`, for example
`Pending:0.5s,Running:2s,Completed`, writing what Volcano writes: `state.phase` and its transition
time, the task pod counts, `retryCount` (bumped on `Restarting`) and `runningDuration` once the Job
finishes. A malformed script is reported as a Warning event on the Job, which is then left alone.
A Job that a JobFlow retry re-created (annotation `flow.volcano.sh/retry-attempt: N`) follows the
annotation `sim.jobflow.volcano.sh/phases-retry-N` instead when the task template has one, so a
test can script "fails, then succeeds on retry" (docs/retry.md).

It also does what Volcano's garbage collector (`gc-controller`, in the same controller manager) does
with `spec.ttlSecondsAfterFinished`: a Job Completed, Failed or Terminated is deleted that many
seconds after its `state.lastTransitionTime`, with Foreground propagation and a uid precondition,
once a fresh read confirms that the TTL has expired.

When a task's pod template carries `sim.jobflow.volcano.sh/pods: "true"` the simulator also does what
Volcano's job controller and a kubelet do with that task's pods, so `dependsOn.probe` HTTP and TCP
checks have something to reach: when the Job enters Running it creates the task's `replicas` pods
(`<job>-<task>-<index>`, Volcano's labels `volcano.sh/job-name`, `volcano.sh/task-spec`,
`volcano.sh/job-namespace`, `volcano.sh/task-index`, controlled by the Job) and writes their status
through the pods/status subresource: Running with pod IP 127.0.0.1 (no kubelet runs here, so a test
serves the probed port itself, on 127.0.0.1 only). When the Job finishes they become Succeeded
(Completing, Completed) or Failed (any other finish), as Volcano retains finished pods. Jobs
without the annotation get no pods, exactly as before.

It replaces Volcano's job controller and nothing else: every write goes to the real API server.
"""

from __future__ import annotations

import contextlib
import datetime
import heapq
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from informers import ResourceEventHandlerFuncs, SharedIndexInformer
from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import meta
from jobflow_controller.apis.retry import job_attempt
from jobflow_controller.apis.timeutil import format_duration, format_time, parse_duration, parse_time
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError

log = structlog.get_logger(__name__)

PHASES_ANNOTATION = "sim.jobflow.volcano.sh/phases"
#: The prefix of the per-attempt scripts: `<prefix>1` for the first retry's Job, and so on.
RETRY_PHASES_ANNOTATION_PREFIX = "sim.jobflow.volcano.sh/phases-retry-"
#: On a task's pod template: "true" makes the simulator create and run that task's pods.
PODS_ANNOTATION = "sim.jobflow.volcano.sh/pods"
#: The pod IP every simulated pod reports; what a test serves its probed ports on.
POD_IP = "127.0.0.1"
#: The node simulated pods are bound to: no scheduler runs, and a bound pod may report an IP.
POD_NODE = "volcano-sim-node"
#: Volcano's pod labels (batch/v1alpha1 `JobNameKey`, `TaskSpecKey`, `JobNamespaceKey`, `TaskIndex`).
JOB_NAME_LABEL = "volcano.sh/job-name"
TASK_SPEC_LABEL = "volcano.sh/task-spec"
JOB_NAMESPACE_LABEL = "volcano.sh/job-namespace"
TASK_INDEX_LABEL = "volcano.sh/task-index"
DEFAULT_SCRIPT = "Pending:0.1s,Running:0.5s,Completed"
#: The reason of the Warning event a malformed script earns.
REASON_INVALID_SCRIPT = "InvalidPhaseScript"
#: The reason of the Warning event on a Job whose simulated pod the API server refused.
REASON_POD_REFUSED = "SimulatedPodRefused"
COMPONENT = "volcano-job-simulator"

TERMINAL = frozenset({"Completed", "Failed", "Terminated", "Aborted"})
TRANSIENT = frozenset({"Pending", "Running", "Restarting", "Completing", "Aborting", "Terminating"})
#: Phases at which Volcano's killJob has run and recorded how long the Job ran.
FINISHING = frozenset({"Completing", "Aborting", "Terminating"}) | TERMINAL
#: What Volcano's garbage collector counts as finished (`isJobFinished`): Aborted is not.
GC_FINISHED = frozenset({"Completed", "Failed", "Terminated"})
#: The heap index of a TTL check rather than of a script step.
_EXPIRE = -1


class ScriptError(ValueError):
    """A phase script that cannot be followed; the message says where it is wrong."""


@dataclass(frozen=True)
class Step:
    phase: str
    seconds: float


def parse_script(text: str) -> list[Step]:
    """Parse `Phase:duration,...,TerminalPhase` into steps (the last one has no duration)."""
    parts = [p.strip() for p in text.split(",")]
    if not parts or parts == [""]:
        raise ScriptError("empty phase script")
    steps = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        phase, sep, duration = part.partition(":")
        phase = phase.strip()
        if last:
            if phase not in TERMINAL:
                raise ScriptError(f"the script must end in one of {sorted(TERMINAL)}, not {phase!r}")
            if sep:
                raise ScriptError(f"the last phase {phase!r} takes no duration")
            steps.append(Step(phase, 0.0))
            continue
        if phase not in TRANSIENT:
            raise ScriptError(f"{phase!r} at position {index + 1} is not one of {sorted(TRANSIENT)}")
        if not sep:
            raise ScriptError(f"{phase!r} at position {index + 1} needs a duration, e.g. {phase}:1s")
        try:
            seconds = parse_duration(duration)
        except ValueError as err:
            raise ScriptError(f"bad duration {duration!r} for {phase}: {err}") from None
        if seconds < 0:
            raise ScriptError(f"negative duration {duration!r} for {phase}")
        steps.append(Step(phase, seconds))
    return steps


def script_of(job: Mapping[str, Any]) -> str:
    """The first task's script for this Job's retry attempt, else its script, else the default."""
    tasks = (job.get("spec") or {}).get("tasks") or []
    if tasks:
        annotations = ((tasks[0].get("template") or {}).get("metadata") or {}).get("annotations") or {}
        attempt = job_attempt(job)
        if attempt > 0 and f"{RETRY_PHASES_ANNOTATION_PREFIX}{attempt}" in annotations:
            return str(annotations[f"{RETRY_PHASES_ANNOTATION_PREFIX}{attempt}"])
        if PHASES_ANNOTATION in annotations:
            return str(annotations[PHASES_ANNOTATION])
    return DEFAULT_SCRIPT


def job_status(job: Mapping[str, Any], phase: str, now: datetime.datetime, retry_count: int) -> dict[str, Any]:
    """The status Volcano's job controller would write for a Job entering `phase`."""
    tasks = (job.get("spec") or {}).get("tasks") or []
    counts = {"pending": 0, "running": 0, "succeeded": 0, "failed": 0, "terminating": 0, "unknown": 0}
    pod_phase = {
        "Pending": "Pending",
        "Restarting": "Pending",
        "Running": "Running",
        "Completing": "Succeeded",
        "Completed": "Succeeded",
        "Failed": "Failed",
        "Aborting": "Running",
        "Terminating": "Running",
    }.get(phase)
    counter = {"Pending": "pending", "Running": "running", "Succeeded": "succeeded", "Failed": "failed"}
    task_status_count: dict[str, Any] = {}
    for task in tasks:
        replicas = int(task.get("replicas") or 0)
        if pod_phase and replicas:
            task_status_count[str(task.get("name") or "")] = {"phase": {pod_phase: replicas}}
            counts[counter[pod_phase]] += replicas
    if phase in ("Aborting", "Terminating"):
        counts["terminating"], counts["running"] = counts["running"], 0
    status: dict[str, Any] = {
        "state": {"phase": phase, "lastTransitionTime": format_time(now)},
        "minAvailable": int((job.get("spec") or {}).get("minAvailable") or 0),
        "retryCount": retry_count,
        **counts,
    }
    if task_status_count:
        status["taskStatusCount"] = task_status_count
    created = meta.creation_timestamp(job)
    if phase in FINISHING and created:
        status["runningDuration"] = format_duration(max(0.0, (now - parse_time(created)).total_seconds()))
    return status


def pod_tasks(job: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The tasks whose pod template asks for simulated pods (`sim.jobflow.volcano.sh/pods: "true"`)."""
    out = []
    for task in (job.get("spec") or {}).get("tasks") or []:
        annotations = ((task.get("template") or {}).get("metadata") or {}).get("annotations") or {}
        if str(annotations.get(PODS_ANNOTATION, "")).lower() == "true":
            out.append(task)
    return out


def task_pods(job: Mapping[str, Any], task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pods Volcano's job controller creates for one task: `replicas` of them, named
    `<job>-<task>-<index>`, labelled and annotated as Volcano does, controlled by the Job."""
    job_name, namespace, task_name = meta.name(job), meta.namespace(job), str(task.get("name") or "")
    template = task.get("template") or {}
    owner = {
        "apiVersion": str(job.get("apiVersion") or "batch.volcano.sh/v1alpha1"),
        "kind": "Job",
        "name": job_name,
        "uid": meta.uid(job),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    pods = []
    for index in range(int(task.get("replicas") or 0)):
        labels = {
            **((template.get("metadata") or {}).get("labels") or {}),
            JOB_NAME_LABEL: job_name,
            TASK_SPEC_LABEL: task_name,
            JOB_NAMESPACE_LABEL: namespace,
            TASK_INDEX_LABEL: str(index),
        }
        annotations = {
            **((template.get("metadata") or {}).get("annotations") or {}),
            JOB_NAME_LABEL: job_name,
            TASK_SPEC_LABEL: task_name,
        }
        spec = {**(template.get("spec") or {}), "nodeName": POD_NODE}
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{job_name}-{task_name}-{index}",
                    "namespace": namespace,
                    "labels": labels,
                    "annotations": annotations,
                    "ownerReferences": [owner],
                },
                "spec": spec,
            }
        )
    return pods


def pod_status(job_phase: str, now: datetime.datetime) -> dict[str, Any] | None:
    """The status a kubelet would report for the pods of a Job entering `job_phase` (None: leave them)."""
    if job_phase == "Running":
        ready = {"type": "Ready", "status": "True", "lastTransitionTime": format_time(now)}
        return {
            "phase": "Running",
            "hostIP": POD_IP,
            "hostIPs": [{"ip": POD_IP}],
            "podIP": POD_IP,
            "podIPs": [{"ip": POD_IP}],
            "startTime": format_time(now),
            "conditions": [ready],
        }
    if job_phase in ("Completing", "Completed"):
        return {"phase": "Succeeded", "conditions": [{"type": "Ready", "status": "False"}]}
    if job_phase in FINISHING:
        return {"phase": "Failed", "conditions": [{"type": "Ready", "status": "False"}]}
    return None


def expires_in(job: Mapping[str, Any], now: datetime.datetime) -> float | None:
    """Seconds until Volcano's garbage collector deletes `job` (<= 0: due now), None if it never will.

    `needsCleanup`: `spec.ttlSecondsAfterFinished` is set and the Job is finished; the clock starts
    at `status.state.lastTransitionTime`. A Job already being deleted is left alone.
    """
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if ttl is None or meta.metadata(job).get("deletionTimestamp") or vcjob.phase(job) not in GC_FINISHED:
        return None
    finished = ((job.get("status") or {}).get("state") or {}).get("lastTransitionTime")
    if not finished:
        return None  # Volcano: "unable to find the time when the Job finished"
    return (parse_time(str(finished)) - now).total_seconds() + int(ttl)


class JobSimulator:
    """Watches every Volcano Job and plays its phase script, one timer heap for all Jobs."""

    def __init__(self, clientset: Clientset, recorder: Any = None, namespace: str | None = None) -> None:
        self.clientset = clientset
        self.recorder = recorder
        self.informer = SharedIndexInformer(clientset.jobs(namespace).lister_watcher(), resync_period=0)
        self.informer.add_event_handler(ResourceEventHandlerFuncs(add_func=self._on_add, update_func=self._on_update))
        self._heap: list[tuple[float, int, str, int]] = []
        self._seq = 0
        self._cond = threading.Condition()
        self._scheduled: dict[str, int] = {}  # job uid -> index of the step already scheduled
        self._plans: dict[str, tuple[str, str, list[Step]]] = {}  # uid -> (namespace, name, steps)
        self._expiring: dict[str, tuple[str, str]] = {}  # uid -> (namespace, name): a TTL check is due

    # -- event handlers: decide the next step, never block -------------------------------------
    def _on_add(self, job: Any, is_in_initial_list: bool = False) -> None:
        self._observe(job)

    def _on_update(self, old: Any, new: Any) -> None:
        self._observe(new)

    def _observe(self, job: Mapping[str, Any]) -> None:
        uid = meta.uid(job)
        if uid:
            self._observe_ttl(uid, job)
        if not uid or uid in self._scheduled:
            return
        try:
            steps = parse_script(script_of(job))
        except ScriptError as err:
            self._scheduled[uid] = -1
            log.warning("invalid phase script", job=f"{meta.namespace(job)}/{meta.name(job)}", error=str(err))
            if self.recorder is not None:
                self.recorder.event(job, "Warning", REASON_INVALID_SCRIPT, f"{PHASES_ANNOTATION}: {err}")
            return
        current = vcjob.phase(job)
        if current in TERMINAL:
            self._scheduled[uid] = len(steps)
            return
        # Resume a Job a previous simulator left mid-script: carry on after its current phase.
        index = next((i + 1 for i, s in enumerate(steps) if s.phase == current), 0)
        delay = steps[index - 1].seconds if index > 0 else 0.0
        self._plans[uid] = (meta.namespace(job), meta.name(job), steps)
        self._schedule(uid, index, delay)

    def _observe_ttl(self, uid: str, job: Mapping[str, Any]) -> None:
        """The garbage collector's add and update handlers: a finished Job with a TTL gets its check."""
        left = expires_in(job, datetime.datetime.now(datetime.UTC))
        with self._cond:
            if left is None or uid in self._expiring:
                return
            self._expiring[uid] = (meta.namespace(job), meta.name(job))
        self._push(uid, _EXPIRE, max(0.0, left))

    def _schedule(self, uid: str, index: int, delay: float) -> None:
        with self._cond:
            self._scheduled[uid] = index
        self._push(uid, index, delay)

    def _push(self, uid: str, index: int, delay: float) -> None:
        with self._cond:
            self._seq += 1
            heapq.heappush(self._heap, (time.monotonic() + delay, self._seq, uid, index))
            self._cond.notify()

    # -- the driver thread -----------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        informer_thread = threading.Thread(target=self.informer.run, args=(stop,), name="sim-informer", daemon=True)
        informer_thread.start()
        waker = threading.Thread(target=self._wake_on_stop, args=(stop,), daemon=True)
        waker.start()
        self._drive(stop)
        informer_thread.join(timeout=10)

    def _wake_on_stop(self, stop: threading.Event) -> None:
        stop.wait()
        with self._cond:
            self._cond.notify_all()

    def _drive(self, stop: threading.Event) -> None:
        while not stop.is_set():
            with self._cond:
                if not self._heap:
                    self._cond.wait(timeout=1.0)
                    continue
                due, _, uid, index = self._heap[0]
                wait = due - time.monotonic()
                if wait > 0:
                    self._cond.wait(timeout=min(wait, 1.0))
                    continue
                heapq.heappop(self._heap)
            self._step(uid, index)

    def _expire(self, uid: str) -> None:
        """`processJob`: re-read the Job; delete it if its TTL has truly expired, else look again later."""
        with self._cond:
            target = self._expiring.get(uid)
        if target is None:
            return
        namespace, name = target
        jobs = self.clientset.jobs(namespace)
        try:
            fresh = jobs.get(name)
            left = expires_in(fresh, datetime.datetime.now(datetime.UTC)) if meta.uid(fresh) == uid else None
            if left is not None and left > 0:
                self._push(uid, _EXPIRE, left)
                return
            if left is not None:
                jobs.delete(name, propagation_policy="Foreground", uid=uid)
        except (NotFoundError, ConflictError):
            pass  # gone already, or the name now holds another Job: nothing of this one left to delete
        except Exception as err:  # noqa: BLE001 - retried, as the garbage collector's queue does
            log.warning("TTL delete failed, retrying", job=f"{namespace}/{name}", error=str(err))
            self._push(uid, _EXPIRE, 0.5)
            return
        with self._cond:
            self._expiring.pop(uid, None)

    def _sync_pods(self, job: Mapping[str, Any], phase: str, now: datetime.datetime) -> None:
        """Create the pods of the tasks that ask for them when the Job runs; report their status."""
        tasks = pod_tasks(job)
        status = pod_status(phase, now) if tasks else None
        if status is None:
            return
        pods = self.clientset.pods(meta.namespace(job))
        where = f"{meta.namespace(job)}/{meta.name(job)}"
        for task in tasks:
            for pod in task_pods(job, task):
                try:
                    if phase == "Running":
                        with contextlib.suppress(AlreadyExistsError):  # a restarted simulator
                            pods.create(pod)
                    pods.patch_status(meta.name(pod), {"status": status})
                except NotFoundError:
                    continue  # never created (the Job finished before it ran), or deleted
                except ApiStatusError as err:
                    # A pod the API server refuses (a template without containers): say so on the
                    # Job and go on; the Job's own phases are unaffected.
                    log.warning("simulated pod refused", job=where, pod=meta.name(pod), error=str(err))
                    if self.recorder is not None:
                        self.recorder.event(job, "Warning", REASON_POD_REFUSED, f"pod {meta.name(pod)}: {err}")
            log.info("simulated pods", job=where, task=task.get("name"), phase=phase)

    def _step(self, uid: str, index: int) -> None:
        if index == _EXPIRE:
            self._expire(uid)
            return
        plan = self._plans.get(uid)
        if plan is None:
            return
        namespace, name, steps = plan
        step = steps[index]
        jobs = self.clientset.jobs(namespace)
        try:
            job = jobs.get(name)
            if meta.uid(job) != uid:
                return  # deleted and re-created under the same name: the new one has its own plan
            retries = int((job.get("status") or {}).get("retryCount") or 0)
            if step.phase == "Restarting":
                retries += 1
            now = datetime.datetime.now(datetime.UTC)
            # A JSON patch replaces the whole status: a merge patch would keep the counts of the
            # phases the Job has left inside taskStatusCount.
            patch = [{"op": "add", "path": "/status", "value": job_status(job, step.phase, now, retries)}]
            jobs.patch_status(name, patch, content_type="application/json-patch+json")
            self._sync_pods(job, step.phase, now)
        except NotFoundError:
            self._plans.pop(uid, None)
            return
        except ConflictError:
            self._schedule(uid, index, 0.05)
            return
        except Exception as err:  # noqa: BLE001 - the simulator must outlive one failed write
            log.warning("status write failed, retrying", job=f"{namespace}/{name}", error=str(err))
            self._schedule(uid, index, 0.5)
            return
        if index + 1 < len(steps):
            self._schedule(uid, index + 1, step.seconds)
        else:
            self._plans.pop(uid, None)
