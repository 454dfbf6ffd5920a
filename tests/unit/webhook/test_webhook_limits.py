"""The webhook's limits (``webhook.limits``, docs/webhook.md "Limits"): what a hostile client meets.

Each limit is tested on a real server; where the real number would make the test slow (a 10 s
deadline, 256 connections) the server under test is built with a smaller one.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from webhook_support import JSON, ServingCerts, WebhookClient, flow, job_flow, review, serving_certs

from jobflow_controller.webhook import WebhookServer, limits
from jobflow_controller.webhook import server as server_module

VALID_REVIEW = json.dumps(review(job_flow(flow("a"), flow("b", "a")))).encode()


def head(length: int | None, content_type: str = JSON) -> bytes:
    lines = ["POST /jobflows/validate HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: {content_type}"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_of(raw_reply: bytes) -> int:
    return int(raw_reply.split(b" ", 2)[1])


def test_limits_are_the_documented_numbers() -> None:
    assert limits.MAX_BODY_BYTES == 3 * 1024 * 1024
    assert limits.MAX_HEADER_BYTES == 64 * 1024
    assert limits.REQUEST_DEADLINE == 10.0
    assert limits.HEADERS_DEADLINE == 3.0
    assert limits.MAX_CONNECTIONS == 256
    assert limits.MAX_CONNECTIONS_PER_CLIENT == 128
    assert limits.MAX_BODY_BYTES_IN_FLIGHT == 12 * 1024 * 1024
    assert limits.MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT == 6 * 1024 * 1024
    assert limits.MAX_CONCURRENT_REVIEWS == 2
    assert limits.MAX_JSON_DEPTH == 100
    assert limits.MAX_JSON_VALUES == 300_000


def test_limits_are_documented() -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "webhook.md").read_text()
    section = doc.split("## Limits", 1)[1].split("\n## ", 1)[0]
    for name in limits.__all__:
        assert f"`{name}`" in section, name


# --- with the real limits ------------------------------------------------------------------------------


def test_16_mib_body_is_refused_from_its_headers(client: WebhookClient) -> None:
    started = time.monotonic()
    raw = client.raw(head(16 * 1024 * 1024))
    assert status_of(raw) == 413
    assert time.monotonic() - started < 2


def test_body_of_exactly_the_limit_is_read(client: WebhookClient) -> None:
    body = VALID_REVIEW + b" " * (limits.MAX_BODY_BYTES - len(VALID_REVIEW))
    assert client.post(body).status == 200


def test_media_type_is_refused_before_the_body_is_sent(client: WebhookClient) -> None:
    # Only the headers are sent: the answer cannot have waited for the body.
    raw = client.raw(head(limits.MAX_BODY_BYTES, content_type="text/plain"))
    assert status_of(raw) == 415


def test_headers_over_the_limit_are_refused(client: WebhookClient) -> None:
    padding = "".join(f"X-Pad-{i}: {'a' * 1000}\r\n" for i in range(70))
    raw = client.raw(f"POST /jobflows/validate HTTP/1.1\r\n{padding}\r\n".encode())
    assert status_of(raw) == 431


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "the JSON is nested 100000 levels deep, more than 100"),
        (b'{"a":' * 5_000 + b"1" + b"}" * 5_000, "the JSON is nested 5000 levels deep, more than 100"),
        (b"[" * 100_000, "the JSON is nested 100000 levels deep, more than 100"),
        (b"[" + b",".join([b"{}"] * 400_000) + b"]", "the JSON has more than 300000 values"),
    ],
    ids=["nested-arrays", "nested-objects", "unclosed-arrays", "many-empty-objects"],
)
def test_json_too_deep_or_too_big_is_a_bad_request(client: WebhookClient, body: bytes, message: str) -> None:
    reply = client.post(body)
    assert (reply.status, reply.text) == (400, f"Request could not be decoded: {message}\n")
    assert client.post(VALID_REVIEW).status == 200  # and the server keeps serving


def test_json_nested_just_within_the_limit_is_decoded(client: WebhookClient) -> None:
    admission_review = review(job_flow(flow("a")))
    nested: object = 1
    for _ in range(limits.MAX_JSON_DEPTH - 5):
        nested = [nested]
    admission_review["request"]["object"]["metadata"]["annotations"] = {"deep": nested}
    assert client.post(json.dumps(admission_review).encode()).status == 200


def test_utf16_body_is_a_bad_request(client: WebhookClient) -> None:
    reply = client.post(b"\xff\xfe" + VALID_REVIEW.decode().encode("utf-16-le"))
    assert reply.status == 400
    assert reply.text.startswith("Request could not be decoded: 'utf-8' codec can't decode")


# --- with smaller limits -------------------------------------------------------------------------------


@pytest.fixture
def certs_dir(tmp_path: Path) -> ServingCerts:
    return serving_certs(tmp_path)


@pytest.fixture
def make_server(certs_dir: ServingCerts) -> Iterator[Callable[[], WebhookClient]]:
    servers: list[WebhookServer] = []

    def make() -> WebhookClient:
        running = WebhookServer(("127.0.0.1", 0), str(certs_dir.cert_file), str(certs_dir.key_file)).start()
        servers.append(running)
        return WebhookClient(running.port, certs_dir.ca_pem)

    yield make
    for running in servers:
        running.stop(grace=0.1)


def tls_connection(client: WebhookClient) -> ssl.SSLSocket:
    plain = socket.create_connection(("127.0.0.1", client.port), timeout=10)
    return client.context.wrap_socket(plain, server_hostname="127.0.0.1")


def read_all(connection: ssl.SSLSocket) -> bytes:
    chunks = []
    try:
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    except (ConnectionResetError, ssl.SSLError):
        pass
    return b"".join(chunks)


def drip(connection: ssl.SSLSocket, data: bytes, interval: float, *, give_up_after: float = 5) -> None:
    """Send ``data`` a byte at a time, each well within a per-read timeout, until the server cuts it."""
    started = time.monotonic()
    try:
        for byte in data:
            connection.sendall(bytes([byte]))
            time.sleep(interval)
            if time.monotonic() - started > give_up_after:
                break
    except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
        pass


def test_headers_dripped_are_cut_at_the_headers_deadline(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], WebhookClient]
) -> None:
    monkeypatch.setattr(server_module, "HEADERS_DEADLINE", 0.5)
    client = make_server()
    with tls_connection(client) as connection:
        started = time.monotonic()
        drip(connection, head(len(VALID_REVIEW)) + VALID_REVIEW, 0.05)
        assert read_all(connection) == b""
    # The deadline, then at most LINGER_SECONDS of reading before the close.
    assert time.monotonic() - started < 0.5 + server_module.LINGER_SECONDS + 1


def test_a_body_dripped_is_cut_at_the_deadline_of_the_whole_request(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], WebhookClient]
) -> None:
    monkeypatch.setattr(server_module, "HEADERS_DEADLINE", 0.3)
    monkeypatch.setattr(server_module, "REQUEST_DEADLINE", 1.5)
    client = make_server()
    with tls_connection(client) as connection:
        started = time.monotonic()
        connection.sendall(head(len(VALID_REVIEW)))
        drip(connection, VALID_REVIEW, 0.05)
        cut_after = time.monotonic() - started
        assert read_all(connection) == b""
    # Past the headers' deadline (the body has the request's), cut at the request's.
    assert 1.5 - 0.2 < cut_after < 1.5 + server_module.LINGER_SECONDS + 1


def test_a_body_sent_after_the_headers_deadline_is_answered(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], WebhookClient]
) -> None:
    monkeypatch.setattr(server_module, "HEADERS_DEADLINE", 0.3)
    client = make_server()
    with tls_connection(client) as connection:
        connection.sendall(head(len(VALID_REVIEW)))
        time.sleep(0.6)
        connection.sendall(VALID_REVIEW)
        assert status_of(read_all(connection)) == 200


def test_a_silent_client_is_dropped_at_the_headers_deadline(client: WebhookClient) -> None:
    # The real 3 s: the handshake and headers of the API server take milliseconds.
    with tls_connection(client) as connection:
        started = time.monotonic()
        assert read_all(connection) == b""
        assert limits.HEADERS_DEADLINE - 0.1 < time.monotonic() - started < limits.HEADERS_DEADLINE + 2


def test_a_client_that_never_starts_tls_is_dropped_at_the_headers_deadline(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], WebhookClient]
) -> None:
    monkeypatch.setattr(server_module, "HEADERS_DEADLINE", 0.5)
    client = make_server()
    with socket.create_connection(("127.0.0.1", client.port), timeout=5) as silent:
        started = time.monotonic()
        assert silent.recv(1) == b""  # closed before any handshake
        assert time.monotonic() - started < 3


def test_connections_over_the_cap_are_closed_and_the_next_one_served_once_one_closes(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], WebhookClient]
) -> None:
    monkeypatch.setattr(server_module, "MAX_CONNECTIONS", 2)
    client = make_server()
    held = [socket.create_connection(("127.0.0.1", client.port), timeout=5) for _ in range(2)]
    time.sleep(0.2)  # both accepted
    with pytest.raises((ConnectionResetError, ssl.SSLError, OSError)):
        client.request("GET", "/healthz")
    held.pop().close()
    deadline = time.monotonic() + 5
    while True:
        try:
            assert client.request("GET", "/healthz").status == 200
            break
        except (ConnectionResetError, ssl.SSLError, OSError):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    for connection in held:
        connection.close()


def test_bodies_over_the_bytes_in_flight_get_429_with_retry_after(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], WebhookClient]
) -> None:
    monkeypatch.setattr(server_module, "MAX_BODY_BYTES_IN_FLIGHT", len(VALID_REVIEW) - 1)
    reply = make_server().post(VALID_REVIEW)
    assert reply.status == 429
    assert reply.headers["retry-after"] == "1"
    assert reply.text.startswith("too many requests: over")


def test_a_review_waiting_past_its_deadline_for_a_slot_gets_429(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], WebhookClient]
) -> None:
    monkeypatch.setattr(server_module, "MAX_CONCURRENT_REVIEWS", 0)
    monkeypatch.setattr(server_module, "REQUEST_DEADLINE", 0.5)
    reply = make_server().post(VALID_REVIEW)
    assert reply.status == 429
    assert reply.text == "too many requests: 0 reviews are in progress\n"


def test_reviews_in_flight_release_their_bytes(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], WebhookClient]
) -> None:
    monkeypatch.setattr(server_module, "MAX_BODY_BYTES_IN_FLIGHT", len(VALID_REVIEW))
    client = make_server()
    answers = []

    def post() -> None:
        answers.append(client.post(VALID_REVIEW).status)

    for _ in range(5):  # one at a time: each gives its bytes back
        thread = threading.Thread(target=post)
        thread.start()
        thread.join(10)
    assert answers == [200] * 5
