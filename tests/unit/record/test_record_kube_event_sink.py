"""``KubeEventSink`` over the real ``kubernetes`` 37.x ``ApiClient``, against a stub HTTP server.

The stub stands in for the API server's Events endpoints only; what is checked is what goes on
the wire (method, path, headers, the exact JSON body) and how the replies' statuses are mapped
onto ``SinkError`` flags.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kubernetes import client as k8s_client

from informers.errors import ApiStatusError
from jobflow_controller.kube.event_sink import KubeEventSink
from jobflow_controller.record import EventCorrelator, SinkError, record_to_sink


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


Responder = Callable[[Request], tuple[int, Any]]


def _status(code: int, reason: str, causes: list[dict[str, str]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "code": code,
        "message": f"{reason} happened",
    }
    if causes:
        body["details"] = {"causes": causes}
    return body


class StubServer:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.responder: Responder = self._echo
        self._rv = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                request = Request(self.command, self.path, dict(self.headers.items()), json.loads(raw) if raw else None)
                stub.requests.append(request)
                code, payload = stub.responder(request)
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_PUT = do_PATCH = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()
        self.host = f"http://127.0.0.1:{self._server.server_port}"

    def _echo(self, request: Request) -> tuple[int, Any]:
        self._rv += 1
        body = copy.deepcopy(request.body or {})
        body.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
        return (201 if request.method == "POST" else 200), body

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer()
    yield server
    server.close()


def _api_client(host: str) -> Any:
    configuration = k8s_client.Configuration(host=host)
    configuration.api_key = {"BearerToken": "s3cr3t"}
    configuration.api_key_prefix = {"BearerToken": "Bearer"}
    return k8s_client.ApiClient(configuration)


EVENT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "jf.18ed66a90f148c58", "namespace": "ns1"},
    "involvedObject": {
        "kind": "JobFlow",
        "namespace": "ns1",
        "name": "jf",
        "uid": "uid-1",
        "apiVersion": "flow.volcano.sh/v1alpha1",
    },
    "reason": "Created",
    "message": "create a job named jf-a!",
    "source": {"component": "vc-controller-manager"},
    "firstTimestamp": "2026-03-01T12:00:00Z",
    "lastTimestamp": "2026-03-01T12:00:00Z",
    "count": 1,
    "type": "Normal",
    "reportingComponent": "vc-controller-manager",
    "reportingInstance": "",
}


def test_create_posts_the_event_dict_verbatim(stub: StubServer) -> None:
    sink = KubeEventSink(_api_client(stub.host))

    created = sink.create(EVENT)

    request = stub.requests[0]
    assert (request.method, request.path) == ("POST", "/api/v1/namespaces/ns1/events")
    assert request.body == EVENT  # timestamps stay "...Z"; no model round trip
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["authorization"] == "Bearer s3cr3t"
    assert created["metadata"]["resourceVersion"] == "1"
    assert isinstance(created, dict)


def test_patch_is_a_strategic_merge_patch(stub: StubServer) -> None:
    sink = KubeEventSink(_api_client(stub.host))

    sink.patch(EVENT, {"count": 2, "lastTimestamp": "2026-03-01T12:00:09Z", "message": "m"})

    request = stub.requests[0]
    assert (request.method, request.path) == ("PATCH", "/api/v1/namespaces/ns1/events/jf.18ed66a90f148c58")
    assert request.headers["Content-Type"] == "application/strategic-merge-patch+json"
    assert request.body == {"count": 2, "lastTimestamp": "2026-03-01T12:00:09Z", "message": "m"}


def test_update_puts_the_event(stub: StubServer) -> None:
    KubeEventSink(_api_client(stub.host)).update(EVENT)
    assert (stub.requests[0].method, stub.requests[0].path) == (
        "PUT",
        "/api/v1/namespaces/ns1/events/jf.18ed66a90f148c58",
    )


@pytest.mark.parametrize(
    ("code", "reason", "causes", "flags"),
    [
        pytest.param(404, "NotFound", None, {"not_found"}, id="404-not-found"),
        pytest.param(409, "AlreadyExists", None, {"already_exists"}, id="409-already-exists"),
        pytest.param(409, "Conflict", None, set(), id="409-conflict"),
        pytest.param(
            403,
            "Forbidden",
            [{"reason": "NamespaceTerminating", "message": "ns is terminating"}],
            {"namespace_terminating"},
            id="403-namespace-terminating",
        ),
        pytest.param(403, "Forbidden", None, set(), id="403-forbidden"),
        pytest.param(422, "Invalid", None, set(), id="422-invalid"),
        pytest.param(429, "TooManyRequests", None, {"retriable"}, id="429-retriable"),
        pytest.param(500, "InternalError", None, set(), id="500-rejected"),
        pytest.param(503, "ServiceUnavailable", None, {"retriable"}, id="503-retriable"),
    ],
)
def test_api_statuses_map_to_sink_error_flags(
    stub: StubServer, code: int, reason: str, causes: list[dict[str, str]] | None, flags: set[str]
) -> None:
    stub.responder = lambda request: (code, _status(code, reason, causes))
    sink = KubeEventSink(_api_client(stub.host))

    with pytest.raises(SinkError) as caught:
        sink.create(EVENT)

    err = caught.value
    assert err.status == code and err.reason == reason
    all_flags = ("not_found", "already_exists", "namespace_terminating", "retriable")
    assert {name for name in all_flags if getattr(err, name)} == flags


def test_connection_refused_is_retriable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    configuration = k8s_client.Configuration(host=f"http://127.0.0.1:{port}")
    configuration.retries = False
    sink = KubeEventSink(k8s_client.ApiClient(configuration), request_timeout=(1.0, 1.0))

    with pytest.raises(SinkError) as caught:
        sink.create(EVENT)

    assert caught.value.retriable and caught.value.status is None


def test_event_without_namespace_is_a_construction_error() -> None:
    sink = KubeEventSink(None)
    with pytest.raises(SinkError) as caught:
        sink.create({**EVENT, "metadata": {"name": "x"}})
    assert caught.value.status is None and not caught.value.retriable


def test_unserialisable_body_is_a_construction_error() -> None:
    sink = KubeEventSink(None)
    with pytest.raises(SinkError) as caught:
        sink.create_event("ns", {"message": object()})
    assert caught.value.status is None and not caught.value.retriable


def test_record_to_sink_creates_then_patches_through_the_client(stub: StubServer) -> None:
    sink = KubeEventSink(_api_client(stub.host))
    correlator = EventCorrelator()

    record_to_sink(sink, dict(EVENT), correlator, 0.0, threading.Event())
    record_to_sink(sink, {**EVENT, "lastTimestamp": "2026-03-01T12:00:09Z"}, correlator, 0.0, threading.Event())

    assert [r.method for r in stub.requests] == ["POST", "PATCH"]
    assert stub.requests[1].body == {
        "count": 2,
        "lastTimestamp": "2026-03-01T12:00:09Z",
        "message": EVENT["message"],
    }


def test_expired_event_is_recreated_through_the_client(stub: StubServer) -> None:
    def responder(request: Request) -> tuple[int, Any]:
        if request.method == "PATCH":
            return 404, _status(404, "NotFound")
        return 201, request.body

    stub.responder = responder
    sink = KubeEventSink(_api_client(stub.host))
    event = {**EVENT, "count": 2, "metadata": {**EVENT["metadata"], "resourceVersion": "9"}}

    record_to_sink(sink, event, EventCorrelator(), 0.0, threading.Event())

    assert [r.method for r in stub.requests] == ["PATCH", "POST"]
    assert "resourceVersion" not in stub.requests[1].body["metadata"]


class FakeRequester:
    """Stands in for ``kube.rest.RestClient.request``."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.calls: list[tuple[str, str, Any, str]] = []

    def request(self, method: str, path: str, *, body: Any = None, content_type: str = "", timeout: Any = None) -> Any:
        self.calls.append((method, path, body, content_type))
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


def test_sink_over_the_rest_client_maps_its_errors() -> None:
    not_found = KubeEventSink.from_rest_client(FakeRequester(ApiStatusError(404, "NotFound", "gone")))
    with pytest.raises(SinkError) as caught:
        not_found.patch(EVENT, {"count": 2})
    assert caught.value.not_found

    unreachable = KubeEventSink.from_rest_client(FakeRequester(ConnectionError("refused")))
    with pytest.raises(SinkError) as caught:
        unreachable.create(EVENT)
    assert caught.value.retriable


def test_sink_over_the_rest_client_sends_strategic_merge_patches() -> None:
    requester = FakeRequester({"metadata": {"name": "n"}})
    sink = KubeEventSink.from_rest_client(requester)

    sink.patch(EVENT, {"count": 2})

    assert requester.calls == [
        (
            "PATCH",
            "/api/v1/namespaces/ns1/events/jf.18ed66a90f148c58",
            {"count": 2},
            "application/strategic-merge-patch+json",
        )
    ]


def test_sink_over_the_project_rest_client(stub: StubServer) -> None:
    from jobflow_controller.kube.rest import RestClient

    rest = RestClient(k8s_client.Configuration(host=stub.host), qps=0)
    sink = KubeEventSink.from_rest_client(rest)

    created = sink.create(EVENT)
    sink.patch(EVENT, {"count": 2})

    assert created["metadata"]["resourceVersion"] == "1"
    assert stub.requests[1].headers["Content-Type"] == "application/strategic-merge-patch+json"
