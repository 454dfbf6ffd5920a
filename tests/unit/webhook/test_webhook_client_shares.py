"""Per-client shares of the webhook (``webhook.clients``, docs/webhook.md "Limits"): one client, or a
few, holding connections or body bytes cannot take the webhook from another.

First the ledger's rules on their own, then real servers on 127.0.0.1 with attackers calling from
other loopback addresses (127.0.0.2, 127.0.0.3: every 127/8 address reaches the server on Linux),
as tenant pods call from addresses that are not the API server's.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import pytest
from webhook_support import JSON, ServingCerts, WebhookClient, flow, job_flow, review, serving_certs

from jobflow_controller.webhook import WebhookServer
from jobflow_controller.webhook import server as server_module
from jobflow_controller.webhook.clients import BodyRefusal, ClientShares, Seat
from jobflow_controller.webhook.limits import MAX_BODY_BYTES

VALID_REVIEW = json.dumps(review(job_flow(flow("a"), flow("b", "a")))).encode()

# --- the ledger's rules ----------------------------------------------------------------------------


class Shut:
    """Records the sockets an eviction shuts down."""

    def __init__(self) -> None:
        self.down: list[object] = []

    def __call__(self, sock: socket.socket) -> None:
        self.down.append(sock)


def fake_socket(name: str) -> socket.socket:
    return cast(socket.socket, name)


def shares(
    shut: Shut, connections: int = 4, per_client: int = 3, max_bytes: int = 100, bytes_per_client: int = 60
) -> ClientShares:
    return ClientShares(
        max_connections=connections,
        max_connections_per_client=per_client,
        max_bytes=max_bytes,
        max_bytes_per_client=bytes_per_client,
        shutdown=shut,
    )


def seats(ledger: ClientShares, client: str, count: int) -> list[Seat]:
    admitted = [ledger.enter(client, fake_socket(f"{client}#{i}")) for i in range(count)]
    assert all(admitted)
    return cast(list[Seat], admitted)


def test_a_client_past_its_own_cap_is_refused_while_another_is_admitted() -> None:
    ledger = shares(Shut())
    seats(ledger, "a", 3)
    assert ledger.enter("a", fake_socket("a#3")) is None
    assert ledger.enter("b", fake_socket("b#0")) is not None


def test_when_full_a_newcomer_takes_the_oldest_reading_seat_of_the_biggest_holder() -> None:
    shut = Shut()
    ledger = shares(shut)
    held_a = seats(ledger, "a", 3)
    seats(ledger, "b", 1)
    newcomer = ledger.enter("c", fake_socket("c#0"))
    assert newcomer is not None
    assert shut.down == ["a#0"]
    assert held_a[0].evicted
    assert ledger.open == 4


def test_a_seat_whose_request_is_read_is_never_taken() -> None:
    shut = Shut()
    ledger = shares(shut)
    held_a = seats(ledger, "a", 3)
    ledger.done_reading(held_a[0])
    seats(ledger, "b", 1)
    assert ledger.enter("c", fake_socket("c#0")) is not None
    assert shut.down == ["a#1"]
    for seat in held_a[1:]:
        ledger.done_reading(seat)
    assert ledger.enter("d", fake_socket("d#0")) is None  # a holds two, none of them reading


@pytest.mark.parametrize(
    ("biggest", "newcomer_holds", "taken"),
    [
        (3, 0, True),  # 3 > 0 + 1
        (2, 0, True),  # 2 > 0 + 1
        (2, 1, False),  # the newcomer would hold as many: no seat changes hands
        (2, 2, False),
    ],
)
def test_a_seat_is_taken_only_from_an_address_holding_more_than_the_newcomer_would(
    biggest: int, newcomer_holds: int, taken: bool
) -> None:
    shut = Shut()
    ledger = shares(shut, connections=biggest + newcomer_holds, per_client=4)
    seats(ledger, "big", biggest)
    seats(ledger, "new", newcomer_holds)
    assert (ledger.enter("new", fake_socket("new#x")) is not None) is taken
    assert bool(shut.down) is taken


def test_body_bytes_past_the_clients_cap_are_refused() -> None:
    ledger = shares(Shut())
    (seat,) = seats(ledger, "a", 1)
    assert ledger.take(seat, 60) is None
    assert ledger.take(seat, 1) is BodyRefusal.CLIENT
    ledger.give_back(seat, 30)
    assert ledger.take(seat, 30) is None


def test_when_the_bytes_are_spent_a_client_holding_less_takes_the_biggest_body_being_read() -> None:
    shut = Shut()
    ledger = shares(shut)
    small, big = seats(ledger, "a", 2)
    (other,) = seats(ledger, "b", 1)
    assert ledger.take(small, 10) is None
    assert ledger.take(big, 50) is None
    assert ledger.take(other, 40) is None  # 100: all spent
    (newcomer,) = seats(ledger, "c", 1)
    assert ledger.take(newcomer, 20) is None
    assert shut.down == ["a#1"]
    assert ledger.held == 10 + 40 + 20
    assert ledger.take(big, 1) is BodyRefusal.EVICTED
    ledger.give_back(big, 50)  # its bytes went back when it was taken
    assert ledger.held == 70


def test_bytes_are_refused_when_no_client_holds_more_than_the_taker_would() -> None:
    shut = Shut()
    ledger = shares(shut, bytes_per_client=100)
    (a,) = seats(ledger, "a", 1)
    (b,) = seats(ledger, "b", 1)
    assert ledger.take(a, 50) is None
    assert ledger.take(b, 50) is None
    assert ledger.take(b, 1) is BodyRefusal.SERVER
    assert shut.down == []


def test_an_evicted_seat_leaves_and_the_ledger_goes_idle() -> None:
    ledger = shares(Shut())
    held_a = seats(ledger, "a", 3)
    seats(ledger, "b", 1)
    late = ledger.enter("c", fake_socket("c#0"))
    assert late is not None
    for seat in [*held_a, late]:
        ledger.leave(seat)
    assert not ledger.wait_idle(0.01)  # b's seat is still served
    assert ledger.open == 1


def test_a_seat_taken_before_its_socket_is_wrapped_shuts_the_wrapped_one() -> None:
    shut = Shut()
    ledger = shares(shut, connections=2, per_client=2)
    first, _ = seats(ledger, "a", 2)
    assert ledger.enter("b", fake_socket("b#0")) is not None
    assert ledger.rewrap(first, lambda sock: fake_socket(f"tls({sock})")) == "tls(a#0)"
    assert shut.down == ["a#0", "tls(a#0)"]


def test_a_closing_seat_is_not_shut_down_when_taken() -> None:
    shut = Shut()
    ledger = shares(shut, connections=2, per_client=2)
    first, _ = seats(ledger, "a", 2)
    ledger.closing(first)
    assert ledger.enter("b", fake_socket("b#0")) is not None
    assert first.evicted and shut.down == []


# --- real servers, attackers on other loopback addresses --------------------------------------------


@pytest.fixture
def certs_dir(tmp_path: Path) -> ServingCerts:
    return serving_certs(tmp_path)


@pytest.fixture
def make_server(certs_dir: ServingCerts) -> Iterator[Callable[[], tuple[WebhookServer, WebhookClient]]]:
    servers: list[WebhookServer] = []

    def make() -> tuple[WebhookServer, WebhookClient]:
        running = WebhookServer(("127.0.0.1", 0), str(certs_dir.cert_file), str(certs_dir.key_file)).start()
        servers.append(running)
        return running, WebhookClient(running.port, certs_dir.ca_pem)

    yield make
    for running in servers:
        running.stop(grace=0.1)


def connect_from(address: str, port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(address, 0))


def wait_for(condition: Callable[[], bool], timeout: float = 30, state: Callable[[], object] = str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out: {state()}"
        time.sleep(0.02)


def test_256_connections_that_never_start_tls_leave_room_for_another_client(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], tuple[WebhookServer, WebhookClient]]
) -> None:
    monkeypatch.setattr(server_module, "HEADERS_DEADLINE", 60.0)  # the attacker holds them throughout
    server, client = make_server()
    silent = [connect_from("127.0.0.2", server.port) for _ in range(256)]
    try:
        wait_for(lambda: server.open_connections == 128)  # its share; the others closed at accept
        assert client.request("GET", "/healthz").status == 200
        assert client.post(VALID_REVIEW).status == 200
    finally:
        for connection in silent:
            connection.close()


def test_when_full_another_client_takes_a_seat_from_the_biggest_holder(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], tuple[WebhookServer, WebhookClient]]
) -> None:
    monkeypatch.setattr(server_module, "HEADERS_DEADLINE", 60.0)
    monkeypatch.setattr(server_module, "MAX_CONNECTIONS", 4)
    monkeypatch.setattr(server_module, "MAX_CONNECTIONS_PER_CLIENT", 2)
    server, client = make_server()
    silent = [connect_from(address, server.port) for address in ("127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3")]
    try:
        wait_for(lambda: server.open_connections == 4)
        assert client.request("GET", "/healthz").status == 200
        assert silent[0].recv(1) == b""  # the oldest of a biggest holder, shut down
    finally:
        for connection in silent:
            connection.close()


def settled(value: Callable[[], int], quiet: float = 0.5) -> Callable[[], bool]:
    """A condition true once ``value()`` has not changed for ``quiet`` seconds."""
    last: list[tuple[int, float]] = [(value(), time.monotonic())]

    def condition() -> bool:
        now, (before, since) = value(), last[0]
        if now != before:
            last[0] = (now, time.monotonic())
            return False
        return time.monotonic() - since >= quiet

    return condition


class SlowBody:
    """A POST of a ``MAX_BODY_BYTES`` body from ``address``, all of it sent but the last byte, which
    never comes: the server holds the body until its deadline. ``answer`` is what the server said
    before the body was all sent (a refusal), if anything."""

    def __init__(self, client: WebhookClient, address: str) -> None:
        # TLS 1.2: no session tickets after the handshake, so the socket is readable only once answered.
        context = ssl.create_default_context(cadata=client.ca_pem.decode())
        context.maximum_version = ssl.TLSVersion.TLSv1_2
        plain = connect_from(address, client.port)
        self.tls = context.wrap_socket(plain, server_hostname="127.0.0.1")
        self.answer = b""
        self.thread = threading.Thread(target=self._send, daemon=True)
        self.thread.start()

    def _send(self) -> None:
        head = f"POST /jobflows/validate HTTP/1.1\r\nContent-Type: {JSON}\r\nContent-Length: {MAX_BODY_BYTES}\r\n\r\n"
        data = memoryview(head.encode() + b" " * (MAX_BODY_BYTES - 1))
        try:
            for start in range(0, len(data), 65536):
                if select.select([self.tls], [], [], 0)[0]:
                    break  # answered before the end of the body
                self.tls.sendall(data[start : start + 65536])
            else:
                return
        except OSError:
            pass  # cut after its answer: the answer may be lost to the reset
        with contextlib.suppress(OSError):
            self.answer = self.tls.recv(200)

    @property
    def status(self) -> bytes:
        return self.answer.split(b"\r\n", 1)[0]

    def close(self) -> None:
        self.tls.close()


def test_four_slow_3_mib_bodies_from_one_client_leave_room_for_another(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], tuple[WebhookServer, WebhookClient]]
) -> None:
    # The bodies are held until the test ends, whatever the load (this process serves and sends).
    monkeypatch.setattr(server_module, "HEADERS_DEADLINE", 60.0)
    monkeypatch.setattr(server_module, "REQUEST_DEADLINE", 60.0)
    server, client = make_server()
    bodies = [SlowBody(client, "127.0.0.2") for _ in range(4)]
    try:

        def state() -> object:
            return server.body_bytes_held, [(body.thread.is_alive(), body.status) for body in bodies]

        wait_for(lambda: not any(body.thread.is_alive() for body in bodies), state=state)
        # The server reads what the kernel still holds; then at most the client's 6 MiB: two whole
        # bodies, or one when two were refused at the same time.
        wait_for(settled(lambda: server.body_bytes_held), state=state)
        assert server.body_bytes_held in (MAX_BODY_BYTES, 2 * MAX_BODY_BYTES), state()
        # What the client saw can lag (a refused body may sit whole in the kernel's buffers, or its
        # answer be lost to the reset that follows it); the server's count cannot.
        assert {body.status for body in bodies} <= {b"HTTP/1.0 429 Too Many Requests", b""}
        assert client.post(VALID_REVIEW).status == 200
    finally:
        for body in bodies:
            body.close()


def test_slow_bodies_from_two_clients_give_way_to_a_third(
    monkeypatch: pytest.MonkeyPatch, make_server: Callable[[], tuple[WebhookServer, WebhookClient]]
) -> None:
    # The bodies are held until the test ends, whatever the load (this process serves and sends).
    monkeypatch.setattr(server_module, "HEADERS_DEADLINE", 60.0)
    monkeypatch.setattr(server_module, "REQUEST_DEADLINE", 60.0)
    server, client = make_server()
    bodies = [SlowBody(client, address) for address in ("127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3")]
    try:
        wait_for(lambda: server.body_bytes_held == 4 * MAX_BODY_BYTES, timeout=30)  # all 12 MiB
        assert client.post(VALID_REVIEW).status == 200
        wait_for(lambda: server.body_bytes_held == 3 * MAX_BODY_BYTES)  # one body of a biggest holder gave way
    finally:
        for body in bodies:
            body.close()
