"""The I/O of the lifecycle fields (docs/lifecycle.md): Jobs terminated by Command, and the TTL.

Composed into the syncer (sync.py), which calls it at two points of a sync: `terminate` after the
creates, and `expire` before the state machine for a finished JobFlow with a TTL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import structlog

from informers.errors import NotFoundError
from jobflow_controller.apis import FINISHED_PHASES, RetainPolicy, meta
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.command import CommandAction, job_command
from jobflow_controller.apis.lifecycle import Lifecycle
from jobflow_controller.apis.meta import format_time, parse_time
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.status_writer import StatusWriter
from jobflow_controller.jobflow.world import Termination
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ConflictError

if TYPE_CHECKING:
    from jobflow_controller.jobflow.controller import JobFlowQueue

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]

#: A Job's TerminateJob Command is sent again if the Job still runs this long after the last one
#: (Volcano deletes a Command once it acted on it; one lost is sent again, not one per sync).
COMMAND_RESEND_SECONDS = 30.0
#: The most Commands one sync sends (as `MAX_CREATES_PER_SYNC` for Jobs): terminating a 500-flow
#: JobFlow must not hold a worker for seconds; the JobFlow is queued again at once for the rest.
MAX_COMMANDS_PER_SYNC = 25


class LifecycleActions:
    """Sends the TerminateJob Commands and honours the TTL; the JobFlow goes back to the queue's `REACT`
    lane when the rest is due."""

    def __init__(self, clientset: Clientset, recorder: Any, queue: JobFlowQueue, status_writer: StatusWriter) -> None:
        self._clientset = clientset
        self._recorder = recorder
        self._queue = queue
        self._clock = queue.clock
        self._writer = status_writer
        self._lock = threading.Lock()
        #: Job uid -> when its last Command was sent (monotonic); pruned as entries age out.
        self._sent: dict[str, float] = {}

    def terminate(self, job_flow: Obj, terminations: list[Termination]) -> Exception | None:
        """One `TerminateJob` Command per Job (not again within COMMAND_RESEND_SECONDS), and its Warning."""
        first_err: Exception | None = None
        now = time.monotonic()
        with self._lock:
            self._sent = {uid: at for uid, at in self._sent.items() if now - at < COMMAND_RESEND_SECONDS}
        sent = 0
        for termination in terminations:
            uid = meta.uid(termination.job)
            with self._lock:
                if uid in self._sent:
                    continue
            if sent == MAX_COMMANDS_PER_SYNC:
                self._queue.react(meta.namespace(job_flow), meta.name(job_flow), 0.0)
                break
            sent += 1
            try:
                command = job_command(termination.job, CommandAction.TERMINATE_JOB)
                self._clientset.commands(meta.namespace(termination.job)).create(command)
            except Exception as err:  # noqa: BLE001 - the other Jobs still get theirs
                first_err = first_err or err
                continue
            with self._lock:
                self._sent[uid] = now
            if termination.warning is not None:
                w = termination.warning
                self._recorder.eventf(job_flow, c.EVENT_WARNING, w.reason, w.message_fmt, *w.args)
        return first_err

    def expire(self, job_flow: Obj) -> bool:
        """A finished JobFlow past its `ttlSecondsAfterFinished` is deleted (True); else it is requeued then.

        Its Jobs follow `jobRetainPolicy`: orphaned with `retain`, deleted with it with `delete`.
        A finished JobFlow without `finishedAt` (it ended before the TTL was set) is stamped now.
        """
        ttl = Lifecycle.of(job_flow).ttl_seconds_after_finished
        if ttl is None or jf.phase(job_flow) not in FINISHED_PHASES:
            return False
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        finished = jf.status(job_flow).get("finishedAt")
        if not finished:
            body = {**jf.status(job_flow), "finishedAt": format_time(self._clock.wall())}
            self._writer.write(job_flow, body, at_once=True)
            self._queue.react(ns, name, float(ttl))
            return False
        left = (parse_time(str(finished)) + timedelta(seconds=ttl) - self._clock.wall()).total_seconds()
        if left > 0:
            self._queue.react(ns, name, left)
            return False
        orphan = jf.job_retain_policy(job_flow) != RetainPolicy.DELETE
        try:
            self._clientset.job_flows(ns).delete(
                name, uid=meta.uid(job_flow) or None, propagation_policy="Orphan" if orphan else "Background"
            )
        except (NotFoundError, ConflictError):
            return True  # gone already, or another object holds the name now
        log.info(f"JobFlow {name} deleted: finished {ttl}s ago (ttlSecondsAfterFinished)", jobflow=f"{ns}/{name}")
        return True

    def forget(self, uids: set[str]) -> None:
        with self._lock:
            for uid in uids:
                self._sent.pop(uid, None)

    def __len__(self) -> int:
        """Jobs whose TerminateJob Command is remembered (the memory gauge reads it)."""
        with self._lock:
            return len(self._sent)

    # -- memories.py ------------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        """Nothing to do: a Command's memory ages out by itself (COMMAND_RESEND_SECONDS)."""

    def memory_sizes(self) -> dict[str, int]:
        return {"lifecycle_commands": len(self)}
