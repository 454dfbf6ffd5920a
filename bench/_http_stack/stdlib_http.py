"""Variant (b) of bench/versus.py's HTTP A/B: a request and its response on kube/transport.py's kept-alive
socket, written and read by the standard library's `http.client`. Not part of the product: it cost
the controller more CPU than kube/http1.py (docs/decisions/0002-http-stack.md), and is kept here so
that the A/B can be run again. The socket (TLS or not) is made and pooled by `transport.py`; here
`http.client` only frames the bytes.

On top of `http.client`'s own limits (a status or header line of 64 KiB, 100 headers, a chunk-size
line of 64 KiB) the response's framing is checked where `http.client` would read on leniently and a
body's bytes could be taken for the next response (RFC 9112 6.3): differing `Content-Length` values
are refused (it takes the first), a `Transfer-Encoding` other than `chunked` alone is refused (it
would fall back to the length), `Content-Length` beside `chunked` is read as chunked and the
connection then closed, a `Content-Encoding` other than `identity` is refused (we asked for
`identity`), and a body is at most `MAX_BODY`, read `READ_PIECE` at a time when its length is not
announced. The CRLF after each chunk is `http.client`'s to read: it drops those two bytes unchecked.
Every failure is a `ConnectionError` (a response cut short a `ConnectionResetError`), and the
connection is then closed by the transport.
"""

from __future__ import annotations

import http.client
import io
import socket
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["MAX_BODY", "READ_PIECE", "Connection", "Reply", "exchange", "framing", "read_reply"]

#: The largest body read. The controller decodes every body it reads into Python objects, about 5-10
#: times its size, so a body past 1 GiB could not be used by any controller pod: failing the request
#: (the reflector retries with backoff, the error names the limit) beats being OOM-killed. The API
#: server's answers are far below it: an object is at most 3 MiB, and lists come in pages.
MAX_BODY = 1 << 30
#: A body of unannounced length is read this much at a time, against `MAX_BODY`.
READ_PIECE = 1 << 20


class Reply(NamedTuple):
    status: int
    data: bytes
    will_close: bool


class Connection:
    """A connected socket and the `http.client` connection that writes and reads on it."""

    __slots__ = ("http", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        # The host is never used: the socket is ours, the Host header too, and auto_open is off so a
        # closed connection raises instead of dialling a name.
        self.http = http.client.HTTPConnection("connected.invalid")
        self.http.sock = sock
        self.http.auto_open = 0

    def close(self) -> None:
        try:
            self.http.close()
        finally:
            self.sock.close()


class Framing(NamedTuple):
    """What the checks found: the body's announced length (None: chunked or until the close), and
    whether the connection must be closed after it."""

    length: int | None
    will_close: bool


def _values(message: http.client.HTTPMessage, name: str) -> list[str]:
    """Every comma-separated value of every field of that name (RFC 9110 5.3), lowercased, stripped."""
    return [v.strip(" \t").lower() for field in message.get_all(name, ()) for v in field.split(",") if v.strip(" \t")]


def framing(message: http.client.HTTPMessage, will_close: bool) -> Framing:
    """RFC 9112 6.3 where `http.client` is lenient; raises `ConnectionError` for what cannot be read."""
    encoding = _values(message, "content-encoding")
    if encoding not in ([], ["identity"]):
        raise ConnectionError(f"Content-Encoding {encoding!r} cannot be decoded: we asked for identity")
    lengths = set(_values(message, "content-length"))
    coding = _values(message, "transfer-encoding")
    if coding:
        if coding != ["chunked"]:
            raise ConnectionError(f"Transfer-Encoding {coding!r} is not chunked alone: we asked for identity")
        return Framing(None, will_close or bool(lengths))
    if not lengths:
        return Framing(None, True)
    if len(lengths) > 1:
        raise ConnectionError(f"differing Content-Length values: {sorted(lengths)[:4]!r}")
    (length,) = lengths
    if not length.isdigit() or not length.isascii():  # int() would also take "+5", "1_0" and other digits
        raise ConnectionError(f"not a Content-Length: {length[:80]!r}")
    if len(length) > 12 or int(length) > MAX_BODY:  # the digits counted first: int() of 64 KiB is slow
        raise ConnectionError(f"Content-Length {length[:80]} is over the limit of {MAX_BODY} bytes")
    return Framing(int(length), will_close)


def _body(response: http.client.HTTPResponse, length: int | None) -> bytes:
    if length is not None:
        # http.client reads an announced length exactly, or raises IncompleteRead; a list of one
        # value ("2, 2") it did not parse is read here to that length (and the connection closed).
        data = response.read() if response.length == length else response.read(length)
        if len(data) < length:
            raise http.client.IncompleteRead(data, length - len(data))
        return data
    out = io.BytesIO()
    while piece := response.read(READ_PIECE):
        out.write(piece)
        if out.tell() > MAX_BODY:
            raise ConnectionError(f"a body over the limit of {MAX_BODY} bytes")
    return out.getvalue()


def exchange(
    conn: Connection, method: str, target: str, host: str, headers: dict[str, Any], body: bytes | None
) -> Reply:
    """Send the request (`Host` ours, `Accept-Encoding: identity` and `Content-Length` as
    `http.client` adds them) and read the whole response. A header with a line break is a
    `ValueError` before anything is sent (nothing to resend)."""
    conn.http.request(method, target, body, {"Host": host, **headers})
    return read_reply(conn.http.getresponse, method)


def read_reply(response: Callable[[], http.client.HTTPResponse], method: str) -> Reply:
    """The response `response()` reads (its status line and headers), checked, and its whole body."""
    try:
        return _reply(response(), method)
    except http.client.IncompleteRead as err:
        raise ConnectionResetError(f"the server closed the connection inside a response: {err!r}"[:300]) from err
    except (http.client.HTTPException, ValueError) as err:
        if isinstance(err, ConnectionError):  # RemoteDisconnected: a close before any reply
            raise
        raise ConnectionError(f"a malformed response: {type(err).__name__}: {err}"[:300]) from err


def _reply(response: http.client.HTTPResponse, method: str) -> Reply:
    if method == "HEAD" or response.status in (204, 304):  # no body, whatever the headers say
        response.read()
        return Reply(response.status, b"", bool(response.will_close))
    frame = framing(response.msg, bool(response.will_close))
    parsed_alike = frame.length is None or response.length == frame.length
    return Reply(response.status, _body(response, frame.length), frame.will_close or not parsed_alike)


def transport_exchange(
    transport: Any, conn: Connection, method: str, target: str, headers: Any, body: Any, timeout: float
) -> Any:
    """`kube/transport.py`'s `Transport._exchange` on this stack (bench/_http_stack patches it in)."""
    from jobflow_controller.kube.transport import Response

    conn.sock.settimeout(timeout)
    reply = exchange(conn, method, target, transport._host_header, headers, body)
    if reply.will_close:
        conn.close()
    else:
        transport._checkin(conn)
    return Response(reply.status, reply.data)
