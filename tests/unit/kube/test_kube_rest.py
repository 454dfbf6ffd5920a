"""The kube package: URLs, API errors as typed exceptions, the watch stream decoder, the rate limiter."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s_client

from informers import ListOptions, is_expired
from jobflow_controller.kube import errors, resources
from jobflow_controller.kube.listwatch import ResourceListerWatcher, StreamWatch
from jobflow_controller.kube.resources import JOBS
from jobflow_controller.kube.rest import RestClient, TokenBucket, add_user_agent, decode_json, default_user_agent
from jobflow_controller.local.resources import NAMESPACES
from workqueue import FakeClock


def _status(code: int, reason: str, message: str) -> bytes:
    return json.dumps({"kind": "Status", "code": code, "reason": reason, "message": message}).encode()


def test_resource_paths() -> None:
    assert (
        resources.JOB_FLOWS.path("ns", "a", "status")
        == "/apis/flow.volcano.sh/v1alpha1/namespaces/ns/jobflows/a/status"
    )
    assert resources.JOBS.path() == "/apis/batch.volcano.sh/v1alpha1/jobs"
    assert resources.EVENTS.path("ns") == "/api/v1/namespaces/ns/events"
    assert NAMESPACES.path("ignored", "x") == "/api/v1/namespaces/x"
    assert resources.JOB_TEMPLATES.group_resource == "jobtemplates.flow.volcano.sh"


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (404, "NotFound", errors.NotFoundError),
        (409, "AlreadyExists", errors.AlreadyExistsError),
        (409, "Conflict", errors.ConflictError),
        (403, "Forbidden", errors.ForbiddenError),
        (422, "Invalid", errors.InvalidError),
        (410, "Expired", errors.ExpiredError),
        (429, "TooManyRequests", errors.TooManyRequestsError),
        (500, "InternalError", errors.ApiStatusError),
    ],
)
def test_a_status_body_becomes_the_matching_error(code: int, reason: str, cls: type[Exception]) -> None:
    err = errors.from_response(code, _status(code, reason, "the message"))
    assert type(err) is cls
    assert (err.code, str(err)) == (code, "the message")


def test_a_410_is_recognised_by_the_reflector() -> None:
    assert is_expired(errors.from_response(410, _status(410, "Expired", "too old resource version: 1 (5)")))


def test_a_body_that_is_not_a_status_keeps_its_text() -> None:
    err = errors.from_response(502, b"Bad Gateway")
    assert (err.code, str(err)) == (502, "Bad Gateway")


class _Response:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.closed = False

    def stream(self, amt: int | None = None, decode_content: bool = True) -> Iterator[bytes]:
        yield from self.chunks

    def shutdown(self) -> None:
        self.closed = True

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        pass


def test_watch_lines_split_across_chunks_are_joined() -> None:
    line1 = json.dumps({"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "5"}}}).encode()
    line2 = json.dumps({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}).encode()
    payload = line1 + b"\n" + line2 + b"\n"
    chunks = [payload[:7], payload[7:40], payload[40:]]
    events = list(StreamWatch(_Response(chunks)))  # type: ignore[arg-type]
    assert [(e.type, e.object["metadata"]["resourceVersion"]) for e in events] == [("ADDED", "5"), ("BOOKMARK", "9")]


def test_an_error_event_carries_the_status() -> None:
    line = json.dumps({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}}).encode()
    (event,) = list(StreamWatch(_Response([line + b"\n"])))  # type: ignore[arg-type]
    assert event.type == "ERROR" and event.object["code"] == 410


def test_stopping_a_watch_closes_the_stream() -> None:
    response = _Response([])
    StreamWatch(response).stop()  # type: ignore[arg-type]
    assert response.closed


def test_the_client_side_bucket_smooths_bursts_to_qps() -> None:
    # A fake clock: on a loaded machine real time passes between the reservations.
    bucket = TokenBucket(qps=10, burst=2, clock=FakeClock())
    assert [round(bucket.reserve(), 2) for _ in range(4)] == [0.0, 0.0, 0.1, 0.2]


def test_the_backlog_is_how_long_the_next_request_would_wait_and_takes_no_token() -> None:
    clock = FakeClock()
    bucket = TokenBucket(qps=10, burst=2, clock=clock)
    assert bucket.backlog() == 0.0
    bucket.reserve()
    bucket.reserve()
    assert [round(bucket.backlog(), 2) for _ in range(3)] == [0.1, 0.1, 0.1]
    bucket.reserve()  # a waiter holds the next token: the one after is 0.2 s away
    assert round(bucket.backlog(), 2) == 0.2
    clock.step(0.3)
    assert bucket.backlog() == 0.0


def test_a_qps_of_zero_is_unlimited() -> None:
    bucket = TokenBucket(qps=0, burst=1)
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]


def test_a_stop_interrupts_the_wait_for_a_token() -> None:
    bucket = TokenBucket(qps=0.1, burst=1)
    bucket.accept()  # the burst; the next token is 10 s away
    stop = threading.Event()
    threading.Timer(0.1, stop.set).start()
    started = time.monotonic()
    with pytest.raises(errors.RequestCancelled):
        bucket.accept(stop)
    assert time.monotonic() - started < 2.0


def test_a_set_stop_refuses_even_a_free_token() -> None:
    stop = threading.Event()
    stop.set()
    with pytest.raises(errors.RequestCancelled):
        TokenBucket(qps=0, burst=1).accept(stop)


def test_a_cancelled_client_sends_nothing() -> None:
    cancel = threading.Event()
    # Nothing listens on port 9 of localhost: had the request been sent, it would fail otherwise.
    rest = RestClient(k8s_client.Configuration(host="http://127.0.0.1:9"), qps=0, cancel=cancel)
    cancel.set()
    with pytest.raises(errors.RequestCancelled):
        rest.get("/api/v1/namespaces")
    rest.close()


def test_the_user_agent_is_upstreams_binary_so_the_field_manager_is_too() -> None:
    agent = default_user_agent(version="1.2.3")
    assert agent.startswith("vc-controller-manager/v1.2.3 (")
    # The API server names the field manager after the part before the first "/".
    assert agent.split("/", 1)[0] == "vc-controller-manager"
    assert add_user_agent(agent, "leader-election") == agent + "/leader-election"


def test_iterating_a_watch_again_resumes_after_the_last_event() -> None:
    lines = [
        json.dumps({"type": "ADDED", "object": {"metadata": {"name": n, "resourceVersion": rv}}}).encode()
        for n, rv in (("a", "1"), ("b", "2"), ("c", "3"))
    ]
    payload = b"\n".join(lines) + b"\n"
    watch = StreamWatch(_Response([payload[:30], payload[30:]]))  # type: ignore[arg-type]
    first = next(iter(watch))
    rest = list(watch)
    assert [first.object["metadata"]["name"]] + [e.object["metadata"]["name"] for e in rest] == ["a", "b", "c"]


def test_blank_lines_between_watch_events_are_skipped() -> None:
    line = json.dumps({"type": "ADDED", "object": {"metadata": {"name": "a"}}}).encode()
    events = list(StreamWatch(_Response([b"\n" + line + b"\n\r\n  \n"])))  # type: ignore[arg-type]
    assert [e.type for e in events] == ["ADDED"]


def test_decoded_objects_share_their_dictionary_keys() -> None:
    one = decode_json(b'{"metadata": {"namespace": "default"}}')
    other = decode_json(b'{"metadata": {"namespace": "default"}}')
    assert next(iter(one)) is next(iter(other))
    assert next(iter(one["metadata"])) is next(iter(other["metadata"]))


class _RecordingRest:
    """Stands in for RestClient: keeps the query of each streaming GET."""

    def __init__(self) -> None:
        self.queries: list[dict[str, Any]] = []

    def stream(self, path: str, *, query: dict[str, Any], read_timeout: float) -> _Response:
        self.queries.append(query)
        return _Response([])


def test_a_watch_list_watch_asks_for_the_initial_events() -> None:
    rest = _RecordingRest()
    lw = ResourceListerWatcher(rest, JOBS, "ns")  # type: ignore[arg-type]
    assert lw.is_watch_list_semantics_supported()
    lw.watch(
        ListOptions(
            resource_version="",
            resource_version_match="NotOlderThan",
            send_initial_events=True,
            allow_watch_bookmarks=True,
        )
    )
    lw.watch(ListOptions(resource_version="7", allow_watch_bookmarks=True))
    watch_list, plain = rest.queries
    assert watch_list["sendInitialEvents"] is True
    assert watch_list["resourceVersionMatch"] == "NotOlderThan"
    assert watch_list["resourceVersion"] is None  # "" is sent as no resourceVersion
    assert plain["sendInitialEvents"] is None
    assert plain["resourceVersion"] == "7"


def test_a_document_above_the_large_size_decodes_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    document = json.dumps({"items": [{"metadata": {"name": f"j{i}"}} for i in range(50)]}).encode()
    small = decode_json(document)
    monkeypatch.setattr("jobflow_controller.kube.rest.LARGE_DOCUMENT_BYTES", 100)
    assert decode_json(document) == small
    assert decode_json(memoryview(document)) == small
    with pytest.raises(ValueError):
        decode_json(document[:-1])


class _Echo:
    """A local HTTP server that answers every request with the body it received, as JSON."""

    def __init__(self) -> None:
        import http.server

        received: list[bytes] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.received = received
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.host = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # A plain JSON document goes out as it is (no sanitizing copy first).
        ({"status": {"state": {"phase": "Succeed"}, "jobs": ["a", "b"], "n": 1.5, "none": None}}, None),
        # One json.dumps refuses is sanitized as the client library always did: dates in ISO 8601.
        (
            {"at": __import__("datetime").datetime(2026, 1, 2, 3, 4, 5)},
            {"at": "2026-01-02T03:04:05"},
        ),
        # A key that is not a string: orjson refuses it, the sanitizing way writes it as json.dumps does.
        ({"counts": {1: "a"}}, {"counts": {"1": "a"}}),
    ],
)
def test_a_request_body_is_sent_as_the_json_document_it_is(body: dict[str, Any], expected: Any) -> None:
    echo = _Echo()
    rest = RestClient(k8s_client.Configuration(host=echo.host), qps=0)
    try:
        answer = rest.request("PUT", "/apis/x", body=body)
    finally:
        rest.close()
        echo.close()
    assert answer == (expected if expected is not None else body)
    assert [json.loads(sent) for sent in echo.received] == [expected if expected is not None else body]
