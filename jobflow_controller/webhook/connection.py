"""What one connection may cost the webhook: a deadline on its whole request, and shared byte budgets.

``http.server`` reads a request through ``rfile`` and puts a timeout on each socket read, so a
client sending one byte every few seconds keeps its thread for as long as it likes. The
``DeadlineReader`` under ``rfile`` gives every read only what is left of one deadline set when the
connection was accepted, and stops reading past an allowance the handler raises as it goes (the
headers' limit, then the body's length), so nothing can be read past the limits whatever the
client sends. ``ConnectionCap`` is the connections open at once, which ``BoundedHTTPServer`` counts
at accept (the webhook counts them per client instead: ``clients.ClientShares``). The manager's
health and metrics servers use the reader and the server too.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

import structlog

__all__ = ["BoundedHTTPServer", "ConnectionCap", "DeadlineReader", "RequestTooLarge", "linger"]

log = structlog.get_logger("jobflow_controller.webhook")

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


class BoundedHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server whose connections are capped at accept and each given one deadline.

    At most ``max_connections`` are open at once, counted from accept to close (``ConnectionCap``);
    one more is closed in the accept loop, so it costs no thread (``admit`` and ``release``, which the
    webhook replaces with its per-client shares). Each connection's thread knows its
    deadline (``connection_deadline``), set when it starts, for a ``DeadlineReader`` and for a TLS
    handshake. Subclasses serve a connection in ``serve_connection`` (plain: ``handle_connection``).
    The webhook and the manager's health and metrics servers are ones.
    """

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        max_connections: int,
        request_deadline: float,
        what: str,
    ) -> None:
        self.connections = ConnectionCap(max_connections)
        self.request_deadline = request_deadline
        self._what = what
        self._deadlines = threading.local()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.admit(request, client_address):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.release(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.release(request)

    def admit(self, request: Any, client_address: Any) -> bool:
        """Whether a connection just accepted may be served (in the accept loop: no I/O here)."""
        admitted, newly_full = self.connections.enter()
        if not admitted and newly_full:  # once per spell, not once per connection refused
            log.warning(
                f"closing new {self._what} connections: too many are open",
                port=self.server_address[1],
                limit=self.connections.limit,
            )
        return admitted

    def release(self, request: Any) -> None:
        """An admitted connection is done (its thread ends, or it never started)."""
        self.connections.leave()

    def connection_deadline(self) -> float:
        """The deadline of the connection this thread serves (``time.monotonic``)."""
        deadline: float = self._deadlines.value
        return deadline

    def finish_request(self, request: Any, client_address: Any) -> None:
        self._deadlines.value = time.monotonic() + self.request_deadline
        self.serve_connection(request, client_address)

    def serve_connection(self, request: Any, client_address: Any) -> None:
        self.handle_connection(request, client_address)

    def handle_connection(self, connection: Any, client_address: Any) -> None:
        """Run the handler on ``connection`` (the accepted socket, or the TLS one around it)."""
        super().finish_request(connection, client_address)


def linger(connection: socket.socket, seconds: float, limit: int, chunk: int) -> None:
    """Half-close, and read and drop what the client still sends, before the connection is closed.

    A request answered before its body was read (a refusal) leaves the body unread; closing then
    makes the kernel reset the connection, and the client may lose the answer before reading it. So
    the answer is followed by a FIN and up to ``limit`` bytes or ``seconds`` of reading
    (one deadline for all of it, so a drip cannot extend it), as servers do for a lingering close.
    Raw socket calls: no TLS record is sent or decoded here.
    """
    until = time.monotonic() + seconds
    drained = 0
    try:
        socket.socket.shutdown(connection, socket.SHUT_WR)
        while drained < limit and (left := until - time.monotonic()) > 0:
            connection.settimeout(left)
            if not (data := socket.socket.recv(connection, chunk)):
                return
            drained += len(data)
    except OSError:  # the client is gone, or still sending after ``seconds``
        pass
