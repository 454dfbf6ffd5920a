"""HTTP/1.1 on a kept-alive socket: the request's bytes and the reading of every framing the API server uses."""

from __future__ import annotations

import contextlib
import io

import pytest

from jobflow_controller.kube import http1
from jobflow_controller.kube.http1 import MAX_HEADERS, Reply, encode_request, read_reply

OK = b"HTTP/1.1 200 OK\r\n"
CHUNKED = OK + b"Transfer-Encoding: chunked\r\n\r\n"


def test_a_request_is_one_block_of_line_host_headers_length_and_body() -> None:
    sent = encode_request("PUT", "/api/v1/x?a=1", "127.0.0.1:6443", {"Accept": "application/json"}, b"{}")
    assert sent == (
        b"PUT /api/v1/x?a=1 HTTP/1.1\r\nHost: 127.0.0.1:6443\r\nAccept: application/json\r\n"
        b"Accept-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}"
    )


@pytest.mark.parametrize(("method", "length"), [("POST", b"Content-Length: 0"), ("GET", None), ("DELETE", None)])
def test_only_methods_with_a_body_say_content_length_zero_without_one(method: str, length: bytes | None) -> None:
    sent = encode_request(method, "/", "h", {}, None)
    assert (b"Content-Length" in sent) is (length is not None)
    if length:
        assert length in sent


@pytest.mark.parametrize(
    ("headers", "target"),
    [({"Authorization": "Bearer x\r\nEvil: 1"}, "/"), ({"X\nY": "1"}, "/"), ({}, "/a b\r\nX: 1")],
)
def test_a_line_break_in_a_header_or_the_target_is_refused(headers: dict[str, str], target: str) -> None:
    with pytest.raises(ValueError, match="line break"):
        encode_request("GET", target, "h", headers, None)


@pytest.mark.parametrize(
    ("wire", "method", "reply"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", "GET", Reply(200, b"{}", False)),
        (b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n", "POST", Reply(201, b"", False)),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"3;x=y\r\n[1,\r\n2\r\n2]\r\n0\r\nX-Trailer: 1\r\n\r\n",
            "GET",
            Reply(200, b"[1,2]", False),
        ),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", "PUT", Reply(200, b"x", False)),
        (b"HTTP/1.1 204 No Content\r\n\r\n", "DELETE", Reply(204, b"", False)),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HEAD", Reply(200, b"", False)),
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", "GET", Reply(200, b"x", True)),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", "GET", Reply(200, b"x", True)),
        (b"HTTP/1.1 500 Internal Server Error\r\n\r\nuntil the close", "GET", Reply(500, b"until the close", True)),
        # RFC 9112 6.3: chunked wins over a Content-Length, and the connection is closed after it
        (
            OK + b"Content-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
            "GET",
            Reply(200, b"ab", True),
        ),
        (OK + b"Content-Length: 2\r\nContent-Length: 2\r\n\r\nab", "GET", Reply(200, b"ab", False)),  # identical
        (OK + b"Content-Length: 2, 2\r\n\r\nab", "GET", Reply(200, b"ab", False)),
        (  # extensions: BWS, a name alone, a token value, a quoted string holding ";" and an escaped quote
            OK + b'Transfer-Encoding: Chunked\r\n\r\n2 ; a ; b=c;q="x;\\"y"\r\nab\r\n0;z\r\n\r\n',
            "GET",
            Reply(200, b"ab", False),
        ),
        (OK + b"Connection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n", "GET", Reply(200, b"", True)),
        (OK + b"Content-Encoding: identity\r\nContent-Length: 1\r\n\r\nx", "GET", Reply(200, b"x", False)),
        (OK + b"Content-Encoding: gzip\r\n\r\n", "HEAD", Reply(200, b"", False)),  # no body to decode
        (OK + b"X-Empty:\r\nX-Tab:\tv\t\r\nContent-Length: 1\r\n\r\nx", "GET", Reply(200, b"x", False)),
    ],
)
def test_each_framing_of_a_reply_is_read_whole(wire: bytes, method: str, reply: Reply) -> None:
    following = b"" if reply.will_close and b"Length" not in wire else b"NEXT"
    reader = io.BufferedReader(io.BytesIO(wire + following))  # type: ignore[arg-type]
    assert read_reply(reader, method) == reply
    assert reader.read() == following  # nothing after the reply was consumed


@pytest.mark.parametrize(
    ("wire", "error", "match"),
    [
        (b"", ConnectionResetError, "without a response"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", ConnectionResetError, "inside a response's headers"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", ConnectionResetError, "after 5 of 10 bytes"),
        (b"SPDY/9 nope\r\n\r\n", ConnectionError, "not an HTTP/1.x status line"),
        (b"HTTP/1.1 abc\r\n\r\n", ConnectionError, "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", ConnectionError, "not a Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", ConnectionError, "not a chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nrest", ConnectionError, "not a chunk size"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: 1\r\n" * (MAX_HEADERS + 1) + b"\r\n", ConnectionError, "header lines"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70000 + b"\r\n\r\n", ConnectionError, "longer than"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", ConnectionError, "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK", ConnectionResetError, "inside a response's status line"),
        # RFC 9112 6.3: differing Content-Lengths (fields or a list) are unrecoverable
        (OK + b"Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", ConnectionError, "differing Content-Length"),
        (OK + b"Content-Length: 2, 1\r\n\r\nab", ConnectionError, "differing Content-Length"),
        (OK + b"Content-Length: 99999999999999999999999\r\n\r\nab", ConnectionError, "over the limit of 1073741824"),
        (OK + b"Content-Length: 1073741825\r\n\r\nab", ConnectionError, "over the limit of 1073741824"),
        # a Transfer-Encoding we cannot decode (we send Accept-Encoding: identity), and faulty ones
        (OK + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", ConnectionError, "not chunked alone"),
        (OK + b"Transfer-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx", ConnectionError, "not chunked alone"),
        (OK + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", ConnectionError, "alone"),
        (OK + b"Content-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx", ConnectionError, "cannot be decoded"),
        (b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", ConnectionError, "HTTP/1.0"),
        # header lines: obs-fold, no colon, space before the colon, a bare CR
        (OK + b"X: a\r\n b\r\nContent-Length: 0\r\n\r\n", ConnectionError, "obs-fold"),
        (OK + b"\tX: a\r\nContent-Length: 0\r\n\r\n", ConnectionError, "obs-fold"),
        (OK + b"no colon\r\nContent-Length: 0\r\n\r\n", ConnectionError, "not a header line"),
        (OK + b"Content-Length : 1\r\n\r\nx", ConnectionError, "not a header line"),
        (OK + b"X: a\rContent-Length: 1\r\n\r\nx", ConnectionError, "bare CR"),
        # the chunked body: the CRLF after the data, the size line, the trailer section
        (CHUNKED + b"3\r\nabcXY0\r\n\r\n", ConnectionError, "followed by b'XY', not CRLF"),
        (CHUNKED + b"3\r\nabc", ConnectionResetError, "after a chunk's data"),
        (CHUNKED + b"3\r\nab", ConnectionResetError, "after 2 of 3 bytes"),
        (CHUNKED + b"3", ConnectionResetError, "inside a response's chunked body"),
        (CHUNKED + b"1" * 17 + b"\r\n", ConnectionError, "not a chunk size"),
        (CHUNKED + b"40000001\r\nab", ConnectionError, "chunked body over the limit of 1073741824 bytes"),
        (CHUNKED + b" 3\r\nabc\r\n0\r\n\r\n", ConnectionError, "not a chunk size"),
        (CHUNKED + b"3;\r\nabc\r\n0\r\n\r\n", ConnectionError, "malformed chunk extensions"),
        (CHUNKED + b'3;a="x\r\nabc\r\n0\r\n\r\n', ConnectionError, "malformed chunk extensions"),
        (CHUNKED + b"3;a b\r\nabc\r\n0\r\n\r\n", ConnectionError, "malformed chunk extensions"),
        (CHUNKED + b"0\r\nX-Trailer: 1\r\n", ConnectionResetError, "inside a response's trailers"),
        (CHUNKED + b"0\r\n", ConnectionResetError, "inside a response's trailers"),
        (CHUNKED + b"0\r\nnot a trailer\r\n\r\n", ConnectionError, "not a trailer line"),
        (CHUNKED + b"0\r\nX: a\r\n b\r\n\r\n", ConnectionError, "obs-fold"),
        (CHUNKED + b"0\r\n" + b"X: 1\r\n" * (MAX_HEADERS + 1) + b"\r\n", ConnectionError, "trailer lines"),
    ],
)
def test_a_reply_that_is_cut_or_malformed_is_a_connection_error(wire: bytes, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        read_reply(io.BufferedReader(io.BytesIO(wire)), "GET")  # type: ignore[arg-type]


class _Recording(io.BytesIO):
    """A socket's reader that notes the largest read asked of it."""

    largest = 0

    def read(self, size: int | None = -1) -> bytes:
        self.largest = max(self.largest, size if size is not None and size >= 0 else 1 << 62)
        return super().read(size)


@pytest.mark.parametrize(
    "wire",
    [
        OK + b"Content-Length: 1000000000\r\n\r\nonly this",
        CHUNKED + b"3b9aca00\r\nonly this",
        b"HTTP/1.1 200 OK\r\n\r\nonly this, until the close",
    ],
)
def test_a_claimed_size_is_read_in_bounded_pieces_not_allocated_at_once(wire: bytes) -> None:
    reader = _Recording(wire)
    with contextlib.suppress(ConnectionResetError):  # the server sent less than it claimed
        read_reply(reader, "GET")  # type: ignore[arg-type]
    assert reader.largest <= http1.READ_PIECE


def test_a_body_past_read_piece_is_read_whole() -> None:
    body = bytes(range(256)) * (3 * http1.READ_PIECE // 256 + 7)
    wire = OK + f"Content-Length: {len(body)}\r\n\r\n".encode() + body + b"NEXT"
    reader = io.BufferedReader(io.BytesIO(wire))  # type: ignore[arg-type]
    assert read_reply(reader, "GET") == Reply(200, body, False)
    assert reader.read() == b"NEXT"


@pytest.mark.parametrize(
    "wire",
    [
        OK + b"Content-Length: 11\r\n\r\n0123456789a",
        CHUNKED + b"6\r\n012345\r\n5\r\n6789a\r\n0\r\n\r\n",
        OK + b"\r\n0123456789a",
    ],
    ids=["content-length", "chunked", "until-the-close"],
)
def test_a_body_over_max_body_is_refused_in_every_framing(wire: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1, "MAX_BODY", 10)
    monkeypatch.setattr(http1, "READ_PIECE", 4)
    with pytest.raises(ConnectionError, match="over the limit of 10 bytes"):
        read_reply(io.BufferedReader(io.BytesIO(wire)), "GET")  # type: ignore[arg-type]


def test_a_body_of_exactly_max_body_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1, "MAX_BODY", 10)
    monkeypatch.setattr(http1, "READ_PIECE", 4)
    for wire in (CHUNKED + b"6\r\n012345\r\n4\r\n6789\r\n0\r\n\r\n", OK + b"\r\n0123456789"):
        assert read_reply(io.BufferedReader(io.BytesIO(wire)), "GET").data == b"0123456789"  # type: ignore[arg-type]
