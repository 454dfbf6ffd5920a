"""Pacing, in one place: the lane and the delay of every JobFlow sync whose only job is its status.

Upstream writes every status change at once: one PUT per Job phase change seen, each Job going
through Pending, Running and Completed, so most of a JobFlow's writes say what the next one says
again. `StatusPacing` decides, for the two moments that can wait:

- a Job update that can only change the status (`job_changed`, from handler.py): such a sync goes
  to the `STATUS` lane when the status bucket has a token for it (or after --status-write-interval);
  any other (a Job Completed, Failed, deleted; a JobFlow with probes) to `REACT` at once;
- a sync's status change that does not finish the JobFlow (`waits`, from status_writer.py): none
  while the JobFlow is queued again already (its next sync writes the newer status), unless the
  oldest unwritten change is `QUEUED_AGAIN_MAX_DEFERRAL` old (a JobFlow whose Jobs keep changing,
  a 256-Job matrix, is queued again at every sync: its status would wait for its end); then, by
  default, as soon as the status bucket has a token for this JobFlow (`StatusLane`,
  --status-write-qps and --status-write-burst): at once while the controller keeps up, and past
  the burst in the `STATUS` lane (urgency.py) at the reserved time, with every change since. With
  --status-write-interval, at most that long after the oldest unwritten change instead. While the
  client-side QPS limiter is backlogged, such a change also waits for it to clear (at most
  `CLIENT_BACKLOG_MAX_DEFERRAL`), so Job creates get the tokens first. Succeed and Failed, a
  retry's record, and everything once the queue shuts down are written at once.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from jobflow_controller.apis import FINISHED_PHASES, meta
from jobflow_controller.jobflow import urgency
from jobflow_controller.kube.clientset import Clientset
from workqueue import BucketRateLimiter, Clock, RateLimitingQueue

if TYPE_CHECKING:
    from jobflow_controller.jobflow.controller import JobFlowQueue
    from jobflow_controller.jobflow.status_writer import OwnWrites

Obj = Mapping[str, Any]

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
#: A change left to the JobFlow's next sync because one is queued already is written anyway by the
#: first sync that finds it this old: a JobFlow queued again at every sync still shows its progress.
QUEUED_AGAIN_MAX_DEFERRAL = 5.0


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


class StatusPacing:
    """Decides the lane and the delay of the syncs and status writes that can wait; one per controller."""

    def __init__(
        self,
        queue: JobFlowQueue,
        clientset: Clientset,
        own_writes: OwnWrites,
        *,
        interval: float = STATUS_WRITE_INTERVAL,
        qps: float = STATUS_WRITE_QPS,
        burst: int = STATUS_WRITE_BURST,
    ) -> None:
        self._queue = queue
        self._clock = queue.clock
        self._client_backlog = clientset.backlog
        self._own_writes = own_writes
        self.lane = StatusLane(queue.queue, queue.clock, qps, burst)
        #: 0: a status change is written as soon as the status bucket has a token for it; more: at
        #: most this many seconds after it was seen.
        self.interval = interval

    def job_changed(self, req: Hashable, status_only: bool) -> None:
        """A Job of the JobFlow of `req` changed: `REACT` now, or (a change that can only alter the
        status) a status sync when due."""
        if status_only:
            self.status_sync(req)
        else:
            self._queue.add_after(req, 0.0, urgency.REACT)

    def status_sync(self, req: Hashable) -> None:
        """A sync whose only job is the status: after the interval (the Job updates of that interval
        share it), or when the status bucket has a token for it."""
        if self.interval > 0:
            self._queue.add_after(req, self.interval, urgency.STATUS)
        else:
            self.lane.add(req)

    def waits(self, job_flow: Obj, body: Mapping[str, Any]) -> bool:
        """Whether the change `body` is left to a later sync (then it is kept, and scheduled)."""
        if self._queue.stopping():
            return False
        if str((body.get("state") or {}).get("phase") or "") in FINISHED_PHASES:
            return False
        req = self._queue.request_for(meta.namespace(job_flow), meta.name(job_flow))
        now = self._clock.now()
        queued_again = self._queue.added_while_processing(req)
        paced = self.interval <= 0 and not queued_again
        client_busy = paced and self._client_busy(job_flow, now)
        if paced and not client_busy and self.lane.write_now(req):
            return False
        since = self._own_writes.defer(job_flow, body, now)
        if queued_again:
            return now - since < QUEUED_AGAIN_MAX_DEFERRAL
        if self.interval > 0:
            wait = since + self.interval - now
            if wait <= 0:
                return False
            self._queue.add_after(req, wait, urgency.STATUS)
            return True
        if client_busy:
            # One sync when the longest deferral is over (it writes then, backlog or not); any
            # sync of the JobFlow before that writes as soon as the backlog has cleared.
            self._queue.add_after(req, since + CLIENT_BACKLOG_MAX_DEFERRAL - now, urgency.STATUS)
            return True
        self.lane.add(req)
        return True

    def unchanged(self, req: Hashable) -> None:
        """A sync of `req` found nothing to write: a due reservation lapses."""
        self.lane.take(req)

    def _client_busy(self, job_flow: Obj, now: float) -> bool:
        """Whether a change that does not finish `job_flow` leaves the client's tokens to others."""
        if self._client_backlog() <= 0:
            return False
        since = self._own_writes.pending_since(job_flow)
        return since is None or now - since < CLIENT_BACKLOG_MAX_DEFERRAL

    def forget(self, req: Hashable) -> None:
        self.lane.forget(req)
