"""The Jobs this process created that its informer has not shown yet (client-go's ControllerExpectations).

A create is answered at once, but the Job informer shows the new Job only when its watch event
arrives, milliseconds to seconds later. A sync of the same JobFlow in between (the next request
for it, on another worker, or the status lane's) finds no Job of that name in the cache and POSTs
it again: the API server refuses it (AlreadyExists) and the controller then GETs the Job to see
whose it is. Harmless, but two wasted requests per race, and with several workers and priority
lanes the races are no longer rare. client-go's ReplicaSet and Job controllers solve the same gap
with expectations: they count the creates they expect to see and do not act until the informer has
shown them. Ours are by name, because a flow's Job has a fixed name: a created name counts as an
existing Job of ours until the informer shows any Job of that name (added, updated or deleted).

An expectation expires after `EXPECTATIONS_TIMEOUT`, as client-go's do (there 5 minutes), in case
its event never comes (a Job created and deleted again while the watch was down, and the relist
saw neither): the flow's Job is then created again on the next sync, which the resync brings.
"""

from __future__ import annotations

import threading

from workqueue import Clock

#: Seconds after which a create not yet seen is no longer trusted: the resync period's default,
#: so a lost event costs at most one more resync.
EXPECTATIONS_TIMEOUT = 30.0


class CreateExpectations:
    """(namespace, Job name) -> when this process created it, until the Job informer shows that name."""

    def __init__(self, clock: Clock, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self._clock = clock
        self._timeout = timeout
        self._lock = threading.Lock()
        self._created: dict[tuple[str, str], float] = {}

    def created(self, namespace: str, name: str) -> None:
        """Our create of `name` succeeded."""
        with self._lock:
            now = self._clock.now()
            self._expire(now)
            self._created[(namespace, name)] = now

    def _expire(self, now: float) -> None:
        """Drop what has timed out. An expectation is otherwise dropped only when its name is looked
        up or seen, and a JobFlow gone before either (deleted as its Job was created, or its Job's
        event seen before the create returned) would leave one for the life of the process."""
        expired = [key for key, at in self._created.items() if now - at >= self._timeout]
        for key in expired:
            del self._created[key]

    def observed(self, namespace: str, name: str) -> None:
        """The informer shows a Job of that name (or its deletion): the cache speaks for it now."""
        if not self._created:
            return  # the common case, without the lock: every Job event of the cluster comes here
        with self._lock:
            self._created.pop((namespace, name), None)

    def pending(self, namespace: str, name: str) -> bool:
        """Whether we created `name` and the informer has not shown it yet (nor has it expired)."""
        with self._lock:
            at = self._created.get((namespace, name))
            if at is None:
                return False
            if self._clock.now() - at >= self._timeout:
                del self._created[(namespace, name)]
                return False
            return True

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock.now())
            return len(self._created)

    # -- memories.py ------------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        """Nothing to do: an expectation is of a Job name and times out (`_expire`)."""

    def memory_sizes(self) -> dict[str, int]:
        return {"create_expectations": len(self)}
