"""Fair shares of the webhook between client addresses: its connections and its body bytes.

The global caps (``MAX_CONNECTIONS``, ``MAX_BODY_BYTES_IN_FLIGHT``) bound what the webhook holds,
but alone they let one client hold all of it, and the API server, which calls from one address, is
then refused with everyone else. So the caps are shared out by client address:

* no address may hold more than its own cap (half of each global one), so one address can never
  take the webhook alone;
* when a global cap is reached all the same (several addresses), a newcomer whose address holds
  less than the biggest holder's takes from it: the biggest holder's oldest connection still
  reading its request (TLS handshake, headers or body) is shut down, and its seat and bytes are
  the newcomer's at once. Connections whose request is read (a review, an answer) are never taken.

So an address that is not the API server's can cost the API server at most an equal share: the
API server's next call finds room unless it already holds as much as the biggest holder, and its
own connections finish reading in milliseconds. What fairness cannot give is room against many
addresses each holding a little (every tenant pod has one): against those, the headers' deadline
(``HEADERS_DEADLINE``) and the NetworkPolicy (docs/webhook.md).

A seat is shut down (``shutdown(2)``, both ways) rather than closed, from the thread that takes it,
under this ledger's lock: the owning thread's blocked read returns at once, it sees ``evicted``, and
it closes the socket itself, after ``closing`` (under the same lock) so an eviction never reaches a
descriptor that was closed and reused.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

__all__ = ["BodyRefusal", "ClientShares", "Seat"]


@dataclass(eq=False)
class Seat:
    """One admitted connection of the client at ``client`` (its address)."""

    client: str
    sock: socket.socket
    order: int  # the accept order: the oldest gives way first
    reading: bool = True  # until its request is read: only then may it be taken
    held: int = 0  # body bytes charged to it
    evicted: bool = False
    closed: bool = False


@dataclass
class _Client:
    seats: list[Seat] = field(default_factory=list)  # oldest first
    held: int = 0


class BodyRefusal(Enum):
    """Why ``ClientShares.take`` refused body bytes."""

    EVICTED = "evicted"  # the seat was taken by another client
    CLIENT = "client"  # the client's own cap
    SERVER = "server"  # the global cap, with nothing fair to take


def _shutdown(sock: socket.socket) -> None:
    # The plain socket's call: no TLS record is sent, the fd is only shut down. OSError: gone already.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class ClientShares:
    """Connections and body bytes held, by client address, under global and per-client caps."""

    def __init__(
        self,
        *,
        max_connections: int,
        max_connections_per_client: int,
        max_bytes: int,
        max_bytes_per_client: int,
        shutdown: Callable[[socket.socket], None] = _shutdown,
    ) -> None:
        self.max_connections = max_connections
        self.max_connections_per_client = max_connections_per_client
        self.max_bytes = max_bytes
        self.max_bytes_per_client = max_bytes_per_client
        self._shutdown = shutdown
        self._clients: dict[str, _Client] = {}
        self._open = 0  # seats not evicted
        self._threads = 0  # seats not yet left, evicted ones included
        self._held = 0
        self._order = itertools.count()
        self._lock = threading.Condition()

    # --- connections -----------------------------------------------------------------------------

    def enter(self, client: str, sock: socket.socket) -> Seat | None:
        """A seat for a new connection from ``client``, or None: it is to be closed unserved."""
        with self._lock:
            mine = self._clients.get(client)
            count = len(mine.seats) if mine else 0
            if count >= self.max_connections_per_client:
                return None
            if self._open >= self.max_connections and not self._evict_for_seat(client, count):
                return None
            seat = Seat(client, sock, next(self._order))
            self._clients.setdefault(client, _Client()).seats.append(seat)
            self._open += 1
            self._threads += 1
            return seat

    def rewrap(self, seat: Seat, wrap: Callable[[socket.socket], socket.socket]) -> socket.socket:
        """Replace the seat's socket by ``wrap(socket)`` (a TLS one around it), so an eviction reaches it."""
        with self._lock:
            seat.sock = wrap(seat.sock)
            if seat.evicted:
                self._shutdown(seat.sock)
            return seat.sock

    def done_reading(self, seat: Seat) -> None:
        """The seat's request is read: from now on it is never taken."""
        with self._lock:
            seat.reading = False

    def closing(self, seat: Seat) -> None:
        """The owner is about to close the seat's socket: no eviction may shut it down after this."""
        with self._lock:
            seat.closed = True

    def leave(self, seat: Seat) -> None:
        """The seat's thread is done; what it still held is given back."""
        with self._lock:
            if not seat.evicted:
                self._release(seat)
            self._threads -= 1
            self._lock.notify_all()

    @property
    def open(self) -> int:
        with self._lock:
            return self._open

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every seat's thread has left; False if some have not after ``timeout`` seconds."""
        with self._lock:
            return self._lock.wait_for(lambda: self._threads == 0, timeout)

    # --- body bytes ------------------------------------------------------------------------------

    def take(self, seat: Seat, count: int) -> BodyRefusal | None:
        """Charge ``count`` body bytes to ``seat``; why not, if they may not be held."""
        with self._lock:
            if seat.evicted:
                return BodyRefusal.EVICTED
            mine = self._clients[seat.client]
            if mine.held + count > self.max_bytes_per_client:
                return BodyRefusal.CLIENT
            while self._held + count > self.max_bytes:
                if not self._evict_for_bytes(seat.client, mine.held + count):
                    return BodyRefusal.SERVER
            seat.held += count
            mine.held += count
            self._held += count
            return None

    def give_back(self, seat: Seat, count: int) -> None:
        """Give back ``count`` of the seat's bytes (an evicted seat's were given back when it was taken)."""
        with self._lock:
            if seat.evicted:
                return
            seat.held -= count
            self._clients[seat.client].held -= count
            self._held -= count

    @property
    def held(self) -> int:
        with self._lock:
            return self._held

    # --- who gives way (under the lock) ----------------------------------------------------------

    def _evict_for_seat(self, client: str, count: int) -> bool:
        """Take a seat from the address holding the most, if it holds more than ``client`` would:
        its oldest still reading (between addresses holding as many, the oldest of all)."""
        ranked = [
            (len(other.seats), -seat.order, seat)
            for name, other in self._clients.items()
            if name != client and len(other.seats) > count + 1
            for seat in [s for s in other.seats if s.reading][:1]
        ]
        if not ranked:
            return False
        self._evict(max(ranked, key=lambda rank: rank[:2])[2])
        return True

    def _evict_for_bytes(self, client: str, wanted: int) -> bool:
        """Take the biggest body being read of the address holding the most bytes, if it holds more
        than ``client`` would."""
        ranked = [
            (other.held, seat.held, -seat.order, seat)
            for name, other in self._clients.items()
            if name != client and other.held > wanted
            for seat in other.seats
            if seat.reading and seat.held
        ]
        if not ranked:
            return False
        self._evict(max(ranked, key=lambda rank: rank[:3])[3])
        return True

    def _evict(self, seat: Seat) -> None:
        self._release(seat)
        seat.evicted = True
        if not seat.closed:
            self._shutdown(seat.sock)

    def _release(self, seat: Seat) -> None:
        owner = self._clients[seat.client]
        owner.seats.remove(seat)
        owner.held -= seat.held
        self._held -= seat.held
        self._open -= 1
        if not owner.seats:
            del self._clients[seat.client]
