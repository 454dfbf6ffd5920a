"""Writing a JobFlow's status: the one call that ends a sync, and what the next sync builds on.

`StatusWriter.write` writes the status a sync computed, or keeps it for a later sync when the
pacing (pacing.py) says it can wait; it says whether it wrote (a transition's metrics count only
then). A status kept meanwhile is what the next sync builds on (`OwnWrites.with_pending`), so
every phase a sync saw still shows in the histories; `flush` queues those JobFlows before a drain,
so a stopping controller writes them. Our own last write is remembered until the informer shows it
(`OwnWrites`, below), so a sync never starts from a JobFlow older than what it wrote.

`OwnWrites`, the JobFlows this process wrote until the informer shows them (a write-through overlay of
its own): a status write is answered with the stored object at once, but the JobFlow informer shows
it only after the watch event arrives, tens of milliseconds later (seconds on a busy server). A sync
in between would read the older object from the cache, compute against a stale `status`, find it
different, and write again with the stale resourceVersion, which the server refuses with a 409
(RetryOnConflict then costs a GET and a second sync): with several workers and a busy queue this was
most of the controller's conflicts and a third of its status writes. So the controller remembers, per
JobFlow, the object its last status write returned and the resourceVersions that write replaced. A
sync starts from `newest(cached)`: our own written object while the cache still shows one of the
versions it replaced, the cache otherwise (it caught up, or someone else wrote after us). The cache
itself is never touched (docs/architecture.md); an entry is dropped as soon as the informer shows the
version we wrote, or the JobFlow is deleted. resourceVersions are compared for equality only, never
ordered, as the API conventions require.

`fit_status` (ours): a status that cannot be stored is not sent again and again; the JobFlow fails
with one that fits. etcd refuses a request over 1.5 MiB (its `--max-request-bytes`), so a JobFlow
whose status grows past that could never record anything again, not even Failed: every PUT fails,
is retried with the same full-size body, and again at every resync (Argo, Kubeflow Pipelines, Tekton
and Flyte all met this). Flows are capped, running histories bounded (action.py) and retries bounded
(apis/retry.py), so only what the Jobs report without bound (`taskStatusCount` of a Job with many
tasks, copied into `conditions`) or what someone wrote into the status by hand can still get there.
Called at one named point, the end of the sync's decisions, before the write: past
`STATUS_SIZE_LIMIT` the JobFlow is Failed, a Warning names the size, and the status keeps only what
fits, dropping in this order: running histories but the last of each Job, the `conditions`, the
`jobStatusList`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
import structlog

from jobflow_controller.apis import FlowRequest, Phase, meta
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.jobflow import STORED_SPEC_FIELD
from jobflow_controller.apis.jobflowtemplate import with_stored_spec
from jobflow_controller.apis.status import JobFlowStatus
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.pacing import (
    CLIENT_BACKLOG_MAX_DEFERRAL,
    QUEUED_AGAIN_MAX_DEFERRAL,
    STATUS_WRITE_BURST,
    STATUS_WRITE_INTERVAL,
    STATUS_WRITE_QPS,
    StatusLane,
    StatusPacing,
)
from jobflow_controller.jobflow.world import SyncPlan, WarningEvent
from jobflow_controller.kube.clientset import Clientset

if TYPE_CHECKING:
    from jobflow_controller.jobflow.controller import JobFlowQueue

__all__ = [
    "CLIENT_BACKLOG_MAX_DEFERRAL",
    "QUEUED_AGAIN_MAX_DEFERRAL",
    "STATUS_SIZE_LIMIT",
    "STATUS_WRITE_BURST",
    "STATUS_WRITE_INTERVAL",
    "STATUS_WRITE_QPS",
    "StatusLane",
    "StatusWriter",
    "fit_status",
    "status_size",
    "status_size_limit",
]

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class _Written:
    uid: str
    #: What the server answered to our write: the object as stored, with its new resourceVersion.
    obj: Obj
    #: The resourceVersions our write (or an earlier one of ours) replaced: older than `obj`'s.
    older_versions: frozenset[str]


@dataclass
class _Pending:
    uid: str
    #: The status computed and not written yet: the next sync builds on it, not on the stored one.
    status: Mapping[str, Any]
    #: The stored status under it (that of the object the last sync started from).
    stored: Mapping[str, Any]
    #: When the oldest change in `status` was computed (queue clock).
    since: float


class OwnWrites:
    """Per JobFlow (namespace, name): our last written object while the informer lags behind it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._written: dict[tuple[str, str], _Written] = {}
        self._pending: dict[tuple[str, str], _Pending] = {}

    def newest(self, cached: Obj) -> Obj:
        """The newest version of `cached` this process knows of: our own write, or `cached` itself."""
        key = (meta.namespace(cached), meta.name(cached))
        rv = meta.resource_version(cached)
        with self._lock:
            written = self._written.get(key)
            if written is None:
                return cached
            if written.uid == meta.uid(cached) and rv in written.older_versions:
                return written.obj
            if rv == meta.resource_version(written.obj):
                del self._written[key]  # the cache caught up
        return cached

    def wrote(self, sent: Obj, stored: Obj) -> None:
        """Remember `stored`, the server's answer to our write of `sent` (which it replaced)."""
        key = (meta.namespace(stored), meta.name(stored))
        uid = meta.uid(stored)
        older_versions = {meta.resource_version(sent)}
        with self._lock:
            earlier = self._written.get(key)
            if earlier is not None and earlier.uid == uid:
                # Written again before the cache showed the first write: both earlier versions are
                # older than this one.
                older_versions |= earlier.older_versions | {meta.resource_version(earlier.obj)}
            older_versions.discard(meta.resource_version(stored))
            self._written[key] = _Written(uid, stored, frozenset(older_versions))

    def observed(self, obj: Obj) -> None:
        """The informer shows `obj`: drop our record once it shows our write (or anything newer)."""
        key = (meta.namespace(obj), meta.name(obj))
        with self._lock:
            written = self._written.get(key)
            if written is None:
                return
            if written.uid != meta.uid(obj) or meta.resource_version(obj) not in written.older_versions:
                del self._written[key]

    def forget(self, namespace: str, name: str) -> None:
        """The JobFlow is gone: nothing of ours about it is worth keeping."""
        with self._lock:
            self._written.pop((namespace, name), None)
            self._pending.pop((namespace, name), None)

    # -- statuses computed and not written yet ---------------------------------------------------------
    def with_pending(self, job_flow: Obj) -> Obj:
        """`job_flow` as our unwritten status would make it: a sync continues from what the last one saw.

        A status that waits to be written still holds what that sync saw (a Job's phase opened in
        its running histories at the time it was seen, a Completed Job recorded); the next sync
        builds on it, so nothing it saw is lost by not writing it at once.
        """
        key = (meta.namespace(job_flow), meta.name(job_flow))
        with self._lock:
            pending = self._pending.get(key)
            if pending is None:
                return job_flow
            if pending.uid != meta.uid(job_flow):
                del self._pending[key]  # a new JobFlow under the same name
                return job_flow
            pending.stored = jf.status(job_flow)
            return {**job_flow, "status": pending.status}

    def stored_status(self, job_flow: Obj) -> Mapping[str, Any]:
        """The stored status under `job_flow` (which `with_pending` may have given an unwritten one)."""
        with self._lock:
            pending = self._pending.get((meta.namespace(job_flow), meta.name(job_flow)))
            if pending is not None and pending.uid == meta.uid(job_flow):
                return pending.stored
        return jf.status(job_flow)

    def defer(self, job_flow: Obj, status: Mapping[str, Any], now: float) -> float:
        """Keep `status` as the one to write; return when its oldest unwritten change was computed."""
        key = (meta.namespace(job_flow), meta.name(job_flow))
        stored = self.stored_status(job_flow)
        with self._lock:
            since = self._since_locked(job_flow)
            since = now if since is None else since
            self._pending[key] = _Pending(meta.uid(job_flow), status, stored, since)
            return since

    def pending_since(self, job_flow: Obj) -> float | None:
        """When the oldest unwritten change of `job_flow` was computed; None if none waits."""
        with self._lock:
            return self._since_locked(job_flow)

    def _since_locked(self, job_flow: Obj) -> float | None:
        earlier = self._pending.get((meta.namespace(job_flow), meta.name(job_flow)))
        return earlier.since if earlier is not None and earlier.uid == meta.uid(job_flow) else None

    def pending_keys(self) -> list[tuple[str, str]]:
        """(namespace, name) of every JobFlow whose status waits to be written."""
        with self._lock:
            return list(self._pending)

    def written_pending(self, namespace: str, name: str) -> None:
        """The status that waited has been written (or there is nothing left to write)."""
        with self._lock:
            self._pending.pop((namespace, name), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._written)


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
            self.pacing.unchanged(self._queue.request_for(ns, name))
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
        self.pacing.forget(self._queue.request_for(namespace, name))

    def memory_sizes(self) -> dict[str, int]:
        return {
            "own_writes": len(self.own_writes),
            "own_writes_pending": len(self.own_writes.pending_keys()),
            "status_reservations": len(self.pacing.lane),
        }


# -- a status that fits etcd -------------------------------------------------------------------------
#: The most bytes of status JSON a JobFlow may hold, whatever its spec: a third of etcd's 1.5 MiB
#: request limit is left for the spec, the metadata and the managedFields the API server adds.
STATUS_SIZE_LIMIT = 1024 * 1024
#: etcd's default `--max-request-bytes`: the whole object must fit in it.
OBJECT_SIZE_LIMIT = 1536 * 1024
#: What the API server may add to the object besides our status (managedFields, a resourceVersion).
HEADROOM = 64 * 1024


def status_size(body: dict[str, Any]) -> int:
    return len(orjson.dumps(body))


def status_size_limit(job_flow: Mapping[str, Any]) -> int:
    """`STATUS_SIZE_LIMIT`, or less when the rest of the JobFlow leaves less of etcd's limit: params,
    `when` and matrix values let a spec itself reach well over 1 MB."""
    rest = {key: value for key, value in job_flow.items() if key not in ("status", "metadata")}
    # managedFields (on an object read from the API server, not on the informer's) describe the status
    # being replaced; the API server writes them anew for the one written, within `STATUS_SIZE_LIMIT`'s
    # third of etcd's limit as before.
    metadata = job_flow.get("metadata")
    if isinstance(metadata, Mapping):
        rest["metadata"] = {key: value for key, value in metadata.items() if key != "managedFields"}
    try:
        rest_size = len(orjson.dumps(rest))
    except TypeError:  # not JSON (a test's object): the flat limit
        return STATUS_SIZE_LIMIT
    return max(0, min(STATUS_SIZE_LIMIT, OBJECT_SIZE_LIMIT - HEADROOM - rest_size))


def fit_status(plan: SyncPlan, job_flow: Mapping[str, Any]) -> SyncPlan:
    """`plan` unchanged when its status fits; else Failed, reduced until it fits, with the Warning."""
    if plan.status is None:
        return plan
    plan.body = None
    size = status_size(plan.status_body())
    limit = status_size_limit(job_flow) if size > 4096 else STATUS_SIZE_LIMIT
    if size <= limit:
        return plan
    status = plan.status
    status.phase = Phase.FAILED
    dropped = []
    for name, reduce in _REDUCTIONS:
        if status_size(status.to_dict()) <= limit:
            break
        reduce(status)
        dropped.append(name)
    plan.body = status.to_dict()
    plan.retries, plan.retry_deletes = [], []
    plan.size_warning = WarningEvent(
        c.REASON_STATUS_TOO_LARGE, c.MESSAGE_STATUS_TOO_LARGE, (size, limit, ", ".join(dropped))
    )
    return plan


def _last_histories(status: JobFlowStatus) -> None:
    for entry in status.job_status_list:
        entry.running_histories = entry.running_histories[-1:]


def _no_conditions(status: JobFlowStatus) -> None:
    status.conditions = {}


def _no_job_status_list(status: JobFlowStatus) -> None:
    status.job_status_list = []


_REDUCTIONS = (
    ("running histories but the last", _last_histories),
    ("conditions", _no_conditions),
    ("jobStatusList", _no_job_status_list),
)
