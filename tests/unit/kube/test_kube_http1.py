"""HTTP/1.1 on a kept-alive socket: the request's bytes and the reading of every framing the API server uses."""

from __future__ import annotations

import io

import pytest

from jobflow_controller.kube.http1 import MAX_HEADERS, Reply, encode_request, read_reply


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
    ],
)
def test_a_reply_that_is_cut_or_malformed_is_a_connection_error(wire: bytes, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        read_reply(io.BufferedReader(io.BytesIO(wire)), "GET")  # type: ignore[arg-type]
