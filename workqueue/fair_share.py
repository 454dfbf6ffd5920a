"""Start-time fair queuing over tenants (SFQ, as the API server's Priority and Fairness orders its
queues): who goes next among tenants that wait.

Each tenant has a virtual finish tag: the virtual time at which the work it was handed so far would
end if every tenant waiting were served at the same rate. The tenant with the smallest start tag
(its finish tag, or the system's virtual time if it has fallen behind, that is, if it was idle)
goes next, and the system's virtual time moves to that start. A tenant handed `cost` of work gets
its tag moved by `cost`; `charge` corrects it once the real cost is known (APF's seat-seconds).

So a tenant that was idle, or that uses less than its share, starts at the current virtual time,
ahead of every busy tenant whose tag runs ahead of it: it waits for the work under way, not for
its turn among N tenants, let alone behind another tenant's backlog. Busy tenants share what is
left equally. Tags of tenants that fell behind the virtual time are forgotten: such a tenant is
as good as new.

Thread-safe: the queue picks under its own lock, and a worker charges after its sync.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable

__all__ = ["FairShare"]


class FairShare:
    """SFQ tags per tenant; `pick` the next one, `serve` it, `charge` what its work really cost."""

    def __init__(self, estimate: float = 1.0) -> None:
        #: The cost assumed when work is handed out (corrected by `charge`).
        self.estimate = estimate
        self._virtual = 0.0
        self._finish: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def _start(self, tenant: Hashable) -> float:
        return max(self._virtual, self._finish.get(tenant, self._virtual))

    def pick(self, tenants: Iterable[Hashable]) -> Hashable:
        """The tenant that goes next: the smallest start tag; among equals, the first given."""
        with self._lock:
            return min(tenants, key=self._start)

    def serve(self, tenant: Hashable) -> None:
        """`tenant` was handed one piece of work (of `estimate` cost, until charged)."""
        with self._lock:
            start = self._start(tenant)
            self._virtual = start
            self._finish[tenant] = start + self.estimate
            if len(self._finish) > 64:  # forget the tenants that fell behind: they start at the virtual time
                self._finish = {t: f for t, f in self._finish.items() if f > self._virtual}

    def charge(self, tenant: Hashable, cost: float) -> None:
        """The work handed to `tenant` cost `cost`, not `estimate`."""
        with self._lock:
            if tenant in self._finish:
                self._finish[tenant] = max(self._virtual, self._finish[tenant] + cost - self.estimate)

    def tag(self, tenant: Hashable) -> float:
        """A tenant's finish tag relative to the virtual time (0: it would start now); for tests."""
        with self._lock:
            return self._start(tenant) - self._virtual
