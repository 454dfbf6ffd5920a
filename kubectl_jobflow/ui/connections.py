"""The UI server's limits on connections (issue 33): deadlines on reading a request, and caps on
connections in total and per client address that never let an unauthenticated one hold a slot an
authenticated one needs.

Anything on the machine can connect to 127.0.0.1, and each connection is a thread. Without limits,
a few hundred connections that send nothing (or one byte every few seconds) would hold threads for
ever before the token is even checked. So:
- a request's line and headers must arrive within `HEADER_TIMEOUT` (counted from the connection's
  accept for its first request, from the first byte for a later one) and be at most
  `MAX_HEAD_BYTES`; a kept-alive connection idle `IDLE_TIMEOUT` between requests is closed; a body
  must arrive within `BODY_TIMEOUT`; a response or stream write that makes no progress for
  `WRITE_TIMEOUT` ends the connection;
- at most `MAX_CONNECTIONS` connections, and `MAX_PER_CLIENT` from one client address, are open at
  once. When a cap is reached, the oldest connection that has not yet shown the token or cookie is
  closed to admit the new one; only when every connection counted has shown it is the new one
  refused. On loopback every local process is 127.0.0.1, so the per-client cap only separates
  clients that bind other 127/8 addresses; eviction is what keeps the browser served.
"""

from __future__ import annotations

import contextlib
import io
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

HEADER_TIMEOUT = 10.0
IDLE_TIMEOUT = 30.0
BODY_TIMEOUT = 10.0
WRITE_TIMEOUT = 30.0
MAX_HEAD_BYTES = 32 * 1024
MAX_CONNECTIONS = 64
MAX_PER_CLIENT = 48


class DeadlineReader(io.RawIOBase):
    """A socket's reading side under a deadline and a byte budget, both re-armed per request.

    A per-recv socket timeout alone lets a client send one byte just before each timeout for ever;
    here each recv gets only the time left until the deadline. Past the deadline or the budget it
    raises `TimeoutError`, which the stdlib request handler answers by closing the connection.
    """

    def __init__(self, sock: socket.socket, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._sock = sock
        self._clock = clock
        self._first_deadline = clock() + HEADER_TIMEOUT
        self._then: float | None = None
        self._deadline: float | None = None
        self._budget = MAX_HEAD_BYTES

    def readable(self) -> bool:
        return True

    def arm(self, first_byte_within: float, then_within: float | None, budget: int) -> None:
        """The next bytes must start within `first_byte_within` seconds; once they do, the rest
        within `then_within` of that (None: the same deadline); `budget` bytes at most."""
        self._first_deadline = self._clock() + first_byte_within
        self._then = then_within
        self._deadline = None
        self._budget = budget

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._budget <= 0:
            raise TimeoutError("the request is larger than allowed")
        deadline = self._first_deadline if self._deadline is None else self._deadline
        remaining = deadline - self._clock()
        if remaining <= 0:
            raise TimeoutError("the request did not arrive in time")
        self._sock.settimeout(remaining)
        view = memoryview(buffer)
        count = self._sock.recv_into(view[: min(len(view), self._budget)])
        if count and self._deadline is None:
            self._deadline = deadline if self._then is None else self._clock() + self._then
        self._budget -= count
        return count


@dataclass
class _Entry:
    client: str
    authenticated: bool = False


class ConnectionGate:
    """Which connections are open, from which client, and whether each has authenticated.

    Pure bookkeeping under a lock: `admit` says whether a new connection may be served and which
    open ones to close for it; the server closes them.
    """

    def __init__(self, max_total: int = MAX_CONNECTIONS, max_per_client: int = MAX_PER_CLIENT) -> None:
        self.max_total = max_total
        self.max_per_client = max_per_client
        self._lock = threading.Lock()
        self._open: OrderedDict[Hashable, _Entry] = OrderedDict()  # oldest first
        self.refused = 0
        self.evicted = 0

    def _oldest_unauthenticated(self, client: str | None) -> Hashable | None:
        for conn, entry in self._open.items():
            if not entry.authenticated and (client is None or entry.client == client):
                return conn
        return None

    def _make_room(self, client: str | None, evicted: list[Hashable]) -> bool:
        victim = self._oldest_unauthenticated(client)
        if victim is None:
            return False
        del self._open[victim]
        evicted.append(victim)
        return True

    def admit(self, conn: Hashable, client: str) -> tuple[bool, list[Hashable]]:
        """(served, the connections to close to serve it)."""
        evicted: list[Hashable] = []
        with self._lock:
            from_client = sum(1 for e in self._open.values() if e.client == client)
            admitted = (from_client < self.max_per_client or self._make_room(client, evicted)) and (
                len(self._open) < self.max_total or self._make_room(None, evicted)
            )
            if admitted:
                self._open[conn] = _Entry(client)
            else:
                self.refused += 1
            self.evicted += len(evicted)
        return admitted, evicted

    def authenticate(self, conn: Hashable) -> None:
        with self._lock:
            entry = self._open.get(conn)
            if entry is not None:
                entry.authenticated = True

    def release(self, conn: Hashable) -> None:
        with self._lock:
            self._open.pop(conn, None)

    def counts(self) -> dict[str, int]:
        with self._lock:
            authenticated = sum(1 for e in self._open.values() if e.authenticated)
            return {
                "open": len(self._open),
                "authenticated": authenticated,
                "refused": self.refused,
                "evicted": self.evicted,
            }


def close_now(conn: object) -> None:
    """End a connection another thread is serving: its blocked read returns, its thread ends."""
    if isinstance(conn, socket.socket):
        with contextlib.suppress(OSError):  # already closed by its client
            conn.shutdown(socket.SHUT_RDWR)
