"""Which of a JobFlow's Jobs already ran to completion, so that none of them is ever run again.

A Job a JobFlow created may be deleted once it finished: by hand, or by Volcano's garbage collector
when its template sets `ttlSecondsAfterFinished`. Upstream's deploy re-creates any missing Job whose
targets are Completed (volcano-jobflow.md §2.18 #7), and with our Job delete handler (deviation 8)
that happened at once, so a TTL'd flow re-ran for ever. A Job that the JobFlow's status records as
Completed is done: it is never created again and it keeps satisfying its dependents.

The record is the status itself: a `jobStatusList` entry whose state is Completed (upstream never
prunes that list, so the entry outlives the Job), or the name in `completedJobs`. Both belong to
the JobFlow object they were read from; a JobFlow deleted and re-created under the same name starts
with an empty status, so nothing of the old one counts.

`DeletedJobs` bridges the moment before the status records it: the informer hands the Job delete
handler the Job's last state, and a Job seen deleted while Completed is remembered (per JobFlow
uid) for as long as that JobFlow lives. The next status write records it in `jobStatusList`, which
is what survives a restart; the memory covers a Job deleted right after it completed (TTL 0, or a
busy queue) before any sync saw it Completed, and a JobFlow cache that does not show yet the status
write that recorded it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis import JobPhase, meta
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION, RECREATING, job_attempt

Obj = Mapping[str, Any]


def recorded_completed(job_flow: Obj) -> set[str]:
    """The Job names that this JobFlow object's status records as Completed.

    Not those a re-run (docs/lifecycle.md) is creating again: their entry's last history is `Rerun`.
    """
    status = jf.status(job_flow)
    names: set[str] = set()
    again: set[str] = set()
    for entry in jf.job_status_list(job_flow):
        name = str(entry.get("name") or "")
        if _recreating(entry):
            again.add(name)
        elif entry.get("state") == JobPhase.COMPLETED:
            names.add(name)
    completed = status.get("completedJobs")
    if isinstance(completed, list):
        names.update(str(n) for n in completed)
    names.discard("")
    return names - again


def replaced_since_deleted(job_flow: Obj, remembered: Mapping[str, Obj]) -> set[str]:
    """The remembered Jobs that a retry or a re-run has since replaced (their attempt is behind).

    A re-run deletes Completed Jobs to create them again; the memory of such a Job must not make
    its successor count as Completed.
    """
    if not remembered:
        return set()
    counts: dict[str, int] = {}
    for entry in jf.job_status_list(job_flow):
        name = str(entry.get("name") or "")
        histories = entry.get("runningHistories")
        if name in remembered and name not in counts and isinstance(histories, list):
            counts[name] = sum(1 for h in histories if isinstance(h, Mapping) and h.get("state") in RECREATING)
    return {n for n, job in remembered.items() if counts.get(n, 0) > job_attempt(job)}


def _recreating(entry: Mapping[str, Any]) -> bool:
    histories = entry.get("runningHistories")
    if not isinstance(histories, list) or not histories or not isinstance(histories[-1], Mapping):
        return False
    return histories[-1].get("state") in RECREATING


def status_view(job: Obj) -> dict[str, Any]:
    """What the status keeps of a deleted Job (its `jobStatusList` entry's inputs), and nothing else.

    A whole Job (its tasks' pod templates) is kilobytes; this is the name, the creation time and
    four status fields, so remembering a deleted Job costs little.
    """
    status = job.get("status")
    status = status if isinstance(status, Mapping) else {}
    kept = {k: status[k] for k in ("state", "runningDuration", "retryCount") if k in status}
    metadata: dict[str, Any] = {"name": meta.name(job), "namespace": meta.namespace(job)}
    if meta.creation_timestamp(job):
        metadata["creationTimestamp"] = meta.creation_timestamp(job)
    annotations = meta.metadata(job).get("annotations")
    if isinstance(annotations, Mapping) and ATTEMPT_ANNOTATION in annotations:
        metadata["annotations"] = {ATTEMPT_ANNOTATION: annotations[ATTEMPT_ANNOTATION]}
    return {"metadata": metadata, "status": kept}


class DeletedJobs:
    """The last state of each Job seen deleted while Completed, by (namespace, JobFlow name, uid).

    Bounded by the live JobFlows' flows: only a Job whose controlling JobFlow is still in the cache
    under the same uid is remembered, only its `status_view`, and an entry goes once the stored
    status records the Job (`forget_recorded`), or with its JobFlow (deleted or re-created).
    Shared by the informer's handler thread and the workers, hence the lock.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, str], dict[str, dict[str, Obj]]] = {}

    def remember(self, namespace: str, job_flow_name: str, job_flow_uid: str, job: Obj) -> None:
        with self._lock:
            by_uid = self._jobs.setdefault((namespace, job_flow_name), {})
            by_uid.setdefault(job_flow_uid, {})[meta.name(job)] = status_view(job)

    def forget_recorded(self, job_flow: Obj, stored_status: Mapping[str, Any]) -> None:
        """Drop the Jobs that `stored_status` (what the API server holds) records as Completed."""
        recorded = recorded_completed({"status": stored_status})
        key = (meta.namespace(job_flow), meta.name(job_flow))
        with self._lock:
            jobs = self._jobs.get(key, {}).get(meta.uid(job_flow))
            if not jobs:
                return
            for name in (recorded & jobs.keys()) | replaced_since_deleted({"status": stored_status}, jobs):
                del jobs[name]
            if not jobs:
                self._drop(key, meta.uid(job_flow))

    def recall(self, job_flow: Obj) -> dict[str, Obj]:
        """This JobFlow object's (by uid) Completed Jobs seen deleted, by name."""
        key = (meta.namespace(job_flow), meta.name(job_flow))
        with self._lock:
            return dict(self._jobs.get(key, {}).get(meta.uid(job_flow), {}))

    def forget(self, namespace: str, job_flow_name: str, job_flow_uid: str | None = None) -> None:
        """Drop what is remembered for one JobFlow object (by uid), or for every object of the name."""
        key = (namespace, job_flow_name)
        with self._lock:
            if job_flow_uid is None:
                self._jobs.pop(key, None)
                return
            by_uid = self._jobs.get(key)
            if by_uid is not None:
                by_uid.pop(job_flow_uid, None)
                if not by_uid:
                    del self._jobs[key]

    def _drop(self, key: tuple[str, str], job_flow_uid: str) -> None:
        by_uid = self._jobs.get(key)
        if by_uid is not None:
            by_uid.pop(job_flow_uid, None)
            if not by_uid:
                del self._jobs[key]

    # -- memories.py ------------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        self.forget(namespace, name, uid)

    def memory_sizes(self) -> dict[str, int]:
        return {"deleted_jobs": len(self)}

    def __bool__(self) -> bool:
        """Whether anything is remembered (lock-free: a sync asks before it takes the lock)."""
        return bool(self._jobs)

    def __len__(self) -> int:
        with self._lock:
            return sum(len(jobs) for by_uid in self._jobs.values() for jobs in by_uid.values())
