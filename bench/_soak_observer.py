"""What bench/soak.py sees of the cluster: its own JobFlow and Job informers, and its janitor work.

Not a benchmark (``make bench`` skips ``bench/_*.py``). Kept apart from soak.py so each stays short.

It answers the soak's questions from receipt times in this process: which JobFlows are stuck (not
Succeed or Failed ``after`` seconds after their last Job ended, and not being deleted), how many
JobFlows and Jobs exist, and it does what a user and Volcano would do: delete the JobFlows meant to
be deleted while their Job runs, and the Jobs a `retain` JobFlow left behind once it is gone.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from typing import Any

from bench._common import key_of, phase_of, wait_until
from informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedIndexInformer
from jobflow_controller.kube.clientset import Clientset

FINAL_JOB = {"Completed", "Failed", "Terminated", "Aborted"}
FINAL_FLOW = {"Succeed", "Failed"}
#: A Job whose JobFlow is gone is deleted by the soak this long after (the garbage collector first).
ORPHAN_GRACE = 10.0
#: A JobFlow to delete while its Job runs is deleted at the latest this long after its creation.
DELETE_AT_LATEST = 20.0


def flow_of(job_key: str) -> str:
    """The JobFlow key of one of its Jobs (`<jobflow>-<flow>`: the soak's flow names hold no dash)."""
    return job_key.rsplit("-", 1)[0]


class Observer:
    def __init__(self, clientset: Clientset) -> None:
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.flow_created: dict[str, float] = {}
        self.to_delete: set[str] = set()
        self.deleted_by_soak: set[str] = set()
        self.gone_at: dict[str, float] = {}
        self.final: set[str] = set()
        self.last_job_end: dict[str, float] = {}
        self.job_attempts: dict[str, float] = {}
        self.jobs_deleted = 0
        self.flows = SharedIndexInformer(clientset.job_flows().lister_watcher(), 0.0, name="soak-jobflows")
        self.flows.add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._flow, update_func=lambda _o, n: self._flow(n), delete_func=self._flow_gone
            )
        )
        self.jobs = SharedIndexInformer(clientset.jobs().lister_watcher(), 0.0, name="soak-jobs")
        self.jobs.add_event_handler(
            ResourceEventHandlerFuncs(add_func=self._job, update_func=lambda _o, n: self._job(n))
        )

    def _flow(self, obj: Any) -> None:
        if phase_of(obj) in FINAL_FLOW:
            with self.lock:
                self.final.add(key_of(obj))

    def _flow_gone(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        with self.lock:
            self.gone_at[key_of(obj)] = time.monotonic()

    def _job(self, obj: Any) -> None:
        if phase_of(obj) in FINAL_JOB:
            with self.lock:
                self.last_job_end[flow_of(key_of(obj))] = time.monotonic()

    def start(self) -> None:
        for informer in (self.flows, self.jobs):
            threading.Thread(target=informer.run, args=(self.stop,), name=informer.name, daemon=True).start()
        wait_until(lambda: self.flows.has_synced() and self.jobs.has_synced(), 30.0, "the soak's informers")

    def created(self, body: dict[str, Any], *, deletes_while_running: bool) -> None:
        key = key_of(body)
        with self.lock:
            self.flow_created[key] = time.monotonic()
            if deletes_while_running:
                self.to_delete.add(key)

    # -- what the rows report ------------------------------------------------------------------------
    def stuck(self, now: float, after: float) -> int:
        """JobFlows present, not final, not deleted, every Job of theirs ended `after` seconds ago."""
        jobs_running: Counter[str] = Counter()
        for job in self.jobs.get_indexer().list():
            if phase_of(job) not in FINAL_JOB:
                jobs_running[flow_of(key_of(job))] += 1
        count = 0
        with self.lock:
            for job_flow in self.flows.get_indexer().list():
                key = key_of(job_flow)
                if key in self.final or key in self.deleted_by_soak or job_flow["metadata"].get("deletionTimestamp"):
                    continue
                ended = self.last_job_end.get(key)
                if ended is not None and not jobs_running[key] and now - ended > after:
                    count += 1
        return count

    def without_a_job(self, now: float, after: float) -> int:
        """JobFlows present, not final, not deleted, with no Job seen ended `after` s after their creation
        and no Job at all (a JobFlow the controller never started)."""
        with_jobs = {flow_of(key) for key in self.jobs.get_indexer().list_keys()}
        count = 0
        with self.lock:
            for key in self.flows.get_indexer().list_keys():
                created = self.flow_created.get(key)
                if key in self.final or key in self.deleted_by_soak or key in with_jobs or key in self.last_job_end:
                    continue
                if created is not None and now - created > after:
                    count += 1
        return count

    def present(self) -> int:
        return len(self.flows.get_indexer().list_keys())

    def jobs_present(self) -> int:
        return len(self.jobs.get_indexer().list_keys())

    def counts(self) -> dict[str, Any]:
        phases: Counter[str] = Counter(phase_of(f) or "<none>" for f in self.flows.get_indexer().list())
        with self.lock:
            return {
                "jobflows_present": sum(phases.values()),
                "jobflows_present_by_phase": dict(sorted(phases.items())),
                "jobflows_final_seen": len(self.final),
                "jobflows_gone": len(self.gone_at),
                "jobflows_deleted_while_running": len(self.deleted_by_soak),
                "jobs_present": self.jobs_present(),
                "jobs_deleted_by_soak": self.jobs_deleted,
            }

    # -- what a user and Volcano would do ------------------------------------------------------------
    def housekeeping(self, clientset: Clientset, after: float) -> None:
        """Delete the JobFlows due to go while their Job runs, and Jobs left behind by a gone JobFlow."""
        now = time.monotonic()
        with self.lock:
            due = [k for k in self.to_delete if self._due(k, now, after)]
            self.to_delete.difference_update(due)
            self.deleted_by_soak.update(due)
            gone = dict(self.gone_at)
        for key in due:
            ns, name = key.split("/", 1)
            with contextlib.suppress(Exception):
                clientset.job_flows(ns).delete(name, propagation_policy="Background")
        for job in self.jobs.get_indexer().list():
            key = key_of(job)
            left = gone.get(flow_of(key))
            if left is None or now - left < ORPHAN_GRACE or now - self.job_attempts.get(key, -1e9) < 30.0:
                continue
            self.job_attempts[key] = now
            ns, name = key.split("/", 1)
            with contextlib.suppress(Exception):
                clientset.jobs(ns).delete(name, propagation_policy="Background")
                self.jobs_deleted += 1

    def _due(self, key: str, now: float, after: float) -> bool:
        """A JobFlow to delete while running: once its slow Job runs (and `after` s passed), or at the latest."""
        age = now - self.flow_created[key]
        if age >= DELETE_AT_LATEST:
            return True
        job, exists = self.jobs.get_indexer().get_by_key(f"{key}-s")
        return age >= after and exists and phase_of(job) == "Running"
