"""The probe pool and its result cache (ours): bounded, fair across namespaces, cheap to expire.

Fairness: the pool's workers take checks from one FIFO per namespace, round-robin across the
namespaces that have checks waiting, and a namespace has at most `MAX_PENDING_PER_NAMESPACE`
checks in hand (queued or running). Every check ends within its deadline T (probes/net.py), so in
any T at least W checks start (W workers); a check queued behind the checks of N - 1 other
namespaces (N namespaces with checks waiting, its own counted) starts within ⌈N/W⌉·T however
many checks those namespaces queued. One tenant flooding the pool delays another's check by at
most one of its own: within T with W >= 2. The bound holds while the whole pool has room
(`MAX_PENDING_CHECKS`, reached only when that many namespaces are each at their cap); a check
refused for room is tried again by the JobFlow's next poll.

Expiry: results are kept in the order they were last asked for, so dropping the stale ones looks
only at the front of that order: O(1) amortized per lookup, not a scan of every result.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass

from jobflow_controller.apis.probe import ProbeCheck
from jobflow_controller.jobflow.probes.net import ProbeResult
from workqueue import Clock

#: How long a check's result stands, and how soon a JobFlow waiting on a failing check is synced
#: again. kubelet's default `periodSeconds` is 10; a dependency gate wants a quicker answer, and one
#: check per pod and entry every 2 s costs little.
PROBE_POLL_PERIOD = 2.0
#: The pool that runs the checks: at most this many at once, whatever the number of JobFlows.
PROBE_WORKERS = 4
#: At most this many checks queued or running; more wait for a later sync (the poll brings it).
MAX_PENDING_CHECKS = 256
#: At most this many of them from one namespace, so that one tenant cannot fill the pool's queue.
MAX_PENDING_PER_NAMESPACE = 16
#: A result nobody asked for in this long is dropped (a JobFlow deleted, a target long Completed).
RESULT_EXPIRY = 10 * PROBE_POLL_PERIOD


@dataclass(frozen=True)
class ProbeKey:
    """One check of one pod for one flow of one JobFlow object (the uid: a re-created JobFlow starts
    afresh). `namespace`, the JobFlow's, is the tenant the pool is fair across."""

    job_flow_uid: str
    flow: str
    check: ProbeCheck
    pod: str
    namespace: str = ""


@dataclass
class _Entry:
    result: ProbeResult | None
    #: When the check that gave `result` was submitted (clock.now()).
    at: float
    last_asked: float


@dataclass(frozen=True)
class _Queued:
    key: ProbeKey
    run: Callable[[], ProbeResult]
    done: Callable[[], None]
    submitted: float


class FairQueue:
    """Checks waiting for the pool: one FIFO per namespace, handed out round-robin across them."""

    def __init__(self) -> None:
        #: The namespaces with checks waiting, in the order of their next turn.
        self._ring: OrderedDict[str, deque[_Queued]] = OrderedDict()

    def push(self, item: _Queued) -> None:
        waiting = self._ring.get(item.key.namespace)
        if waiting is None:
            waiting = self._ring[item.key.namespace] = deque()  # a new namespace's turn comes last
        waiting.append(item)

    def pop(self) -> _Queued | None:
        """The oldest check of the namespace whose turn it is; that namespace goes to the back."""
        if not self._ring:
            return None
        namespace, waiting = self._ring.popitem(last=False)
        item = waiting.popleft()
        if waiting:
            self._ring[namespace] = waiting
        return item

    def remove(self, key: ProbeKey) -> None:
        waiting = self._ring.get(key.namespace)
        if waiting is None:
            return
        for item in list(waiting):
            if item.key == key:
                waiting.remove(item)
        if not waiting:
            del self._ring[key.namespace]


class ProbeCache:
    """Runs checks on a bounded, fair pool and keeps each result for `ttl` seconds.

    `result(key, run, done)` never blocks: it returns a result younger than `ttl`, or None when there
    is none, after queueing `run` unless that key's check is in hand already or there is no room (the
    pool's or the key's namespace's). `done` is called (on the pool's thread) once the check finished.

    A result's age counts from when its check was submitted, not from when it finished: the sync
    that submitted it puts the JobFlow back after `ttl` (the poll period), and that later sync must
    find the result expired and check again, not reuse it for one more period.
    """

    def __init__(
        self,
        clock: Clock,
        *,
        executor: Executor | None = None,
        ttl: float = PROBE_POLL_PERIOD,
        max_pending: int = MAX_PENDING_CHECKS,
        max_pending_per_namespace: int = MAX_PENDING_PER_NAMESPACE,
        expiry: float = RESULT_EXPIRY,
    ) -> None:
        self._clock = clock
        self._executor = executor or ThreadPoolExecutor(max_workers=PROBE_WORKERS, thread_name_prefix="probe")
        self._ttl = ttl
        self._max_pending = max_pending
        self._max_per_namespace = max_pending_per_namespace
        self._expiry = expiry
        self._lock = threading.Lock()
        #: Least recently asked first.
        self._entries: OrderedDict[ProbeKey, _Entry] = OrderedDict()
        self._by_job_flow: dict[str, set[ProbeKey]] = {}
        self._in_hand: set[ProbeKey] = set()
        self._in_hand_by_namespace: dict[str, int] = {}
        self._queue = FairQueue()
        self._closed = False
        #: How many results expiry has looked at, ever (what `_expire` costs; tests assert it).
        self.expiry_examined = 0

    def result(self, key: ProbeKey, run: Callable[[], ProbeResult], done: Callable[[], None]) -> ProbeResult | None:
        now = self._clock.now()
        with self._lock:
            self._expire(now)
            entry = self._entries.get(key)
            if entry is not None:
                entry.last_asked = now
                self._entries.move_to_end(key)
                if entry.result is not None and now - entry.at < self._ttl:
                    return entry.result
            if not self._has_room(key):
                return None  # a result older than `ttl` is never used, even while it is re-checked
            self._take(key, now, entry is None)
            self._queue.push(_Queued(key, run, done, now))
        try:
            self._executor.submit(self._run_next)  # one turn of the pool per queued check
        except RuntimeError:  # the pool was shut down under us: the process is stopping
            with self._lock:
                self._queue.remove(key)
                self._release(key)
            return None
        with self._lock:  # an inline executor (tests) has finished already
            entry = self._entries.get(key)
            return entry.result if entry is not None and key not in self._in_hand else None

    def _has_room(self, key: ProbeKey) -> bool:
        return not (
            key in self._in_hand
            or self._closed
            or len(self._in_hand) >= self._max_pending
            or self._in_hand_by_namespace.get(key.namespace, 0) >= self._max_per_namespace
        )

    def _take(self, key: ProbeKey, now: float, new: bool) -> None:
        self._in_hand.add(key)
        self._in_hand_by_namespace[key.namespace] = self._in_hand_by_namespace.get(key.namespace, 0) + 1
        if new:
            self._entries[key] = _Entry(None, now, now)
            self._by_job_flow.setdefault(key.job_flow_uid, set()).add(key)

    def _release(self, key: ProbeKey) -> None:
        if key not in self._in_hand:
            return
        self._in_hand.discard(key)
        left = self._in_hand_by_namespace[key.namespace] - 1
        if left:
            self._in_hand_by_namespace[key.namespace] = left
        else:
            del self._in_hand_by_namespace[key.namespace]

    def _run_next(self) -> None:
        """One turn of a pool thread: the check whose namespace's turn it is, not necessarily the
        one whose submission queued this turn."""
        with self._lock:
            item = self._queue.pop()
        if item is None:
            return
        try:
            outcome = item.run()
        except Exception as err:  # noqa: BLE001 - a check that raised is a failed check
            outcome = ProbeResult(False, f"probe error: {err}")
        with self._lock:
            self._release(item.key)
            entry = self._entries.get(item.key)
            if entry is None:
                return  # forgotten meanwhile (the JobFlow was deleted)
            entry.result, entry.at = outcome, item.submitted
        item.done()

    def _expire(self, now: float) -> None:
        """Drop the results nobody asked for in `expiry`, from the front of the last-asked order.

        A result whose check is in hand is kept: it counts as asked now and goes to the back, so it
        is looked at again only one `expiry` later.
        """
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            self.expiry_examined += 1
            if now - entry.last_asked <= self._expiry:
                return
            if key in self._in_hand:
                entry.last_asked = now
                self._entries.move_to_end(key)
                continue
            self._drop(key)

    def _drop(self, key: ProbeKey) -> None:
        del self._entries[key]
        keys = self._by_job_flow.get(key.job_flow_uid)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._by_job_flow[key.job_flow_uid]

    def forget(self, job_flow_uid: str) -> None:
        """Drop every result of one JobFlow object (it was deleted)."""
        with self._lock:
            for key in list(self._by_job_flow.get(job_flow_uid, ())):
                self._drop(key)

    def pending(self) -> int:
        with self._lock:
            return len(self._in_hand)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def shutdown(self) -> None:
        """Stop taking checks; the running ones end within their deadline (threads are not joined)."""
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)
