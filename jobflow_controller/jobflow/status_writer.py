"""Writing a JobFlow's status: the one call that ends a sync, and what the next sync builds on.

`StatusWriter.write` writes the status a sync computed, or keeps it for a later sync when the
pacing (pacing.py) says it can wait; it says whether it wrote (a transition's metrics count only
then). A status kept meanwhile is what the next sync builds on (`OwnWrites.with_pending`), so
every phase a sync saw still shows in the histories; `flush` queues those JobFlows before a drain,
so a stopping controller writes them. Our own last write is remembered until the informer shows it
(own_writes.py), so a sync never starts from a JobFlow older than what it wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from jobflow_controller.apis import FlowRequest, meta
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.jobflow import STORED_SPEC_FIELD
from jobflow_controller.apis.jobflowtemplate import with_stored_spec
from jobflow_controller.jobflow.job_flow_queue import JobFlowQueue, request_for
from jobflow_controller.jobflow.own_writes import OwnWrites
from jobflow_controller.jobflow.pacing import (
    CLIENT_BACKLOG_MAX_DEFERRAL,
    STATUS_WRITE_BURST,
    STATUS_WRITE_INTERVAL,
    STATUS_WRITE_QPS,
    StatusLane,
    StatusPacing,
)
from jobflow_controller.kube.clientset import Clientset

__all__ = [
    "CLIENT_BACKLOG_MAX_DEFERRAL",
    "STATUS_WRITE_BURST",
    "STATUS_WRITE_INTERVAL",
    "STATUS_WRITE_QPS",
    "StatusLane",
    "StatusWriter",
]

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]


class StatusWriter:
    """Writes (or keeps for later) the status each sync computed; one per controller."""

    def __init__(self, clientset: Clientset, queue: JobFlowQueue, pacing: StatusPacing, own_writes: OwnWrites) -> None:
        self._clientset = clientset
        self._queue = queue
        self.pacing = pacing
        self.own_writes = own_writes

    # -- what the sync reads ----------------------------------------------------------------------
    def newest(self, cached: Obj) -> Obj:
        """The newest version of `cached` this process knows of: our own write, or `cached` itself."""
        return self.own_writes.newest(cached)

    def stored_status(self, job_flow: Obj) -> Mapping[str, Any]:
        """The status the API server holds under `job_flow` (which may carry one not written yet)."""
        return self.own_writes.stored_status(job_flow)

    def with_pending(self, job_flow: Obj) -> Obj:
        """`job_flow` with the status computed and not written yet, where the sync continues from."""
        return self.own_writes.with_pending(job_flow)

    # -- the one call that ends a sync ------------------------------------------------------------
    def write(self, job_flow: Obj, body: dict[str, Any], *, at_once: bool = False) -> bool:
        """Write `body` as `job_flow`'s status now (True), or keep it for a later sync (False).

        `at_once` (a status recording a retry: the Job is deleted only after it) skips the pacing.
        """
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        if STORED_SPEC_FIELD in jf.status(job_flow):  # a run's fixed spec outlives every write (docs/templates.md)
            body = with_stored_spec(body, job_flow)
        if body == dict(self.own_writes.stored_status(job_flow)):
            self.own_writes.written_pending(ns, name)
            self.pacing.unchanged(request_for(ns, name))
            return False  # the API server holds it already
        if not at_once and self.pacing.waits(job_flow, body):
            return False
        updated = {**job_flow, "status": body}
        try:
            stored = self._clientset.job_flows(ns).update_status(updated)
        except Exception as err:
            log.error(f"Failed to update status of JobFlow {ns}/{name}: {err}", jobflow=f"{ns}/{name}")
            raise
        self.own_writes.wrote(updated, stored)
        self.own_writes.written_pending(ns, name)
        return True

    # -- what the handlers and the controller tell it ---------------------------------------------
    def job_changed(self, req: FlowRequest, status_only: bool) -> None:
        """One of the JobFlow's Jobs changed: queue its sync now, or (`status_only`) when the pacing says."""
        self.pacing.job_changed(req, status_only)

    def observed(self, job_flow: Obj) -> None:
        """The informer shows `job_flow`: our record of a write it shows is no longer needed."""
        self.own_writes.observed(job_flow)

    def flush(self) -> None:
        """Before a drain, queue every JobFlow whose status waits to be written.

        Their scheduled syncs would be dropped with the queue; queued now, the drain syncs them,
        and a sync while the queue shuts down writes at once. A stop without a drain syncs
        nothing: the next leader computes the status afresh from the Jobs.
        """
        for namespace, name in self.own_writes.pending_keys():
            self._queue.add(namespace, name)

    # -- memories.py ------------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        """The JobFlow is gone: its written and unwritten statuses and its reservation go too."""
        self.own_writes.forget(namespace, name)
        self.pacing.forget(request_for(namespace, name))

    def memory_sizes(self) -> dict[str, int]:
        return {
            "own_writes": len(self.own_writes),
            "own_writes_pending": len(self.own_writes.pending_keys()),
            "status_reservations": len(self.pacing.lane),
        }
