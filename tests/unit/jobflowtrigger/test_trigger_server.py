"""The trigger endpoint's answers, one per refusal, in their order (jobflowtrigger/server.py).

The server runs for real on a loopback port (plain HTTP here; TLS is the e2e test's); the
TokenReview and SubjectAccessReview answers and the trigger controller's side are fakes.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from jobflow_controller.jobflowtrigger.auth import Caller, access_review, bearer_token, caller_of
from jobflow_controller.jobflowtrigger.bindings import MAX_BODY_BYTES
from jobflow_controller.jobflowtrigger.server import Answer, TriggerServer

ALICE = Caller("alice", "u-1", ("dev",), ())


class FakeAuth:
    def __init__(self) -> None:
        self.reviews = 0

    def authenticate(self, token: str) -> Caller | None:
        self.reviews += 1
        if token == "boom":
            raise RuntimeError("apiserver down")
        return ALICE if token in ("good", "reader") else None

    def allowed(self, caller: Caller, namespace: str) -> bool:
        return namespace == "team"


class FakeTriggers:
    def __init__(self) -> None:
        self.fired: list[tuple[str, str, bytes]] = []
        self.limited = False

    def admit(self, namespace: str, name: str) -> Answer | None:
        if name != "etl":
            return Answer(404, {"message": "not found"})
        if self.limited:
            return Answer(429, {"message": "slow down"}, retry_after=0.4)
        return None

    def fire(self, namespace: str, name: str, body: bytes) -> Answer:
        if body.startswith(b"bad"):
            return Answer(400, {"message": "bad body"})
        self.fired.append((namespace, name, body))
        return Answer(202, {"jobFlow": "etl-abcde"})


@pytest.fixture
def endpoint() -> Iterator[tuple[TriggerServer, FakeAuth, FakeTriggers]]:
    auth, triggers = FakeAuth(), FakeTriggers()
    server = TriggerServer(("127.0.0.1", 0), auth, triggers).start()  # type: ignore[arg-type]
    yield server, auth, triggers
    server.stop()


def post(
    server: TriggerServer, path: str, body: bytes = b"{}", token: str | None = "good", method: str = "POST"
) -> tuple[int, dict[str, Any], dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    payload = json.loads(resp.read() or b"{}")
    conn.close()
    return resp.status, payload, dict(resp.getheaders())


def test_an_allowed_caller_gets_202_with_the_run(endpoint: Any) -> None:
    server, _, triggers = endpoint
    code, body, _ = post(server, "/triggers/team/etl", b'{"dataset": "d"}')
    assert (code, body) == (202, {"jobFlow": "etl-abcde"})
    assert triggers.fired == [("team", "etl", b'{"dataset": "d"}')]


@pytest.mark.parametrize(
    ("path", "token", "body", "code"),
    [
        ("/nothing", "good", b"{}", 404),
        ("/triggers/team", "good", b"{}", 404),
        ("/triggers/Team/etl", "good", b"{}", 404),
        ("/triggers/team/etl", None, b"{}", 401),
        ("/triggers/team/etl", "forged", b"{}", 401),
        ("/triggers/other/etl", "good", b"{}", 403),
        ("/triggers/team/etl", "good", b"x" * (MAX_BODY_BYTES + 1), 413),
        ("/triggers/team/nope", "good", b"{}", 404),
        ("/triggers/team/etl", "good", b"bad", 400),
        ("/triggers/team/etl", "boom", b"{}", 503),
    ],
)
def test_each_refusal_has_its_code(endpoint: Any, path: str, token: str | None, body: bytes, code: int) -> None:
    server, _, triggers = endpoint
    assert post(server, path, body, token)[0] == code
    assert triggers.fired == []


def test_a_caller_beyond_the_rate_gets_429_with_retry_after(endpoint: Any) -> None:
    server, _, triggers = endpoint
    triggers.limited = True
    code, _, headers = post(server, "/triggers/team/etl")
    assert code == 429
    assert headers["Retry-After"] == "1"


def test_no_token_costs_no_token_review(endpoint: Any) -> None:
    server, auth, _ = endpoint
    post(server, "/triggers/team/etl", token=None)
    post(server, "/triggers/team/etl", token="two words")
    assert auth.reviews == 0


def test_only_post_is_served(endpoint: Any) -> None:
    server, _, _ = endpoint
    code, _, headers = post(server, "/triggers/team/etl", b"", method="GET")
    assert (code, headers.get("Allow")) == (405, "POST")


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("", None),
        ("Bearer", None),
        ("Basic abc", None),
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("Bearer a b", None),
        ("Bearer " + "a" * 8193, None),
    ],
)
def test_the_bearer_token_is_read_strictly(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_a_token_review_names_the_caller_only_when_authenticated() -> None:
    assert caller_of({"authenticated": False, "user": {"username": "x"}}) is None
    status = {"authenticated": True, "user": {"username": "a", "uid": "u", "groups": ["g"], "extra": {"k": ["v"]}}}
    assert caller_of(status) == Caller("a", "u", ("g",), (("k", ("v",)),))


def test_the_access_review_asks_for_create_on_jobflows_in_the_namespace() -> None:
    review = access_review(ALICE, "team")
    assert review["spec"]["user"] == "alice"
    assert review["spec"]["resourceAttributes"] == {
        "namespace": "team",
        "verb": "create",
        "group": "flow.volcano.sh",
        "resource": "jobflows",
    }
