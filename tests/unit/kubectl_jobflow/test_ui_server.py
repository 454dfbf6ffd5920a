"""`kubectl jobflow ui`: the loopback server's token, Host and Origin checks, its endpoints and event
streams, and the backend's actions (with a fake cache and a recorded API). The token travels in the
`X-JobFlow-Token` header here, as a script sends it; test_ui_session.py has the browser's cookie."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from informers.errors import ApiStatusError
from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION
from kubectl_jobflow.ui.backend import Backend, Outcome
from kubectl_jobflow.ui.cache import ChangeLog, involved_object_index_func
from kubectl_jobflow.ui.server import TOKEN_HEADER, UIServer

TOKEN = "t0k3n-for-tests"


class FakeCache:
    def __init__(self, *job_flows: dict[str, Any]) -> None:
        self.changes = ChangeLog()
        self.namespace = None
        self.flows = {f"{f['metadata']['namespace']}/{f['metadata']['name']}": f for f in job_flows}

    def job_flow(self, key: str) -> dict[str, Any] | None:
        return self.flows.get(key)

    def job_flows(self) -> list[dict[str, Any]]:
        return list(self.flows.values())

    def jobs_of(self, job_flow: Any) -> list[Any]:
        return []

    def events_about(self, kind: str, namespace: str, name: str) -> list[Any]:
        return []


class FakeBackend:
    """What the server needs of a Backend, recording the actions it is asked for."""

    def __init__(self) -> None:
        self.cache = FakeCache()
        self.acted: list[tuple[str, str, list[str]]] = []

    def list_snapshot(self) -> dict[str, Any]:
        return {"scope": "", "rows": [{"key": "ns/p"}]}

    def list_changes(self, keys: set[str]) -> dict[str, Any]:
        return {"rows": [{"key": k} for k in sorted(keys)], "removed": []}

    def page(self, key: str) -> dict[str, Any] | None:
        return {"key": key} if key == "ns/p" else None

    def act(self, key: str, action: str, flows: list[str]) -> Outcome:
        self.acted.append((key, action, flows))
        return Outcome(200, f"{action} sent to {key}")


@pytest.fixture
def server() -> Iterator[UIServer]:
    ui = UIServer(FakeBackend(), token=TOKEN)  # type: ignore[arg-type]
    ui.start()
    yield ui
    ui.shutdown()


def request(
    ui: UIServer,
    method: str,
    path: str,
    *,
    host: str | None = None,
    headers: dict[str, str] | None = None,
    body: Any = None,
    auth: bool = True,
    raw: bool = False,
) -> tuple[int, dict[str, str], bytes]:
    """`path` below the session's prefix (`/api/list`), or with `raw` as given."""
    conn = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=10)
    path = path if raw else under(ui, path)
    all_headers = {"Host": host or f"127.0.0.1:{ui.port}", **({TOKEN_HEADER: TOKEN} if auth else {}), **(headers or {})}
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    if data is not None:
        all_headers.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=data, headers=all_headers)
    response = conn.getresponse()
    result = response.status, dict(response.getheaders()), response.read()
    conn.close()
    return result


def under(ui: UIServer, path: str) -> str:
    """`/api/list` as the server's own path: under the session's secret prefix."""
    return ui.credentials.prefix + path.removeprefix("/")


def with_token(path: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}token={TOKEN}"


# -- the token, Host and Origin ----------------------------------------------------------------
def test_the_server_listens_on_loopback_only_and_prints_a_url_with_its_token(server: UIServer) -> None:
    assert server.httpd.server_address[0] == "127.0.0.1"
    prefix = server.credentials.prefix
    assert server.url == f"http://127.0.0.1:{server.port}{prefix}?token={TOKEN}"
    assert len(prefix) == 24 and prefix != UIServer(FakeBackend(), token=TOKEN).credentials.prefix  # type: ignore[arg-type]


def test_a_random_token_is_made_when_none_is_given() -> None:
    first, second = UIServer(FakeBackend()), UIServer(FakeBackend())  # type: ignore[arg-type]
    try:
        assert len(first.token) >= 32 and first.token != second.token
    finally:
        first.shutdown()
        second.shutdown()


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/static/app.js",
        "/static/dag.js",
        "/static/app.css",
        "/api/list",
        "/api/jobflow?key=ns/p",
        "/api/stream/list",
    ],
)
@pytest.mark.parametrize("token", [None, "wrong", TOKEN[:-1]])
def test_every_request_without_the_right_token_is_refused(server: UIServer, path: str, token: str | None) -> None:
    query = "" if token is None else f"{'&' if '?' in path else '?'}token={token}"
    code, headers, body = request(server, "GET", path + query, auth=False)
    assert code == 403
    assert json.loads(body) == {"error": "missing or wrong token"}
    assert headers["Connection"] == "close" and "Set-Cookie" not in headers
    code, _, _ = request(server, "GET", path, headers={TOKEN_HEADER: token or ""})
    assert code == 403


@pytest.mark.parametrize("path", ["/static/app.js", "/api/list", "/api/jobflow?key=ns/p", "/api/stream/list"])
def test_the_query_token_opens_the_entry_url_only(server: UIServer, path: str) -> None:
    """Anywhere else it would end up in logs, histories and Referer headers: scripts use the header."""
    assert request(server, "GET", with_token(path), auth=False)[0] == 403


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "localhost", "10.0.0.1:{port}"])
def test_a_request_for_another_host_is_refused_even_with_the_token(server: UIServer, host: str) -> None:
    code, _, body = request(server, "GET", "/api/list", host=host.format(port=server.port))
    assert code == 403 and json.loads(body) == {"error": "unexpected Host header"}


def test_the_token_may_come_in_a_header(server: UIServer) -> None:
    code, _, body = request(server, "GET", "/api/list", headers={TOKEN_HEADER: TOKEN})
    assert code == 200 and json.loads(body)["rows"] == [{"key": "ns/p"}]
    assert request(server, "GET", "/api/list", host=f"localhost:{server.port}", headers={TOKEN_HEADER: TOKEN})[0] == 200


def test_the_page_links_its_assets_without_the_token_and_forbids_anything_from_elsewhere(server: UIServer) -> None:
    code, headers, body = request(server, "GET", with_token("/"), auth=False)
    assert code == 200 and headers["Content-Type"].startswith("text/html")
    assert b'src="static/app.js"' in body and TOKEN.encode() not in body and b"token" not in body
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert headers["Referrer-Policy"] == "no-referrer" and headers["Cache-Control"] == "no-store"
    code, headers, body = request(server, "GET", "/static/dag.js")
    assert code == 200 and headers["Content-Type"].startswith("text/javascript") and b"JobflowDag" in body


def test_no_asset_refers_to_the_network() -> None:
    server = UIServer(FakeBackend(), token=TOKEN)  # type: ignore[arg-type]
    try:
        for name, content in server.static.items():
            assert b"http://" not in content.replace(b'xmlns="http://www.w3.org/2000/svg"', b""), name
            assert b"https://" not in content and b"//cdn" not in content, name
    finally:
        server.shutdown()


@pytest.mark.parametrize("path", ["/static/../server.py", "/static/index.html.bak", "/api/nothing", "/etc/passwd"])
def test_anything_else_is_not_found(server: UIServer, path: str) -> None:
    assert request(server, "GET", path)[0] == 404


# -- the JobFlow page --------------------------------------------------------------------------
def test_a_jobflow_document_is_served_by_key_and_a_missing_one_is_404(server: UIServer) -> None:
    code, _, body = request(server, "GET", "/api/jobflow?key=ns/p")
    assert code == 200 and json.loads(body) == {"key": "ns/p"}
    assert request(server, "GET", "/api/jobflow?key=ns/q")[0] == 404


# -- the event streams -------------------------------------------------------------------------
def read_event(response: http.client.HTTPResponse) -> tuple[str, Any]:
    event, data = "", ""
    while True:
        line = response.readline().decode()
        if line.startswith(":"):
            continue
        if line.startswith("event: "):
            event = line.removeprefix("event: ").strip()
        elif line.startswith("data: "):
            data = line.removeprefix("data: ").strip()
        elif line == "\n" and event:
            return event, json.loads(data)


def open_stream(ui: UIServer, path: str) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=10)
    conn.request("GET", under(ui, path), headers={"Host": f"127.0.0.1:{ui.port}", TOKEN_HEADER: TOKEN})
    response = conn.getresponse()
    assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
    return conn, response


def test_the_list_stream_sends_a_snapshot_then_the_rows_that_changed(server: UIServer) -> None:
    conn, response = open_stream(server, "/api/stream/list")
    try:
        assert read_event(response) == ("snapshot", {"scope": "", "rows": [{"key": "ns/p"}]})
        server.backend.cache.changes.touch(["ns/b", "ns/a"])
        assert read_event(response) == ("changes", {"rows": [{"key": "ns/a"}, {"key": "ns/b"}], "removed": []})
    finally:
        conn.close()


def test_a_jobflow_stream_sends_its_page_again_only_when_it_changes(server: UIServer) -> None:
    conn, response = open_stream(server, "/api/stream/jobflow?key=ns/p")
    try:
        assert read_event(response) == ("page", {"key": "ns/p"})
        server.backend.cache.changes.touch(["ns/other"])
        server.backend.cache.changes.touch(["ns/p"])
        assert read_event(response) == ("page", {"key": "ns/p"})
    finally:
        conn.close()


def test_a_stream_for_a_jobflow_that_does_not_exist_says_so(server: UIServer) -> None:
    conn, response = open_stream(server, "/api/stream/jobflow?key=ns/gone")
    try:
        assert read_event(response) == ("gone", {"key": "ns/gone"})
    finally:
        conn.close()


def test_shutdown_ends_the_open_streams() -> None:
    ui = UIServer(FakeBackend(), token=TOKEN)  # type: ignore[arg-type]
    ui.start()
    conn, response = open_stream(ui, "/api/stream/list")
    read_event(response)
    ui.shutdown()
    assert response.read() == b""  # the stream ended rather than hanging until the timeout
    conn.close()


# -- actions -----------------------------------------------------------------------------------
def post(ui: UIServer, body: Any, **kwargs: Any) -> tuple[int, Any]:
    code, _, data = request(ui, "POST", "/api/action", body=body, **kwargs)
    return code, json.loads(data)


def test_an_action_is_handed_to_the_backend(server: UIServer) -> None:
    origin = {"Origin": f"http://127.0.0.1:{server.port}"}
    code, doc = post(server, {"key": "ns/p", "action": "retry", "flows": ["b"]}, headers=origin)
    assert (code, doc) == (200, {"message": "retry sent to ns/p"})
    assert server.backend.acted == [("ns/p", "retry", ["b"])]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("headers", "path_token", "code", "error"),
    [
        ({"Origin": "http://evil.example"}, True, 403, "unexpected Origin"),
        ({"Origin": "http://127.0.0.1:1"}, True, 403, "unexpected Origin"),
        ({"Origin": "null"}, True, 403, "unexpected Origin"),
        ({}, False, 403, "missing or wrong token"),
        ({"Content-Type": "text/plain"}, True, 415, "the body must be application/json"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, True, 415, "the body must be application/json"),
    ],
)
def test_a_post_from_elsewhere_or_not_json_is_refused(
    server: UIServer, headers: dict[str, str], path_token: bool, code: int, error: str
) -> None:
    status, _, body = request(
        server, "POST", "/api/action", headers=headers, body={"key": "ns/p", "action": "stop"}, auth=path_token
    )
    assert (status, json.loads(body)) == (code, {"error": error})
    assert server.backend.acted == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", json.dumps({"key": "ns/p", "flows": "b"}).encode()])
def test_a_malformed_action_is_refused(server: UIServer, body: bytes) -> None:
    status, _, _ = request(server, "POST", "/api/action", body=body)
    assert status == 400


# -- the backend -------------------------------------------------------------------------------
def job_flow(name: str = "p", phase: str = "Running", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}], **spec},
        "status": {"state": {"phase": phase}, "failedJobs": ["p-b"]},
    }


class RecordedApi:
    """The clientset calls the backend makes: access reviews and patches."""

    def __init__(self, allowed: bool = True, patch_error: ApiStatusError | None = None) -> None:
        self.allowed = allowed
        self.patch_error = patch_error
        self.reviews = 0
        self.patches: list[tuple[str, Any]] = []

    def resource(self, resource: Any, namespace: str | None = None) -> RecordedApi:
        return self

    def job_flows(self, namespace: str | None = None) -> RecordedApi:
        return self

    def create(self, body: Any) -> Any:
        self.reviews += 1
        return {"status": {"allowed": self.allowed}}

    def patch(self, name: str, body: Any) -> Any:
        if self.patch_error is not None:
            raise self.patch_error
        self.patches.append((name, body))
        return {}


def backend(api: RecordedApi, *job_flows: dict[str, Any], clock: list[float] | None = None) -> Backend:
    now = clock or [0.0]
    return Backend(FakeCache(*job_flows), api, clock=lambda: now[0])  # type: ignore[arg-type]


def test_the_backend_sends_the_actions_patch_as_the_user() -> None:
    api = RecordedApi()
    assert backend(api, job_flow()).act("ns/p", "stop") == Outcome(200, "stop sent to ns/p")
    assert api.patches == [("p", {"spec": {"shutdown": "Stop"}})]


@pytest.mark.parametrize(
    ("key", "action", "flows", "outcome"),
    [
        ("ns/p", "delete", [], Outcome(400, "unknown action 'delete'")),
        ("ns/q", "stop", [], Outcome(404, "JobFlow ns/q not found")),
        ("ns/p", "retry", ["zzz"], Outcome(400, "flows apply to retry only, and must be flows of p: ['zzz']")),
        ("ns/p", "stop", ["a"], Outcome(400, "flows apply to retry only, and must be flows of p: ['a']")),
        ("ns/p", "resume", [], Outcome(409, "resume: the JobFlow is not suspended")),
    ],
)
def test_the_backend_refuses_what_cannot_apply_without_calling_the_api(
    key: str, action: str, flows: list[str], outcome: Outcome
) -> None:
    api = RecordedApi()
    assert backend(api, job_flow()).act(key, action, flows) == outcome
    assert api.patches == []


def test_retry_of_chosen_flows_is_one_annotation() -> None:
    api = RecordedApi()
    assert backend(api, job_flow()).act("ns/p", "retry", ["b"]).code == 200
    ((name, patch),) = api.patches
    request_doc = json.loads(patch["metadata"]["annotations"][RETRY_REQUEST_ANNOTATION])
    assert name == "p" and request_doc["flows"] == ["b"] and request_doc["id"]


def test_the_api_servers_refusal_is_passed_on() -> None:
    api = RecordedApi(patch_error=ApiStatusError(422, "Invalid", "spec.shutdown: may not go back"))
    assert backend(api, job_flow()).act("ns/p", "terminate") == Outcome(
        422, "terminate: spec.shutdown: may not go back"
    )


def test_a_user_who_may_not_patch_is_refused_and_the_review_is_cached() -> None:
    api = RecordedApi(allowed=False)
    clock = [0.0]
    ui = backend(api, job_flow(), clock=clock)
    outcome = ui.act("ns/p", "stop")
    assert outcome.code == 409 and "RBAC does not allow patch" in outcome.message
    assert ui.page("ns/p")["actions"]["stop"]["enabled"] is False  # type: ignore[index]
    assert api.reviews == 1 and api.patches == []
    clock[0] = 31.0
    ui.denied("ns")
    assert api.reviews == 2


def test_a_layout_is_computed_once_per_shape() -> None:
    ui = backend(RecordedApi(), job_flow(), job_flow("q"))
    first = ui.page("ns/p")
    assert first is not None and ui.page("ns/q") is not None
    assert len(ui._layouts) == 1  # same flows, same shape
    assert set(first["drawing"]["boxes"]) == {"a", "b"}


# -- the cache's pieces ------------------------------------------------------------------------
def test_the_change_log_tells_what_changed_since_a_version() -> None:
    log = ChangeLog()
    start = log.version
    log.touch(["ns/a"])
    middle = log.version
    log.touch(["ns/b", "ns/a"])
    assert log.changed_since(start) == {"ns/a", "ns/b"}
    assert log.changed_since(middle) == {"ns/a", "ns/b"}
    assert log.changed_since(log.version) == set()
    assert log.wait(log.version, 0.01) == log.version  # times out without a change


@pytest.mark.parametrize(
    ("event", "keys"),
    [
        ({"metadata": {"namespace": "ns"}, "involvedObject": {"kind": "Job", "name": "p-a"}}, ["ns/Job/p-a"]),
        ({"involvedObject": {"kind": "JobFlow", "name": "p", "namespace": "other"}}, ["other/JobFlow/p"]),
        ({"involvedObject": {}}, []),
    ],
)
def test_events_are_indexed_by_the_object_they_are_about(event: dict[str, Any], keys: list[str]) -> None:
    assert involved_object_index_func(event) == keys
