"""Priorities for the work queue (controller-runtime's ``pkg/controller/priorityqueue``, as a storage).

client-go's queue hands items out in the order they were first added. controller-runtime added a
priority queue (v0.20) for the case where that order hurts: a controller whose queue holds many
items of little urgency (its initial list, say) behind which the ones a user waits for are stuck.
Here it is what client-go's pluggable ``Queue`` storage (``QueueStorage``) is for: the queue
itself keeps its contract (stingy, dirty and processing sets, re-add after ``done``, drain), and
only which ready item is handed out next changes:

* each item is in one lane, by an integer priority; ``pop`` takes the oldest item of the highest
  non-empty lane, so within one priority the queue is as fair as the FIFO one;
* adding an item that is already queued (or in flight: it is queued again after ``done``) with a
  higher priority moves it up, to the back of that lane; a lower or equal one leaves it where it is.
  An item never moves down: whoever asked for it urgently still gets it soon;
* ``add`` without a priority is ``DEFAULT_PRIORITY`` (0), as in controller-runtime.

Ours, not controller-runtime's (whose lanes are strict): a lane may be given a share (``shares``,
priority -> N): while it holds items, at least one pop in N is from it, however busy the lanes above
are. Strict lanes starve a lower one for as long as the higher ones stay busy; a share bounds that
wait by the pops, not by the lulls. Without ``shares`` the lanes are strict, as controller-runtime's.

Ours too: items may belong to tenants (``tenant_of``, item -> key, e.g. a namespace). Within a lane the
tenants with ready items take turns, one pop each (round-robin), and each tenant's items stay FIFO: a
tenant with a hundred items ready waits its turn like one with a single item, so a newly ready
tenant's item is handed out after at most one pop per other tenant of its lane, never behind
another tenant's backlog. Without ``tenant_of`` every item is one tenant's: FIFO, as before. With a
``FairShare`` the turn is not round-robin but start-time fair queuing by the work each tenant was
handed (fair_share.py): a tenant that was idle or uses less than its share goes before the busy
ones, whose turns split the rest.

Unlike controller-runtime's ``GetWithPriority``, a worker is not told which lane its item came
from: nothing in the controller asks, the lane only decides when an item is handed out.

Moving an item up leaves its old entry behind, stale: every entry carries a sequence number and
counts only while it is the item's current one, so a move is O(1) and ``pop`` skips the stale ones.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from workqueue.fair_share import FairShare

__all__ = ["DEFAULT_PRIORITY", "PriorityStorage"]

T = TypeVar("T", bound=Hashable)

#: The priority of an item added without one (controller-runtime's default, 0).
DEFAULT_PRIORITY = 0


class _Lane(Generic[T]):
    """One priority's entries: FIFO per tenant, the tenants with live entries in turn (`ring`).

    A tenant is in `ring` exactly while it has live entries (`live`); its deque may also hold stale
    ones, skipped on the way (and dropped with the deque once it has no live entry)."""

    def __init__(self) -> None:
        self.queues: dict[Hashable, deque[tuple[int, T]]] = {}
        self.live: dict[Hashable, int] = {}
        self.ring: deque[Hashable] = deque()

    def append(self, tenant: Hashable, seq: int, item: T) -> None:
        self.queues.setdefault(tenant, deque()).append((seq, item))
        before = self.live.get(tenant, 0)
        self.live[tenant] = before + 1
        if not before:
            self.ring.append(tenant)  # a newly ready tenant's turn comes after the others' next one

    def went_stale(self, tenant: Hashable) -> None:
        """One of `tenant`'s live entries was superseded (the item moved to another lane)."""
        left = self.live[tenant] - 1
        if left:
            self.live[tenant] = left
            return
        del self.live[tenant], self.queues[tenant]
        self.ring.remove(tenant)

    def pop(self, is_live: Callable[[T, int], bool], share: FairShare | None) -> T:
        """The oldest live entry of the tenant whose turn it is (the first in `ring`, or the one
        `share` picks, ties in `ring` order); that tenant goes to the back."""
        if share is None or len(self.ring) == 1:
            tenant = self.ring.popleft()
        else:
            tenant = share.pick(self.ring)
            self.ring.remove(tenant)
        if share is not None:
            share.serve(tenant)
        queue = self.queues[tenant]
        seq, item = queue.popleft()
        while not is_live(item, seq):
            seq, item = queue.popleft()
        left = self.live[tenant] - 1
        if left:
            self.live[tenant] = left
            self.ring.append(tenant)
        else:
            del self.live[tenant], self.queues[tenant]
        return item


class PriorityStorage(Generic[T]):
    """The ready items in lanes by priority: highest lane first, FIFO within a lane.

    Used by ``Queue`` under its lock, which is why it has no lock of its own. The queue calls
    ``request`` before every add with the priority asked for; ``push`` (the item becomes ready) and
    ``touch`` (it is ready already) then put it in the highest lane any request since it was last
    handed out has asked for.
    """

    def __init__(
        self,
        shares: dict[int, int] | None = None,
        tenant_of: Callable[[T], Hashable] | None = None,
        fair_share: FairShare | None = None,
    ) -> None:
        #: item -> its tenant; the tenants of a lane take turns (None: one tenant, FIFO).
        self._tenant_of = tenant_of
        #: Whose turn it is among a lane's tenants, by the work each was handed (None: round-robin).
        self._fair_share = fair_share
        #: priority -> N: that lane gets at least one pop in N while it holds items (N >= 2).
        self._shares = dict(shares or {})
        if any(n < 2 for n in self._shares.values()):
            raise ValueError("a lane's share is one pop in N, N >= 2")
        #: Per lane with a share: the pops that went to a higher lane since it was last served.
        self._passed: dict[int, int] = dict.fromkeys(self._shares, 0)
        self._lanes: dict[int, _Lane[T]] = {}
        #: Lane priorities in descending order: the few a controller uses, kept sorted on insert.
        self._order: list[int] = []
        #: The live entry of each ready item: (priority, sequence number).
        self._entries: dict[T, tuple[int, int]] = {}
        #: The priority each item has been asked for since it was last handed out.
        self._requested: dict[T, int] = {}
        #: How many live entries each lane holds, so that counting never scans.
        self._counts: dict[int, int] = {}
        self._seq = itertools.count()

    # -- what the queue calls --------------------------------------------------------------------
    def request(self, item: T, priority: int | None) -> None:
        """Record that `item` is being added with `priority` (None: the default); the highest wins."""
        wanted = DEFAULT_PRIORITY if priority is None else priority
        earlier = self._requested.get(item)
        if earlier is None or wanted > earlier:
            self._requested[item] = wanted

    def push(self, item: T) -> None:
        self._enter(item, self._requested.pop(item, DEFAULT_PRIORITY))

    def touch(self, item: T) -> None:
        """A duplicate add of a ready item: move it up if it was asked for with a higher priority."""
        wanted = self._requested.pop(item, DEFAULT_PRIORITY)
        live = self._entries.get(item)
        if live is not None and wanted > live[0]:
            self._enter(item, wanted)

    def pop(self) -> T:
        chosen = next((p for p in self._order if self._counts.get(p)), None)
        if chosen is None:
            raise IndexError("pop from an empty PriorityStorage")
        for priority, n in self._shares.items():
            if priority < chosen and self._counts.get(priority) and self._passed[priority] >= n - 1:
                chosen = priority
                break
        for priority in self._shares:
            waiting = priority < chosen and self._counts.get(priority)
            self._passed[priority] = self._passed[priority] + 1 if waiting else 0
        return self._pop_lane(chosen)

    def __len__(self) -> int:
        return len(self._entries)

    # -- internals -------------------------------------------------------------------------------
    def _pop_lane(self, priority: int) -> T:
        """The next live entry of one lane that has one, by its tenants' turns (stale entries are
        dropped on the way)."""
        item = self._lanes[priority].pop(lambda it, seq: self._entries.get(it) == (priority, seq), self._fair_share)
        del self._entries[item]
        self._counts[priority] -= 1
        return item

    def _tenant(self, item: T) -> Hashable:
        return None if self._tenant_of is None else self._tenant_of(item)

    def _enter(self, item: T, priority: int) -> None:
        lane = self._lanes.get(priority)
        if lane is None:
            lane = self._lanes[priority] = _Lane()
            self._order.append(priority)
            self._order.sort(reverse=True)
        tenant = self._tenant(item)
        earlier = self._entries.get(item)
        if earlier is not None:
            self._counts[earlier[0]] -= 1
            self._lanes[earlier[0]].went_stale(tenant)
        seq = next(self._seq)
        self._entries[item] = (priority, seq)
        self._counts[priority] = self._counts.get(priority, 0) + 1
        lane.append(tenant, seq, item)
