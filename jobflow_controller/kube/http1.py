"""HTTP/1.1 on one kept-alive socket, as the API server speaks it: the request's bytes, the response read.

Why not `http.client`: its response parses the header block through the `email` package (about 25
us of 200 of CPU per request, docs/performance.md) for the few headers read here (the framing:
`Content-Length`, `Transfer-Encoding`, `Connection`, and `Content-Encoding` to refuse what we
cannot decode). The request is written in one `sendall`, headers and body together, as
`http.client` does for a bytes body.

The response is read as RFC 9112 asks of a client, strictly where a lenient reading could take a
body's bytes for the next response: differing `Content-Length` values, a `Transfer-Encoding` other
than `chunked` alone (we ask for `identity`), a chunk not followed by CRLF, a malformed chunk-size
line or trailer section, an obs-fold or malformed header line are errors; `Content-Length` beside
`chunked` is read as chunked and the connection closed after it.

Limits: a status or header line of 64 KiB, 100 header (or trailer) lines, chunk-size lines of 1 KiB
(16 hex digits, as Go's), a body of `MAX_BODY` (1 GiB), read `READ_PIECE` (1 MiB) at a time so a
size the server claims is never allocated before its bytes arrive. Beyond them, or on anything that
is not an HTTP/1.x response, a `ConnectionError` (the connection is then closed); a response cut
short is a `ConnectionResetError`. Interim (1xx) responses are skipped.
"""

from __future__ import annotations

import io
import re
import socket
from typing import IO, Any, NamedTuple

__all__ = ["Connection", "Framing", "Reply", "encode_request", "framing", "read_reply"]

MAX_LINE = 65536
MAX_HEADERS = 100
MAX_CHUNK_LINE = 1024
#: Go's `net/http` refuses a chunk size of more hex digits ("http chunk length too large").
MAX_CHUNK_DIGITS = 16
#: The largest body read. The controller decodes every body it reads into Python objects, about 5-10
#: times its size, so a body past 1 GiB could not be used by any controller pod: failing the request
#: (the reflector retries with backoff, the error names the limit) beats being OOM-killed. The API
#: server's answers are far below it: an object is at most 3 MiB, and lists come in pages.
MAX_BODY = 1 << 30
#: A body is read this much at a time: memory follows the bytes that arrived, not a claimed size.
READ_PIECE = 1 << 20
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_TOKEN = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
#: RFC 9110 5.6.2's tchar, the characters of a field name.
_TOKEN_BYTES = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: What follows a chunk size: `*( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )`.
_CHUNK_EXTENSIONS = re.compile(
    rb"(?:[ \t]*;[ \t]*" + _TOKEN + rb"(?:[ \t]*=[ \t]*(?:" + _TOKEN + rb'|"(?:[^"\\\r\n]|\\[^\r\n])*"))?)*'
)
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


def _line(reader: IO[bytes], limit: int, what: str, inside: str) -> bytes:
    """One line with its line break removed; a line cut by the close is a `ConnectionResetError`."""
    return _unbroken(reader.readline(limit), limit, what, inside)


def _unbroken(line: bytes, limit: int, what: str, inside: str) -> bytes:
    """A line read with `readline(limit)`, its line break removed, or why it is refused."""
    if not line.endswith(b"\n"):
        if len(line) >= limit:
            raise ConnectionError(f"{what} longer than {limit} bytes")
        raise ConnectionResetError(f"the server closed the connection inside a response's {inside}")
    line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
    if b"\r" in line:  # RFC 9112 2.2: a bare CR is invalid (or would be read as a line break elsewhere)
        raise ConnectionError(f"a bare CR in a {what}: {line[:80]!r}")
    return line


def _fields(reader: IO[bytes], what: str) -> dict[bytes, bytes]:
    """A header (or trailer) section up to its empty line: names lowercased, repeated fields joined
    with ", " as RFC 9110 5.3 combines them (so differing Content-Lengths stay visible).

    Every response goes through here, so a well-formed line takes one test (`_refuse_field` says
    what is wrong with the others). A whole reply of the API server (seven headers, 1.5 KB) costs 9.3
    us of CPU, against 5.8 for the former lenient reader."""
    fields: dict[bytes, bytes] = {}
    for _ in range(MAX_HEADERS + 1):
        raw = reader.readline(MAX_LINE)
        if raw[-2:] == b"\r\n":
            line = raw[:-2]
        elif raw[-1:] == b"\n":
            line = raw[:-1]
        else:
            line = _unbroken(raw, MAX_LINE, f"{what} line", f"{what}s")  # raises: cut or too long
        if not line:
            return fields
        name, colon, value = line.partition(b":")
        if not colon or not name or name.translate(None, _TOKEN_BYTES) or b"\r" in value:
            _refuse_field(line, what)
        name = name.lower()
        value = value.strip(b" \t")
        if name in fields:
            value = fields[name] + b", " + value
        fields[name] = value
    raise ConnectionError(f"more than {MAX_HEADERS} {what} lines")


def _refuse_field(line: bytes, what: str) -> None:
    """Why a field line is refused: a bare CR, an obs-fold, or no `token:` before its value (RFC 9112
    5.1: whitespace before the colon is refused, as the name would then differ from its peers')."""
    if b"\r" in line:
        raise ConnectionError(f"a bare CR in a {what} line: {line[:80]!r}")
    if line[:1] in (b" ", b"\t"):
        raise ConnectionError(f"an obs-fold (a {what} line continued on the next): {line[:80]!r}")
    raise ConnectionError(f"not a {what} line: {line[:80]!r}")


def _head(reader: IO[bytes]) -> tuple[int, bytes, dict[bytes, bytes]]:
    """The status, version and headers (names lowercased) of the next final response."""
    while True:
        line = reader.readline(MAX_LINE)
        if not line:
            raise ConnectionResetError("the server closed the connection without a response")
        version, _, rest = line.partition(b" ")
        code = rest[:3]
        if not (version.startswith(b"HTTP/1.") and len(version) == 8) or not code.isdigit() or rest[3:4].strip():
            raise ConnectionError(f"not an HTTP/1.x status line: {line[:80]!r}")
        if not line.endswith(b"\n"):
            _unbroken(line, MAX_LINE, "status line", "status line")  # raises: cut or too long
        headers = _fields(reader, "header")
        status = int(code)
        if not 100 <= status < 200:
            return status, version, headers


class Framing(NamedTuple):
    """How a response's body is delimited: `chunked`, else `length` bytes, else (None) until the close."""

    chunked: bool
    length: int | None
    will_close: bool


def _tokens(value: bytes) -> list[bytes]:
    return [token for token in (part.strip(b" \t").lower() for part in value.split(b",")) if token]


def _content_length(value: bytes) -> int:
    """RFC 9112 6.3: one value, or a list of identical ones; differing values cannot be recovered from."""
    if value.isdigit() and len(value) <= 12 and int(value) <= MAX_BODY:  # what the API server sends
        return int(value)
    values = {part.strip(b" \t") for part in value.split(b",")}
    if len(values) > 1:
        raise ConnectionError(f"differing Content-Length values: {value[:80]!r}")
    (length,) = values
    if not length.isdigit():  # ASCII digits only: no sign, no "1_000"
        raise ConnectionError(f"not a Content-Length: {length[:80]!r}")
    if len(length) > 12 or int(length) > MAX_BODY:  # the digits counted first: int() of 64 KiB is slow
        raise ConnectionError(f"Content-Length {length[:80].decode()} is over the limit of {MAX_BODY} bytes")
    return int(length)


def framing(method: str, status: int, version: bytes, headers: dict[bytes, bytes]) -> Framing:
    """RFC 9112 6.3's order: no body for HEAD, 1xx, 204 and 304; then Transfer-Encoding (only
    `chunked`, and it wins over a Content-Length, after which the connection is closed); then
    Content-Length; else the body ends at the close."""
    connection = _tokens(headers[b"connection"]) if b"connection" in headers else ()
    will_close = b"close" in connection or (version == b"HTTP/1.0" and b"keep-alive" not in connection)
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return Framing(False, 0, will_close)
    encoding = headers.get(b"content-encoding")
    if encoding is not None and _tokens(encoding) not in ([], [b"identity"]):
        raise ConnectionError(f"Content-Encoding {encoding[:80]!r} cannot be decoded: we asked for identity")
    coding = headers.get(b"transfer-encoding")
    if coding is not None:
        if _tokens(coding) != [b"chunked"]:
            raise ConnectionError(f"Transfer-Encoding {coding[:80]!r} is not chunked alone: we asked for identity")
        if version == b"HTTP/1.0":  # RFC 9112 6.1: such framing is faulty
            raise ConnectionError("Transfer-Encoding in an HTTP/1.0 response")
        return Framing(True, None, will_close or b"content-length" in headers)
    length = headers.get(b"content-length")
    if length is not None:
        return Framing(False, _content_length(length), will_close)
    return Framing(False, None, True)


def _copy(reader: IO[bytes], size: int, out: io.BytesIO) -> None:
    """`size` bytes into `out`, `READ_PIECE` at a time."""
    left = size
    while left > 0:
        piece = reader.read(min(left, READ_PIECE))
        if not piece:
            raise ConnectionResetError(f"the server closed the connection after {size - left} of {size} bytes")
        out.write(piece)
        left -= len(piece)


def _exactly(reader: IO[bytes], size: int) -> bytes:
    if size <= READ_PIECE:
        data = reader.read(size)
        if len(data) < size:
            raise ConnectionResetError(f"the server closed the connection after {len(data)} of {size} bytes")
        return data
    out = io.BytesIO()
    _copy(reader, size, out)
    return out.getvalue()


def chunk_size(line: bytes) -> int:
    """A chunk-size line's size (its line break removed): hex digits, optional extensions, ignored."""
    end = line.find(b";")
    digits = (line if end < 0 else line[:end]).rstrip(b" \t")
    if not digits or digits.strip(_HEX_DIGITS) or len(digits) > MAX_CHUNK_DIGITS:
        raise ConnectionError(f"not a chunk size: {line[:80]!r}")  # int(x, 16) would also take "-1" and "+5"
    if end >= 0 and not _CHUNK_EXTENSIONS.fullmatch(line, len(digits)):
        raise ConnectionError(f"malformed chunk extensions: {line[:80]!r}")
    return int(digits, 16)


def _chunked(reader: IO[bytes]) -> bytes:
    out = io.BytesIO()
    while True:
        size = chunk_size(_line(reader, MAX_CHUNK_LINE, "chunk size line", "chunked body"))
        if size == 0:
            _fields(reader, "trailer")  # read to its empty line, and dropped
            return out.getvalue()
        if out.tell() + size > MAX_BODY:
            raise ConnectionError(f"a chunked body over the limit of {MAX_BODY} bytes (a chunk of {size})")
        _copy(reader, size, out)
        end = reader.read(2)
        if end != b"\r\n":
            if len(end) < 2:
                raise ConnectionResetError("the server closed the connection after a chunk's data")
            raise ConnectionError(f"a chunk of {size} bytes followed by {end!r}, not CRLF")


def _until_close(reader: IO[bytes]) -> bytes:
    out = io.BytesIO()
    while piece := reader.read(READ_PIECE):
        out.write(piece)
        if out.tell() > MAX_BODY:
            raise ConnectionError(f"a body framed by the close over the limit of {MAX_BODY} bytes")
    return out.getvalue()


def read_reply(reader: IO[bytes], method: str) -> Reply:
    """The whole next response: its body framed by Transfer-Encoding, Content-Length, or the close."""
    status, version, headers = _head(reader)
    frame = framing(method, status, version, headers)
    if frame.chunked:
        data = _chunked(reader)
    elif frame.length is not None:
        data = _exactly(reader, frame.length) if frame.length else b""
    else:
        data = _until_close(reader)
    return Reply(status, data, frame.will_close)
