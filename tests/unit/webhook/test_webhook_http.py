"""The webhook's HTTP and TLS behaviour: what is not an AdmissionReview, routing, health, lifetime.

A body that is not an ``admission.k8s.io/v1`` AdmissionReview is answered with an HTTP error and a
plain-text reason, as upstream's ``util.ServeAdmission`` answers it (415 for another media type,
400 for the rest), never with an AdmissionResponse.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from webhook_support import JSON, ServingCerts, WebhookClient, flow, job_flow, review, serving_certs

from jobflow_controller.local.certs import TinyCA
from jobflow_controller.webhook import MAX_BODY_BYTES, WebhookServer
from jobflow_controller.webhook.admission import ReviewError, body_length

VALID_REVIEW = json.dumps(review(job_flow(flow("a"), flow("b", "a")))).encode()


def request_bytes(method: str, path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def status_of(raw_reply: bytes) -> int:
    return int(raw_reply.split(b" ", 2)[1])


# --- not an AdmissionReview ------------------------------------------------------------------------------


def test_invalid_json_is_a_bad_request(client: WebhookClient) -> None:
    reply = client.post(b'{"apiVersion": ')
    assert reply.status == 400
    assert reply.text.startswith("Request could not be decoded: Expecting value")
    assert reply.headers["content-type"] == "text/plain; charset=utf-8"


def test_body_that_is_not_utf8_is_a_bad_request(client: WebhookClient) -> None:
    reply = client.post(b"\xff\xfe\xfa")
    assert reply.status == 400
    assert reply.text.startswith("Request could not be decoded:")


def test_empty_body_is_a_bad_request(client: WebhookClient) -> None:
    reply = client.post(b"")
    assert reply.status == 400
    assert reply.text.startswith("Request could not be decoded:")


@pytest.mark.parametrize(("body", "kind"), [(b"[]", "an array"), (b"null", "null"), (b'"x"', "a string")])
def test_json_that_is_not_an_object_is_a_bad_request(client: WebhookClient, body: bytes, kind: str) -> None:
    reply = client.post(body)
    assert reply.status == 400
    assert reply.text == f"Request could not be decoded: expected a JSON object, got {kind}\n"


def test_v1beta1_review_is_an_unsupported_kind(client: WebhookClient) -> None:
    # The ValidatingWebhookConfiguration asks for v1 only; upstream's router refuses v1beta1 too.
    body = review(job_flow(flow("a")))
    body["apiVersion"] = "admission.k8s.io/v1beta1"
    reply = client.post(json.dumps(body).encode())
    assert reply.status == 400
    assert reply.text == "Unsupported group version kind: admission.k8s.io/v1beta1, Kind=AdmissionReview\n"


def test_other_kind_is_an_unsupported_kind(client: WebhookClient) -> None:
    reply = client.post(json.dumps(job_flow(flow("a"))).encode())
    assert reply.status == 400
    assert reply.text == "Unsupported group version kind: flow.volcano.sh/v1alpha1, Kind=JobFlow\n"


def test_object_without_kind_is_an_unsupported_kind(client: WebhookClient) -> None:
    reply = client.post(b"{}")
    assert reply.status == 400
    assert reply.text == "Unsupported group version kind: /, Kind=\n"


def test_review_without_request_is_a_bad_request(client: WebhookClient) -> None:
    reply = client.post(b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}')
    assert reply.status == 400
    assert reply.text == "Request could not be decoded: the AdmissionReview has no request\n"


def test_review_without_uid_is_a_bad_request(client: WebhookClient) -> None:
    body = review(job_flow(flow("a")))
    del body["request"]["uid"]
    reply = client.post(json.dumps(body).encode())
    assert reply.status == 400
    assert reply.text == "Request could not be decoded: the AdmissionReview's request has no uid\n"


@pytest.mark.parametrize("content_type", ["text/plain", "application/yaml", None])
def test_other_media_type_is_unsupported(client: WebhookClient, content_type: str | None) -> None:
    reply = client.post(VALID_REVIEW, content_type=content_type)
    assert reply.status == 415
    assert reply.text == f"contentType={content_type or ''}, expect application/json\n"


def test_json_with_a_charset_parameter_is_accepted(client: WebhookClient) -> None:
    assert client.post(VALID_REVIEW, content_type="application/json; charset=utf-8").status == 200


def test_body_without_content_length_is_refused(client: WebhookClient) -> None:
    raw = client.raw(request_bytes("POST", "/jobflows/validate", {"Content-Type": JSON}) + VALID_REVIEW)
    assert status_of(raw) == 411


def test_body_over_the_limit_is_refused_without_reading_it(client: WebhookClient) -> None:
    headers = {"Content-Type": JSON, "Content-Length": str(MAX_BODY_BYTES + 1)}
    raw = client.raw(request_bytes("POST", "/jobflows/validate", headers))
    assert status_of(raw) == 413


OVER = f"is over the limit of {MAX_BODY_BYTES}"


@pytest.mark.parametrize(
    ("header", "answer"),
    [
        ("0", 0),
        ("1234", 1234),
        (" 1234\t", 1234),
        ("00012", 12),
        (str(MAX_BODY_BYTES), MAX_BODY_BYTES),
        (None, (411, "a Content-Length is required")),
        ("", (400, "invalid Content-Length ''")),
        ("-1", (400, "invalid Content-Length '-1'")),
        ("+1", (400, "invalid Content-Length '+1'")),
        ("1_000", (400, "invalid Content-Length '1_000'")),
        ("\u0663", (400, "invalid Content-Length '\u0663'")),  # an Arabic-Indic three: int() reads it
        ("1, 1", (400, "invalid Content-Length '1, 1'")),
        ("9" * 20, (400, f"invalid Content-Length '{'9' * 20}'")),
        ("9" * 100_000, (400, f"invalid Content-Length '{'9' * 64}'")),
        (
            str(MAX_BODY_BYTES + 1),
            (413, f"request body of {MAX_BODY_BYTES + 1} bytes is over the limit of {MAX_BODY_BYTES}"),
        ),
        ("9" * 19, (413, f"request body of {'9' * 19} bytes is over the limit of {MAX_BODY_BYTES}")),
    ],
)
def test_content_length_is_ascii_digits_within_the_limit(header: str | None, answer: int | tuple[int, str]) -> None:
    if isinstance(answer, int):
        assert body_length(header) == answer
        return
    with pytest.raises(ReviewError) as refused:
        body_length(header)
    assert (refused.value.code, refused.value.message) == answer


def test_negative_content_length_is_a_bad_request(client: WebhookClient) -> None:
    raw = client.raw(request_bytes("POST", "/jobflows/validate", {"Content-Type": JSON, "Content-Length": "-1"}))
    assert status_of(raw) == 400


# --- routing -------------------------------------------------------------------------------------------


def test_validate_path_answers_with_or_without_the_api_servers_timeout_query(client: WebhookClient) -> None:
    assert client.post(VALID_REVIEW, path="/jobflows/validate").status == 200
    assert client.post(VALID_REVIEW, path="/jobflows/validate?timeout=10s").status == 200


def test_answer_is_json_not_to_be_sniffed(client: WebhookClient) -> None:
    reply = client.post(VALID_REVIEW)
    assert reply.headers["content-type"] == "application/json"
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert int(reply.headers["content-length"]) == len(reply.body)


def test_get_on_the_validate_path_is_not_allowed(client: WebhookClient) -> None:
    reply = client.request("GET", "/jobflows/validate")
    assert reply.status == 405
    assert reply.headers["allow"] == "POST"


def test_post_on_another_path_is_not_found(client: WebhookClient) -> None:
    reply = client.post(VALID_REVIEW, path="/jobs/validate")
    assert reply.status == 404
    assert reply.text == "404 page not found\n"


def test_healthz_is_ok(client: WebhookClient) -> None:
    reply = client.request("GET", "/healthz")
    assert (reply.status, reply.body) == (200, b"ok")


def test_delete_on_healthz_is_not_allowed(client: WebhookClient) -> None:
    reply = client.request("DELETE", "/healthz")
    assert reply.status == 405
    assert reply.headers["allow"] == "GET"


def test_each_answer_closes_its_connection(client: WebhookClient) -> None:
    assert client.post(VALID_REVIEW).headers.get("connection", "close").lower() == "close"


# --- TLS -----------------------------------------------------------------------------------------------


def test_plain_http_gets_no_answer(server: WebhookServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as plain:
        plain.sendall(request_bytes("GET", "/healthz", {}))
        try:
            answer = plain.recv(65536)
        except ConnectionResetError:
            answer = b""
    assert not answer.startswith(b"HTTP/")


def test_client_not_trusting_the_servers_ca_fails_the_handshake(server: WebhookServer) -> None:
    stranger = WebhookClient(server.port, TinyCA("stranger").cert_pem)
    with pytest.raises(ssl.SSLCertVerificationError):
        stranger.request("GET", "/healthz")


def test_serving_certificate_is_valid_for_127_0_0_1(client: WebhookClient) -> None:
    # The client checks the hostname (an IP SAN here), as the API server does.
    assert client.context.check_hostname is True
    assert client.request("GET", "/healthz").status == 200


def test_silent_client_does_not_block_others(client: WebhookClient, server: WebhookServer) -> None:
    # The handshake runs in the connection's thread: a client that connects and says nothing
    # holds only its own thread.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10):
        assert client.request("GET", "/healthz").status == 200


def test_concurrent_reviews_are_each_answered_with_their_own_uid(client: WebhookClient) -> None:
    answers: dict[str, str] = {}

    def post(uid: str) -> None:
        answers[uid] = client.review(review(job_flow(flow("a")), uid=uid))["uid"]

    threads = [threading.Thread(target=post, args=(f"uid-{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == {f"uid-{i}": f"uid-{i}" for i in range(8)}


# --- lifetime ------------------------------------------------------------------------------------------


@pytest.fixture
def own_certs(tmp_path: Path) -> ServingCerts:
    return serving_certs(tmp_path)


@pytest.fixture
def own_server(own_certs: ServingCerts) -> Iterator[WebhookServer]:
    server = WebhookServer(("127.0.0.1", 0), str(own_certs.cert_file), str(own_certs.key_file)).start()
    yield server
    server.stop()


def test_missing_certificate_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        WebhookServer(("127.0.0.1", 0), str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))


def test_key_not_matching_the_certificate_fails_at_construction(tmp_path: Path) -> None:
    first = serving_certs(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    second = serving_certs(other)
    with pytest.raises(ssl.SSLError):
        WebhookServer(("127.0.0.1", 0), str(first.cert_file), str(second.key_file))


def test_stopped_server_refuses_connections(own_certs: ServingCerts) -> None:
    server = WebhookServer(("127.0.0.1", 0), str(own_certs.cert_file), str(own_certs.key_file)).start()
    port = server.port
    server.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_server_never_started_stops_at_once(own_certs: ServingCerts) -> None:
    WebhookServer(("127.0.0.1", 0), str(own_certs.cert_file), str(own_certs.key_file)).stop()


def test_stop_lets_a_call_in_flight_finish(own_server: WebhookServer, own_certs: ServingCerts) -> None:
    client = WebhookClient(own_server.port, own_certs.ca_pem)
    head = request_bytes("POST", "/jobflows/validate", {"Content-Type": JSON, "Content-Length": str(len(VALID_REVIEW))})
    with (
        socket.create_connection(("127.0.0.1", own_server.port), timeout=10) as plain,
        client.context.wrap_socket(plain, server_hostname="127.0.0.1") as tls,
    ):
        tls.sendall(head + VALID_REVIEW[:10])  # the call is now in flight: its body is incomplete
        stopper = threading.Thread(target=own_server.stop)
        stopper.start()
        refused = threading.Event()

        def new_connections_refused() -> bool:
            try:
                socket.create_connection(("127.0.0.1", own_server.port), timeout=1).close()
            except ConnectionRefusedError:
                refused.set()
            except ConnectionResetError:
                pass  # the SYN met the listening socket as it closed: the next try is refused
            return refused.is_set()

        for _ in range(200):
            if new_connections_refused():
                break
            threading.Event().wait(0.01)
        assert refused.is_set(), "stop() did not close the listening socket"
        assert stopper.is_alive(), "stop() returned before the call in flight was answered"
        tls.sendall(VALID_REVIEW[10:])
        reply = b""
        while chunk := tls.recv(65536):
            reply += chunk
    stopper.join(10)
    assert not stopper.is_alive()
    assert status_of(reply) == 200
    assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["response"]["allowed"] is True


def replace_file(path: Path, data: bytes) -> None:
    # As the kubelet updates a mounted Secret: write aside, then rename over the old file.
    aside = path.with_suffix(".new")
    aside.write_bytes(data)
    os.replace(aside, path)


def test_renewed_certificate_is_served_without_a_restart(own_server: WebhookServer, own_certs: ServingCerts) -> None:
    new_ca = TinyCA("renewed-ca")
    pair = new_ca.issue("jobflow-controller-webhook", server=True, ips=("127.0.0.1",))
    replace_file(own_certs.key_file, pair.key_pem)
    replace_file(own_certs.cert_file, pair.cert_pem)
    assert WebhookClient(own_server.port, new_ca.cert_pem).request("GET", "/healthz").status == 200
    with pytest.raises(ssl.SSLCertVerificationError):
        WebhookClient(own_server.port, own_certs.ca_pem).request("GET", "/healthz")


def test_certificate_that_does_not_load_keeps_the_previous_one(
    own_server: WebhookServer, own_certs: ServingCerts
) -> None:
    replace_file(own_certs.cert_file, b"-----BEGIN CERTIFICATE-----\nnot a certificate\n")
    assert WebhookClient(own_server.port, own_certs.ca_pem).request("GET", "/healthz").status == 200


def test_half_renewed_pair_is_picked_up_once_complete(own_server: WebhookServer, own_certs: ServingCerts) -> None:
    new_ca = TinyCA("renewed-ca")
    pair = new_ca.issue("jobflow-controller-webhook", server=True, ips=("127.0.0.1",))
    replace_file(own_certs.cert_file, pair.cert_pem)  # the key still is the old one: does not load
    assert WebhookClient(own_server.port, own_certs.ca_pem).request("GET", "/healthz").status == 200
    replace_file(own_certs.key_file, pair.key_pem)
    assert WebhookClient(own_server.port, new_ca.cert_pem).request("GET", "/healthz").status == 200
