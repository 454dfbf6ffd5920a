"""The controller's own reader of the API server's HTTP/1.1 responses (jobflow_controller/kube/http1.py).

No tenant writes these bytes, but whoever sits between the controller and the API server (a plain
`http://` server address, a broken proxy, a misbehaving server) does, and every request of the
controller goes through this reader: a malformed response must be a `ConnectionError` (the
transport closes the connection and the request fails or is resent), never another exception, an
allocation of a size the server merely claimed, or a hang.

The socket's reader hands over bytes only: a value of another type is turned away by `_wire` as
`TypeError` before the call, so the fuzzer's wrong-typed inputs check the adapter, not the product.
"""

from __future__ import annotations

import io
from typing import Any

from registry import Parser

from jobflow_controller.kube.http1 import Reply, chunk_size, read_reply


def _wire(value: Any) -> io.BufferedReader:
    if not isinstance(value, bytes):
        raise TypeError(f"a socket gives no {type(value).__name__}")
    return io.BufferedReader(io.BytesIO(value))  # type: ignore[arg-type]


def _read_replies(value: Any) -> list[Reply]:
    """Every response on the connection, as the transport reads them while it keeps it alive."""
    reader, replies = _wire(value), []
    while reader.peek(1) and (not replies or not replies[-1].will_close):
        replies.append(read_reply(reader, "GET"))
    return replies


PARSERS: list[Parser] = [
    Parser("jobflow_controller.kube.http1.read_reply", _read_replies, "bytes", (ConnectionError, TypeError)),
    Parser(
        "jobflow_controller.kube.http1.read_reply[HEAD]",
        lambda v: read_reply(_wire(v), "HEAD"),
        "bytes",
        (ConnectionError, TypeError),
    ),
    Parser(
        "jobflow_controller.kube.http1.chunk_size",
        lambda v: chunk_size(v if isinstance(v, bytes) else b""),
        "bytes",
        (ConnectionError,),
    ),
]
