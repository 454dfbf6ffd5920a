"""Which JobFlow syncs go first, and how often a status that changes on its way may be written.

Upstream's queue is FIFO and every sync writes the status it computed: with a few hundred JobFlows
in flight, the sync that would create a dependent right after its target Completed waits behind
every sync queued before it, and each Job goes through Pending, Running and Completed with a
status write for each phase a sync happens to see. Most of those writes say what the next one says
again. So requests carry a priority (the queue's lanes, workqueue/priority.py):

* `REACT`: something that may create or delete a Job, or finish the JobFlow: a Job reached any
  phase but Pending or Running (Completed makes dependents due, Failed fails the flow), a Job was
  deleted, a retry's backoff or a probe's poll is over;
* `DEFAULT`: a JobFlow added or its spec changed, a JobTemplate added or changed, the resync, a
  failed sync's retry: the queue's default (controller-runtime's 0);
* `STATUS`: a sync whose only job is to write a status that changed on the way: a Job turned
  Pending or Running (of a JobFlow without probes; a probe may pass on a Running Job's pods), or
  another sync's status change that was not written at once.

Status changes that do not finish the JobFlow are written by `STATUS` syncs only, and those are
paced by one token bucket per controller (`StatusLane`, `STATUS_WRITE_QPS` and
`STATUS_WRITE_BURST`): a JobFlow waits for at most one token at a time, and whatever changes
while it waits is written together. A controller that keeps up never empties the bucket, so every
change is written as soon as it is seen, as upstream writes it; under a burst the intermediate
statuses of all JobFlows share `STATUS_WRITE_QPS` writes a second. Succeed and Failed, a retry's
record, and everything while the controller stops are written at once, whatever the bucket says.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable

from workqueue import DEFAULT_PRIORITY, BucketRateLimiter, Clock, RateLimitingQueue

REACT = 10
DEFAULT = DEFAULT_PRIORITY
STATUS = -10

#: The bucket of status writes that do not finish a JobFlow: client-go's own numbers for a
#: controller's overall requeue rate (`DefaultControllerRateLimiter`'s bucket, 10 qps, burst 100).
#: 100 changes at once are written at once; beyond that, 10 a second, shared by every JobFlow.
STATUS_WRITE_QPS = 10.0
STATUS_WRITE_BURST = 100


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
            self._queue.add_after(req, due - now, priority=STATUS)
        else:
            self._queue.add_with_priority(req, STATUS)

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
