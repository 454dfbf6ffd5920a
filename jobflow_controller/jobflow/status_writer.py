"""Everything about writing a JobFlow's status: when, how often, and what the next sync builds on.

Upstream writes every status change at once: one PUT per Job phase change seen, each Job going
through Pending, Running and Completed, so most of a JobFlow's writes say what the next one says
again. The sync ends with one call, `StatusWriter.write`, which decides for a change that does not
finish the JobFlow: none while the JobFlow is queued again already (its next sync writes the newer
status); then, by default, as soon as the status bucket has a token for this JobFlow (`StatusLane`,
--status-write-qps and --status-write-burst): at once while the controller keeps up, and past the
burst in the `STATUS` lane (urgency.py) at the reserved time, with every change since. With
--status-write-interval, at most that long after the oldest unwritten change instead. While the
client-side QPS limiter is backlogged, such a change also waits for it to clear (at most
`CLIENT_BACKLOG_MAX_DEFERRAL`), so Job creates get the tokens first. Succeed and Failed, a retry's
record, and everything once the queue shuts down are written at once.

A status kept meanwhile is what the next sync builds on (`OwnWrites.with_pending`), so every phase a
sync saw still shows in the histories; `flush` queues those JobFlows before a drain, so a stopping
controller writes them. Our own last write is remembered until the informer shows it
(own_writes.py), so a sync never starts from a JobFlow older than what it wrote.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import structlog

from jobflow_controller.apis import Phase, meta
from jobflow_controller.jobflow import urgency
from jobflow_controller.jobflow.own_writes import OwnWrites
from jobflow_controller.kube.clientset import Clientset
from workqueue import BucketRateLimiter, Clock, RateLimitingQueue

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]

_FINISHED = frozenset({Phase.SUCCEED, Phase.FAILED})

#: The bucket of status writes that do not finish a JobFlow: client-go's own numbers for a
#: controller's overall requeue rate (`DefaultControllerRateLimiter`'s bucket, 10 qps, burst 100).
#: 100 changes at once are written at once; beyond that, 10 a second, shared by every JobFlow.
STATUS_WRITE_QPS = 10.0
STATUS_WRITE_BURST = 100
#: --status-write-interval: 0, a change is written as soon as the bucket has a token for it.
STATUS_WRITE_INTERVAL = 0.0
#: While the client-side QPS limiter is backlogged (every token spoken for: a burst at the default
#: --kube-api-qps), a change that does not finish a JobFlow waits for the backlog to clear, at most
#: this long after it was computed: the Job creates and final statuses get the tokens first.
CLIENT_BACKLOG_MAX_DEFERRAL = 30.0


class StatusLane:
    """Queues a JobFlow's status write in the `STATUS` lane, one token of the bucket per write.

    A request holds at most one reservation: asking again while it waits takes no second token
    (the write it waits for will carry the newer status too). A reservation is used by the first
    sync of the request at or after its time (`write_now`), whichever lane that sync came from.
    """

    def __init__(
        self,
        queue: RateLimitingQueue[Hashable],
        clock: Clock,
        qps: float = STATUS_WRITE_QPS,
        burst: int = STATUS_WRITE_BURST,
    ) -> None:
        self._queue = queue
        self._clock = clock
        self._bucket: BucketRateLimiter[Hashable] = BucketRateLimiter(qps, burst, clock)
        self._lock = threading.Lock()
        #: When each request's reserved write is due (queue clock).
        self._due: dict[Hashable, float] = {}

    def add(self, req: Hashable) -> None:
        """Queue `req` for a status write once the bucket has a token for it (now, if it has one).

        Asked again while a reservation waits, it only makes sure the request comes back at the
        reserved time (the queue keeps the earliest of several times, and an earlier sync may have
        used that wake-up without reaching the reserved time), so a reservation is never stranded.
        """
        now = self._clock.now()
        with self._lock:
            due = self._due.get(req)
            if due is None:
                due = self._due[req] = now + self._bucket.when(req)
        if due > now:
            self._queue.add_after(req, due - now, priority=urgency.STATUS)
        else:
            self._queue.add_with_priority(req, urgency.STATUS)

    def write_now(self, req: Hashable) -> bool:
        """Whether a sync of `req` may write its status change now, using a token if so.

        Yes when its reserved time has come (the reservation is used), or when it holds none and
        the bucket has a token to spare at once. Otherwise a token is reserved for later (if none
        is yet) and the caller keeps the change and calls `add`.
        """
        now = self._clock.now()
        with self._lock:
            due = self._due.get(req)
            if due is not None:
                if due > now:
                    return False
                del self._due[req]
                return True
            wait = self._bucket.when(req)
            if wait <= 0:
                return True
            self._due[req] = now + wait
            return False

    def take(self, req: Hashable) -> None:
        """A sync of `req` found nothing to write: a reservation whose time has come lapses."""
        now = self._clock.now()
        with self._lock:
            due = self._due.get(req)
            if due is not None and due <= now:
                del self._due[req]

    def forget(self, req: Hashable) -> None:
        """The JobFlow is gone: its reservation goes with it."""
        with self._lock:
            self._due.pop(req, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._due)


class StatusWriter:
    """Writes (or keeps for later) the status each sync computed; one per controller."""

    def __init__(
        self,
        clientset: Clientset,
        queue: RateLimitingQueue[Hashable],
        clock: Clock,
        request_for: Callable[[str, str], Hashable],
        must_stop_now: Callable[[], bool],
        *,
        interval: float = STATUS_WRITE_INTERVAL,
        qps: float = STATUS_WRITE_QPS,
        burst: int = STATUS_WRITE_BURST,
    ) -> None:
        self._clientset = clientset
        self._queue = queue
        self._clock = clock
        self._client_backlog = clientset.backlog
        self._request_for = request_for
        self._must_stop_now = must_stop_now
        self.own_writes = OwnWrites()
        self.lane = StatusLane(queue, clock, qps, burst)
        #: 0: a status change is written as soon as the status bucket has a token for it; more: at
        #: most this many seconds after it was seen.
        self.interval = interval

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
    def write(self, job_flow: Obj, body: dict[str, Any], *, at_once: bool = False) -> str | None:
        """Write `body` as `job_flow`'s status now, or keep it for a later sync.

        `at_once` (a status recording a retry: the Job is deleted only after it) skips the pacing.
        Returns the phase of the status the write replaced, or None when nothing was written.
        """
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        stored_status = self.own_writes.stored_status(job_flow)
        if body == dict(stored_status):
            self.own_writes.written_pending(ns, name)
            self.lane.take(self._request_for(ns, name))  # nothing to write: a due reservation lapses
            return None
        if not at_once and self._waits(job_flow, body):
            return None
        updated = {**job_flow, "status": body}
        try:
            stored = self._clientset.job_flows(ns).update_status(updated)
        except Exception as err:
            log.error(f"Failed to update status of JobFlow {ns}/{name}: {err}", jobflow=f"{ns}/{name}")
            raise
        self.own_writes.wrote(updated, stored)
        self.own_writes.written_pending(ns, name)
        return str((stored_status.get("state") or {}).get("phase") or "")

    def _waits(self, job_flow: Obj, body: dict[str, Any]) -> bool:
        """Whether the change `body` is left to a later sync (then it is kept, and scheduled)."""
        if self._queue.shutting_down() or self._must_stop_now():
            return False
        if str((body.get("state") or {}).get("phase") or "") in _FINISHED:
            return False
        req = self._request_for(meta.namespace(job_flow), meta.name(job_flow))
        now = self._clock.now()
        queued_again = self._queue.added_while_processing(req)
        paced = self.interval <= 0 and not queued_again
        client_busy = paced and self._client_busy(job_flow, now)
        if paced and not client_busy and self.lane.write_now(req):
            return False
        since = self.own_writes.defer(job_flow, body, now)
        if queued_again:
            return True
        if self.interval > 0:
            wait = since + self.interval - now
            if wait <= 0:
                return False
            self._queue.add_after(req, wait, priority=urgency.STATUS)
            return True
        if client_busy:
            # One sync when the longest deferral is over (it writes then, backlog or not); any
            # sync of the JobFlow before that writes as soon as the backlog has cleared.
            self._queue.add_after(req, since + CLIENT_BACKLOG_MAX_DEFERRAL - now, priority=urgency.STATUS)
            return True
        self.lane.add(req)
        return True

    def _client_busy(self, job_flow: Obj, now: float) -> bool:
        """Whether a change that does not finish `job_flow` leaves the client's tokens to others."""
        if self._client_backlog() <= 0:
            return False
        since = self.own_writes.pending_since(job_flow)
        return since is None or now - since < CLIENT_BACKLOG_MAX_DEFERRAL

    # -- what the handlers and the controller tell it ---------------------------------------------
    def request_write(self, req: Hashable) -> None:
        """A change that can only alter the status (a Job turned Pending or Running): sync when due.

        With an interval the sync comes then, and the Job updates of that interval share it;
        otherwise when the status bucket has a token for it.
        """
        if self.interval > 0:
            self._queue.add_after(req, self.interval, priority=urgency.STATUS)
        else:
            self.lane.add(req)

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
            self._queue.add(self._request_for(namespace, name))

    def forget(self, namespace: str, name: str) -> None:
        """The JobFlow is gone: its written and unwritten statuses and its reservation go too."""
        self.own_writes.forget(namespace, name)
        self.lane.forget(self._request_for(namespace, name))
