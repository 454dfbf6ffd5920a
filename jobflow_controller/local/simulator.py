"""A stand-in for Volcano's job controller: drives `jobs.batch.volcano.sh` through scripted phases.

No Volcano runs here, yet the JobFlow controller only ever reacts to a Job's status. The simulator
watches Jobs and, through the status subresource, walks each one through its phase script
(`phase_script`: the annotation `sim.jobflow.volcano.sh/phases`, and the status written for each
phase). A malformed script is reported as a Warning event on the Job, which is then left alone.
Tasks that ask for pods get them (`simulated_pods`), so that probes have something to reach.

It takes Volcano's Commands (`bus.volcano.sh`) as Volcano's job controller does: a Command whose
target is a Job is deleted, a Normal `CommandIssued` event is recorded on the Job, and the action
runs through the Job's state machine (`job_commands`): `TerminateJob` ends a Job Terminated,
`AbortJob` Aborted, and `ResumeJob` runs an aborted Job again. What the Command changes replaces
the rest of the Job's script.

It also does what Volcano's garbage collector (`gc-controller`, in the same controller manager) does
with `spec.ttlSecondsAfterFinished`: a Job Completed, Failed or Terminated is deleted that many
seconds after its `state.lastTransitionTime`, with Foreground propagation and a uid precondition,
once a fresh read confirms that the TTL has expired.

It replaces Volcano's job controller and nothing else: every write goes to the real API server.
"""

from __future__ import annotations

import datetime
import heapq
import queue
import threading
import time
from collections.abc import Mapping
from typing import Any

import structlog

from informers import ResourceEventHandlerFuncs, SharedIndexInformer
from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.apis import command as vccommand
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import meta
from jobflow_controller.apis.meta import parse_time
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ConflictError
from jobflow_controller.local.job_commands import command_steps, max_retry, resume_point
from jobflow_controller.local.phase_script import (
    FINISHING,
    PHASES_ANNOTATION,
    TERMINAL,
    ScriptError,
    Step,
    job_status,
    parse_script,
    script_of,
)
from jobflow_controller.local.simulated_pods import create_pod, finished_status, pod_status, pod_tasks, task_pods

log = structlog.get_logger(__name__)

#: The reason of the Warning event a malformed script earns.
REASON_INVALID_SCRIPT = "InvalidPhaseScript"
#: The reason of the Warning event on a Job whose simulated pod the API server refused.
REASON_POD_REFUSED = "SimulatedPodRefused"
COMPONENT = "volcano-job-simulator"

#: What Volcano's garbage collector counts as finished (`isJobFinished`): Aborted is not.
GC_FINISHED = frozenset({"Completed", "Failed", "Terminated"})
#: The heap index of a TTL check rather than of a script step.
_EXPIRE = -1
#: The heap index of a Command to take (the key is then the Command's uid).
_COMMAND = -2


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

    def __init__(
        self, clientset: Clientset, recorder: Any = None, namespace: str | None = None, workers: int = 1
    ) -> None:
        """`workers` above 1 plays the due steps on that many threads, each Job's always on the same
        one (its steps stay in order), as Volcano's job controller syncs Jobs on several workers:
        a benchmark with thousands of Jobs is then not paced by one thread's round trips."""
        self.clientset = clientset
        self._lanes: list[queue.SimpleQueue[tuple[str, int, int] | None]] = (
            [queue.SimpleQueue() for _ in range(workers)] if workers > 1 else []
        )
        self.recorder = recorder
        self.informer = SharedIndexInformer(clientset.jobs(namespace).lister_watcher(), resync_period=0)
        self.informer.add_event_handler(ResourceEventHandlerFuncs(add_func=self._on_add, update_func=self._on_update))
        self.command_informer = SharedIndexInformer(clientset.commands(namespace).lister_watcher(), resync_period=0)
        self.command_informer.add_event_handler(ResourceEventHandlerFuncs(add_func=self._on_command))
        self._heap: list[tuple[float, int, str, int, int]] = []  # (due, seq, key, index, plan version)
        self._seq = 0
        self._cond = threading.Condition()
        self._scheduled: dict[str, int] = {}  # job uid -> index of the step already scheduled
        self._plans: dict[str, tuple[str, str, list[Step]]] = {}  # uid -> (namespace, name, steps)
        self._expiring: dict[str, tuple[str, str]] = {}  # uid -> (namespace, name): a TTL check is due
        self._versions: dict[str, int] = {}  # job uid -> its plan's version: a Command replaces the plan
        self._commands: dict[str, Mapping[str, Any]] = {}  # command uid -> the Command, until taken
        self._taken: set[str] = set()  # command uids deleted, whose Job is still to be read

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
        steps, index = resume_point(current, steps)
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

    def _on_command(self, command: Any, is_in_initial_list: bool = False) -> None:
        """Volcano's filtered add handler: a Command aimed at a Job is queued to be taken."""
        uid = meta.uid(command)
        if not uid or not vccommand.targets_a_job(command):
            return
        with self._cond:
            self._commands[uid] = command
        self._push(uid, _COMMAND, 0.0)

    def _schedule(self, uid: str, index: int, delay: float) -> None:
        with self._cond:
            self._scheduled[uid] = index
        self._push(uid, index, delay)

    def _push(self, key: str, index: int, delay: float) -> None:
        with self._cond:
            self._seq += 1
            version = self._versions.get(key, 0)
            heapq.heappush(self._heap, (time.monotonic() + delay, self._seq, key, index, version))
            self._cond.notify()

    # -- the driver thread -----------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        informer_thread = threading.Thread(target=self.informer.run, args=(stop,), name="sim-informer", daemon=True)
        informer_thread.start()
        command_thread = threading.Thread(
            target=self.command_informer.run, args=(stop,), name="sim-command-informer", daemon=True
        )
        command_thread.start()
        waker = threading.Thread(target=self._wake_on_stop, args=(stop,), daemon=True)
        waker.start()
        lanes = self._start_lanes()
        self._drive(stop)
        self._stop_lanes(lanes)
        informer_thread.join(timeout=10)
        command_thread.join(timeout=10)

    def _start_lanes(self) -> list[threading.Thread]:
        lanes = [
            threading.Thread(target=self._play_lane, args=(lane,), name=f"sim-worker-{i}", daemon=True)
            for i, lane in enumerate(self._lanes)
        ]
        for thread in lanes:
            thread.start()
        return lanes

    def _stop_lanes(self, lanes: list[threading.Thread]) -> None:
        """Each lane plays what it was handed, then ends."""
        for lane in self._lanes:
            lane.put(None)
        for thread in lanes:
            thread.join(timeout=10)

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
                due, _, key, index, version = self._heap[0]
                wait = due - time.monotonic()
                if wait > 0:
                    self._cond.wait(timeout=min(wait, 1.0))
                    continue
                heapq.heappop(self._heap)
                if self._replaced(key, index, version):
                    continue
            if self._lanes:
                self._lanes[hash(key) % len(self._lanes)].put((key, index, version))
            else:
                self._play(key, index)

    def _play_lane(self, lane: queue.SimpleQueue[tuple[str, int, int] | None]) -> None:
        while (item := lane.get()) is not None:
            key, index, version = item
            with self._cond:
                replaced = self._replaced(key, index, version)  # since the driver handed it over
            if not replaced:
                self._play(key, index)

    def _replaced(self, key: str, index: int, version: int) -> bool:
        """A step of a plan a Command has replaced since it was scheduled (`self._cond` held)."""
        return index >= 0 and version != self._versions.get(key, 0)

    def _play(self, key: str, index: int) -> None:
        if index == _COMMAND:
            self._take_command(key)
        else:
            self._step(key, index)

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

    def _take_command(self, key: str) -> None:
        """Volcano's `processNextCommand`: delete the Command (once taken, never again), say so on the Job, act.

        A Command already gone was taken by someone else: dropped, as upstream does. A failed delete
        is retried; so is a failed read of the Job once the Command is deleted.
        """
        with self._cond:
            command = self._commands.get(key)
        if command is None:
            return
        namespace, job_name = meta.namespace(command), vccommand.target_name(command)
        try:
            if key not in self._taken:
                try:
                    self.clientset.commands(namespace).delete(meta.name(command))
                except NotFoundError:
                    self._forget_command(key)
                    return
                self._taken.add(key)
            job = self.clientset.jobs(namespace).get(job_name)
        except NotFoundError:
            job = None  # no such Job: upstream logs that it cannot find it, and nothing happens
        except Exception as err:  # noqa: BLE001 - retried, as the command queue's rate limiter does
            log.warning("command not taken yet, retrying", command=f"{namespace}/{meta.name(command)}", error=str(err))
            self._push(key, _COMMAND, 0.5)
            return
        self._forget_command(key)
        if job is not None:
            self._apply_command(job, vccommand.command_action(command))

    def _forget_command(self, key: str) -> None:
        with self._cond:
            self._commands.pop(key, None)
        self._taken.discard(key)

    def _apply_command(self, job: Mapping[str, Any], action: str) -> None:
        """The Job's state takes the action: what it changes replaces the rest of the Job's plan at once."""
        if self.recorder is not None:
            message = vccommand.command_issued_message(action)
            self.recorder.event(job, "Normal", vccommand.REASON_COMMAND_ISSUED, message)
        try:
            script = parse_script(script_of(job))
        except ScriptError:
            script = []  # a Job left alone for its script: a restart leaves it Pending
        retries = int((job.get("status") or {}).get("retryCount") or 0)
        steps = command_steps(vcjob.phase(job), action, retries, max_retry(job), script)
        log.info("command", job=f"{meta.namespace(job)}/{meta.name(job)}", action=action, phases=bool(steps))
        if not steps:
            return
        uid = meta.uid(job)
        with self._cond:
            self._versions[uid] = self._versions.get(uid, 0) + 1
            self._plans[uid] = (meta.namespace(job), meta.name(job), steps)
            self._scheduled[uid] = 0
        self._step(uid, 0)

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
                        create_pod(pods, pod)
                    pods.patch_status(meta.name(pod), {"status": finished_status(job, task, pod, status)})
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
            # Pods end before their Job does (a reader of their termination messages finds them ended).
            if step.phase in FINISHING:
                self._sync_pods(job, step.phase, now)
            jobs.patch_status(name, patch, content_type="application/json-patch+json")
            if step.phase not in FINISHING:
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
