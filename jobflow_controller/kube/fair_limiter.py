"""The client-side QPS/burst limiter, handing its tokens to the waiting tenants in turn (ours).

client-go's token bucket (rest.Config's QPS and Burst, golang.org/x/time/rate) serves whoever asked
first: each request reserves the next token and sleeps until it. Under a backlog a request of a
JobFlow that just arrived waits behind every request already waiting, whoever's they are. Here the
tokens come at the same rate and burst, but a request that finds none waits in its tenant's line
(its namespace, read from the request's path; "" for cluster-scoped paths), and each token goes to
the waiting tenant that was granted the fewest lately (start-time fair queuing, one token a
request: workqueue/fair_share.py), FIFO within a tenant. So a namespace that makes few requests
gets the next token, ahead of the busy namespaces, which share the rest equally; it never waits
behind another tenant's backlog. Same tokens, same rate: only who gets the next one
changes (docs/fairness.md compares it with the API server's Priority and Fairness).

`FairTokens` is the rule, on explicit times, with no lock and no sleeping (tests drive it with
numbers); `FairTokenBucket` is the limiter the REST client waits on.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass

from jobflow_controller.kube import errors
from workqueue import Clock, FairShare, RealClock

#: A waiting request looks at its stop event at least this often (a token may be seconds away).
STOP_POLL_SECONDS = 0.1


def tenant_of_path(path: str) -> str:
    """The namespace a request's path names (`.../namespaces/<ns>/...`); "" when it names none."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part == "namespaces":
            return parts[i + 1]
    return ""


@dataclass(eq=False)
class Ticket:
    """One waiting request."""

    tenant: Hashable
    granted: bool = False


class FairTokens:
    """Tokens at `qps` up to `burst`, granted to waiting tickets tenant by tenant in turn."""

    def __init__(self, qps: float, burst: int, now: float) -> None:
        self.qps = qps if qps > 0 else math.inf
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._last = now
        self._lines: dict[Hashable, deque[Ticket]] = {}
        #: The tenants with a ticket waiting, in the order they came (ties go to the first).
        self._ring: deque[Hashable] = deque()
        #: Whose turn: the waiting tenant that was granted the fewest tokens lately (fair_share.py).
        self._share = FairShare(estimate=1.0)

    def __len__(self) -> int:
        """How many tickets wait."""
        return sum(len(line) for line in self._lines.values())

    def take(self, tenant: Hashable, now: float) -> Ticket:
        """A ticket for one request of `tenant`: granted at once if a token is free (no one waits
        then: a free token is always granted), else in `tenant`'s line."""
        ticket = Ticket(tenant)
        self.grant(now)
        if self._tokens >= 1:
            self._tokens -= 1
            self._share.serve(tenant)
            ticket.granted = True
            return ticket
        line = self._lines.get(tenant)
        if line is None:
            line = self._lines[tenant] = deque()
            self._ring.append(tenant)  # its turn comes after each tenant already waiting
        line.append(ticket)
        return ticket

    def grant(self, now: float) -> list[Ticket]:
        """Refill to `now`, and hand each whole token to the next tenant's oldest ticket."""
        self._tokens = min(float(self.burst), self._tokens + max(0.0, now - self._last) * self.qps)
        self._last = max(self._last, now)
        granted = []
        while self._tokens >= 1 and self._ring:
            tenant = self._ring[0] if len(self._ring) == 1 else self._share.pick(self._ring)
            self._ring.remove(tenant)
            self._share.serve(tenant)
            line = self._lines[tenant]
            ticket = line.popleft()
            ticket.granted = True
            granted.append(ticket)
            self._tokens -= 1
            if line:
                self._ring.append(tenant)
            else:
                del self._lines[tenant]
        return granted

    def cancel(self, ticket: Ticket) -> None:
        """A waiting request gave up (its client is stopping)."""
        line = self._lines.get(ticket.tenant)
        if ticket.granted or line is None or ticket not in line:
            return
        line.remove(ticket)
        if not line:
            del self._lines[ticket.tenant]
            self._ring.remove(ticket.tenant)

    def next_token_in(self) -> float:
        """Seconds from the last `grant` until the next whole token (0 if one is free)."""
        return 0.0 if self._tokens >= 1 else (1 - self._tokens) / self.qps

    def backlog(self, now: float) -> float:
        """How long a request made now would wait if it were last in line (0 while a token is free)."""
        self.grant(now)
        need = len(self) + 1 - self._tokens
        return 0.0 if need <= 0 else need / self.qps


class FairTokenBucket:
    """The REST client's limiter: `accept(stop, tenant)` blocks until `FairTokens` grants a token.

    A qps of 0 (or less) means no limit, as in rest.Config.
    """

    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        self._clock: Clock = clock or RealClock()
        self._tokens = FairTokens(qps, burst, self._clock.now())
        self._cond = threading.Condition()

    def backlog(self) -> float:
        with self._cond:
            return self._tokens.backlog(self._clock.now())

    def accept(self, stop: threading.Event | None = None, tenant: Hashable = "") -> None:
        """Wait for a token in `tenant`'s turn; raise `RequestCancelled` if `stop` is set first."""
        if stop is not None and stop.is_set():
            raise errors.RequestCancelled("client rate limiter Wait returned an error: context canceled")
        if math.isinf(self._tokens.qps):
            return
        with self._cond:
            ticket = self._tokens.take(tenant, self._clock.now())
            while not ticket.granted:
                if stop is not None and stop.is_set():
                    self._tokens.cancel(ticket)
                    raise errors.RequestCancelled("client rate limiter Wait returned an error: context canceled")
                self._cond.wait(min(max(self._tokens.next_token_in(), 0.001), STOP_POLL_SECONDS))
                if self._tokens.grant(self._clock.now()):
                    self._cond.notify_all()  # whoever refills grants the others' turns too: wake them
