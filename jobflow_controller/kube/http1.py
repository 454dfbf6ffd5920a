"""HTTP/1.1 on one kept-alive socket, as the API server speaks it: the request's bytes, the response read.

Why not `http.client`: its response parses the header block through the `email` package (about 25
us of 200 of CPU per request, docs/performance.md) for the three headers read here (the framing:
`Content-Length`, `Transfer-Encoding`, `Connection`). The request is written in one `sendall`,
headers and body together, as `http.client` does for a bytes body.

Limits: a status or header line of 64 KiB, 100 header lines, chunk-size lines of 1 KiB; beyond
them, or on anything that is not an HTTP/1.x response, a `ConnectionError` (the connection is
then closed). Interim (1xx) responses are skipped.
"""

from __future__ import annotations

import socket
from typing import IO, Any, NamedTuple

__all__ = ["Connection", "Reply", "encode_request", "read_reply"]

MAX_LINE = 65536
MAX_HEADERS = 100
MAX_CHUNK_LINE = 1024
_HEX_DIGITS = b"0123456789abcdefABCDEF"
#: Methods whose request carries a Content-Length even without a body (as `http.client` sends 0).
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class Reply(NamedTuple):
    status: int
    data: bytes
    will_close: bool


class Connection:
    """A socket (TLS or not) and its buffered reader, used by one request at a time."""

    __slots__ = ("reader", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader: IO[bytes] = sock.makefile("rb")

    def close(self) -> None:
        try:
            self.reader.close()
        finally:
            self.sock.close()


def _checked(text: str, what: str) -> str:
    if "\r" in text or "\n" in text:
        raise ValueError(f"invalid {what} {text!r}: a line break would end the header block")
    return text


def encode_request(method: str, target: str, host: str, headers: dict[str, Any], body: bytes | None) -> bytes:
    """The request line, `Host`, the headers, `Accept-Encoding: identity`, `Content-Length` and the body,
    as bytes to send at once."""
    lines = [f"{_checked(method, 'method')} {_checked(target, 'target')} HTTP/1.1", f"Host: {host}"]
    for name, value in headers.items():
        lines.append(f"{_checked(str(name), 'header name')}: {_checked(str(value), 'header value')}")
    if not any(str(name).lower() == "accept-encoding" for name in headers):
        lines.append("Accept-Encoding: identity")  # as http.client and urllib3 sent it: never compressed
    if body is not None or method in _BODY_METHODS:
        lines.append(f"Content-Length: {len(body or b'')}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + body if body else head


def _line(reader: IO[bytes], limit: int, what: str) -> bytes:
    line = reader.readline(limit + 1)
    if len(line) > limit:
        raise ConnectionError(f"{what} longer than {limit} bytes")
    return line


def _head(reader: IO[bytes]) -> tuple[int, bytes, dict[bytes, bytes]]:
    """The status, version and headers (names lowercased) of the next final response."""
    while True:
        line = _line(reader, MAX_LINE, "status line")
        if not line:
            raise ConnectionResetError("the server closed the connection without a response")
        version, _, rest = line.partition(b" ")
        code = rest[:3]
        if not version.startswith(b"HTTP/1.") or not code.isdigit():
            raise ConnectionError(f"not an HTTP/1.x status line: {line[:80]!r}")
        headers: dict[bytes, bytes] = {}
        for _ in range(MAX_HEADERS + 1):
            field = _line(reader, MAX_LINE, "header line")
            if field in (b"\r\n", b"\n"):
                break
            if not field:
                raise ConnectionResetError("the server closed the connection inside a response's headers")
            name, _, value = field.partition(b":")
            headers[name.strip().lower()] = value.strip()
        else:
            raise ConnectionError(f"more than {MAX_HEADERS} header lines")
        status = int(code)
        if not 100 <= status < 200:
            return status, version, headers


def _exactly(reader: IO[bytes], size: int) -> bytes:
    data = reader.read(size)
    if len(data) < size:
        raise ConnectionResetError(f"the server closed the connection after {len(data)} of {size} bytes")
    return data


def _chunked(reader: IO[bytes]) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = _line(reader, MAX_CHUNK_LINE, "chunk size line")
        digits = size_line.split(b";", 1)[0].strip()
        if not digits or digits.strip(_HEX_DIGITS):  # int(x, 16) would also take "-1" and "+5"
            raise ConnectionError(f"not a chunk size: {size_line[:80]!r}")
        size = int(digits, 16)
        if size == 0:
            while _line(reader, MAX_LINE, "trailer line") not in (b"\r\n", b"\n", b""):
                pass
            return b"".join(parts)
        parts.append(_exactly(reader, size))
        _exactly(reader, 2)  # the CRLF after the chunk


def read_reply(reader: IO[bytes], method: str) -> Reply:
    """The whole next response: its body framed by Transfer-Encoding, Content-Length, or the close."""
    status, version, headers = _head(reader)
    connection = headers.get(b"connection", b"").lower()
    will_close = b"close" in connection or (version == b"HTTP/1.0" and b"keep-alive" not in connection)
    if method == "HEAD" or status in (204, 304):
        return Reply(status, b"", will_close)
    if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
        return Reply(status, _chunked(reader), will_close)
    length = headers.get(b"content-length")
    if length is not None:
        if not length.isdigit():
            raise ConnectionError(f"not a Content-Length: {length[:80]!r}")
        return Reply(status, _exactly(reader, int(length)), will_close)
    return Reply(status, reader.read(), True)  # framed by the close
