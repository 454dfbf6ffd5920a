"""What one connection may cost the webhook: a deadline on its whole request, and shared byte budgets.

``http.server`` reads a request through ``rfile`` and puts a timeout on each socket read, so a
client sending one byte every few seconds keeps its thread for as long as it likes. The
``DeadlineReader`` under ``rfile`` gives every read only what is left of one deadline set when the
connection was accepted, and stops reading past an allowance the handler raises as it goes (the
headers' limit, then the body's length), so nothing can be read past the limits whatever the
client sends. ``ByteBudget`` is the body bytes every connection holds at once, and
``ConnectionCap`` the connections open at once. The manager's health and metrics servers use the
reader and the cap too.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from typing import Final

__all__ = ["ByteBudget", "ConnectionCap", "DeadlineReader", "RequestTooLarge"]

#: A socket timeout of 0 would make the socket non-blocking; the last read gets at least this.
_MIN_TIMEOUT: Final = 0.001


class RequestTooLarge(Exception):
    """The client sent more than the reader was allowed to read."""


class DeadlineReader(io.RawIOBase):
    """The bytes of ``sock``, each read bounded by what is left until ``deadline`` (``time.monotonic``)."""

    def __init__(self, sock: socket.socket, deadline: float, allowance: int) -> None:
        super().__init__()
        self._sock = sock
        self.deadline = deadline
        self._allowance = allowance

    def readable(self) -> bool:
        return True

    def allow(self, count: int) -> None:
        """Let ``count`` more bytes be read (a body's length once its headers are read)."""
        self._allowance += count

    def remaining(self) -> float:
        """Seconds left until the deadline (negative once it has passed)."""
        return self.deadline - time.monotonic()

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        if self._allowance <= 0:
            raise RequestTooLarge
        left = self.remaining()
        if left <= 0:
            raise TimeoutError("the request's deadline passed")
        self._sock.settimeout(max(left, _MIN_TIMEOUT))
        with memoryview(buffer) as view:
            count = self._sock.recv_into(view[: self._allowance])
        self._allowance -= count
        return count


class ByteBudget:
    """A count of bytes shared by every connection; ``take`` refuses what would pass ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._used = 0
        self._lock = threading.Lock()

    def take(self, count: int) -> bool:
        with self._lock:
            if self._used + count > self.limit:
                return False
            self._used += count
            return True

    def give_back(self, count: int) -> None:
        with self._lock:
            self._used -= count

    @property
    def used(self) -> int:
        with self._lock:
            return self._used


class ConnectionCap:
    """The connections a server holds open at once, each one thread: ``enter`` refuses one past ``limit``.

    A server calls ``enter`` in its accept loop and closes the connection there when it returns
    False, so a flood costs no thread; it calls ``leave`` once the connection is closed.
    ``newly_full`` is true for the first refusal of a spell, so the server logs it once, not once
    per connection refused.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open = 0
        self._full = False
        self._idle = threading.Condition()

    def enter(self) -> tuple[bool, bool]:
        """(admitted, newly_full): whether the connection may be served, and whether the cap has
        just been reached (the first refusal since connections were last admitted)."""
        with self._idle:
            full = self._open >= self.limit
            if not full:
                self._open += 1
            newly_full, self._full = full and not self._full, full
        return not full, newly_full

    def leave(self) -> None:
        with self._idle:
            self._open -= 1
            self._idle.notify_all()

    @property
    def open(self) -> int:
        with self._idle:
            return self._open

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no connection is open; False if some still are after ``timeout`` seconds."""
        with self._idle:
            return self._idle.wait_for(lambda: self._open == 0, timeout)
