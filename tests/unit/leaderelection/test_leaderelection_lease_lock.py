"""`kube.lease_lock`: the record <-> Lease mapping, MicroTime, and the HTTP calls it makes.

No server: the ApiClient is real (it builds URLs, headers and auth), but its REST transport is
replaced by a fake that records each request and answers from a script.
"""

from __future__ import annotations

import datetime
import json
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.rest import RESTResponse
from leaderelection_fakes import FakeClock, make_config

from jobflow_controller.kube.lease_lock import (
    LeaseLock,
    format_micro_time,
    leader_election_record_to_lease_spec,
    lease_request_timeout,
    lease_spec_to_leader_election_record,
    parse_micro_time,
)
from jobflow_controller.leaderelection import (
    LeaderElectionRecord,
    LeaderElector,
    LockConflictError,
    LockNotFoundError,
    LockNotInitializedError,
    ResourceLock,
    ResourceLockError,
    is_conflict,
    is_not_found,
)

UTC = datetime.UTC
T = datetime.datetime(2026, 12, 2, 9, 30, 24, 123456, tzinfo=UTC)
HOST = "https://lease.test:6443"
LEASE_URL = HOST + "/apis/coordination.k8s.io/v1/namespaces/foo/leases/bar"


# -- MicroTime ----------------------------------------------------------------------------------


def test_micro_time_is_rfc3339_utc_with_six_digits() -> None:
    assert format_micro_time(T) == "2026-12-02T09:30:24.123456Z"
    assert format_micro_time(T.replace(microsecond=0)) == "2026-12-02T09:30:24.000000Z"
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    assert format_micro_time(T.astimezone(plus_two)) == "2026-12-02T09:30:24.123456Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-02T09:30:24.123456Z", T),
        ("2026-12-02T09:30:24Z", T.replace(microsecond=0)),
        ("2026-12-02T09:30:24.123456789Z", T),
        ("2026-12-02T09:30:24.12Z", T.replace(microsecond=120000)),
        ("2026-12-02T11:30:24.123456+02:00", T),
    ],
)
def test_micro_time_parses_rfc3339_variants(text: str, expected: datetime.datetime) -> None:
    parsed = parse_micro_time(text)
    assert parsed == expected
    assert parsed.tzinfo == UTC


def test_micro_time_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        parse_micro_time("yesterday")


# -- record <-> spec ----------------------------------------------------------------------------


def full_spec() -> dict[str, Any]:
    return {
        "holderIdentity": "foo",
        "leaseDurationSeconds": 10,
        "acquireTime": "2026-12-02T09:30:24.123456Z",
        "renewTime": "2026-12-02T09:30:26.000001Z",
        "leaseTransitions": 1,
    }


def test_lease_spec_to_record_round_trip() -> None:
    old_spec = full_spec()
    old_record = lease_spec_to_leader_election_record(old_spec)
    new_spec = leader_election_record_to_lease_spec(old_record)
    assert new_spec == old_spec
    assert lease_spec_to_leader_election_record(new_spec) == old_record


def test_spec_maps_field_by_field() -> None:
    record = lease_spec_to_leader_election_record(full_spec())
    assert record == LeaderElectionRecord(
        holder_identity="foo",
        lease_duration_seconds=10,
        acquire_time=T,
        renew_time=datetime.datetime(2026, 12, 2, 9, 30, 26, 1, tzinfo=UTC),
        leader_transitions=1,
    )


def test_empty_spec_and_zero_record_spec_read_the_same() -> None:
    """A Lease with no spec fields and one written from the zero record are both "unled"."""
    from_empty = lease_spec_to_leader_election_record({})
    from_none = lease_spec_to_leader_election_record(None)
    from_zero = lease_spec_to_leader_election_record(leader_election_record_to_lease_spec(LeaderElectionRecord()))
    assert from_empty == from_none == from_zero == LeaderElectionRecord()
    assert from_empty.raw() == from_zero.raw()


def test_zero_times_are_written_as_null_and_coordination_fields_only_when_set() -> None:
    spec = leader_election_record_to_lease_spec(LeaderElectionRecord(holder_identity="a"))
    assert spec == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 0,
        "acquireTime": None,
        "renewTime": None,
        "leaseTransitions": 0,
    }
    coordinated = leader_election_record_to_lease_spec(
        LeaderElectionRecord(strategy="OldestEmulationVersion", preferred_holder="b")
    )
    assert coordinated["strategy"] == "OldestEmulationVersion"
    assert coordinated["preferredHolder"] == "b"
    back = lease_spec_to_leader_election_record(coordinated)
    assert (back.strategy, back.preferred_holder) == ("OldestEmulationVersion", "b")


def test_raw_record_is_go_json_of_the_record_at_second_precision() -> None:
    record = LeaderElectionRecord(holder_identity="baz", lease_duration_seconds=10, acquire_time=T)
    assert record.raw() == (
        b'{"holderIdentity":"baz","leaseDurationSeconds":10,"acquireTime":"2026-12-02T09:30:24Z",'
        b'"renewTime":null,"leaderTransitions":0,"strategy":"","preferredHolder":""}'
    )


def test_request_timeout_heuristic() -> None:
    assert lease_request_timeout(10.0) == 5.0
    assert lease_request_timeout(1.5) == 1.0


# -- HTTP ---------------------------------------------------------------------------------------


@dataclass
class _Urllib3Like:
    status: int
    reason: str
    data: bytes
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})


@dataclass
class Request:
    method: str
    url: str
    headers: dict[str, str]
    body: Any
    timeout: Any


class FakeTransport:
    """Stands in for `RESTClientObject.request`: records calls, answers from `responses`."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.responses: list[tuple[int, Any]] = []

    def __call__(
        self,
        method: str,
        url: str,
        headers: dict[str, str] | None = None,
        body: Any = None,
        post_params: Any = None,
        _request_timeout: Any = None,
    ) -> RESTResponse:
        self.requests.append(Request(method, url, dict(headers or {}), body, _request_timeout))
        status, doc = self.responses.pop(0)
        reason = {200: "OK", 201: "Created", 404: "Not Found", 409: "Conflict", 500: "Internal Server Error"}
        return RESTResponse(_Urllib3Like(status, reason.get(status, ""), json.dumps(doc).encode()))


def lease(rv: str, spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "bar", "namespace": "foo", "resourceVersion": rv, "uid": "u-1"}
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": spec}


def status_doc(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


@pytest.fixture
def transport() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def api_client(transport: FakeTransport) -> ApiClient:
    configuration = Configuration(host=HOST)
    configuration.api_key = {"BearerToken": "Bearer sekret"}
    client = ApiClient(configuration)
    client.rest_client.request = transport  # type: ignore[method-assign]
    return client


class Events:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def eventf(self, obj: Any, event_type: str, reason: str, message_fmt: str, /, *args: Any) -> None:
        self.calls.append((obj, event_type, reason, message_fmt % args))


def test_lease_lock_satisfies_the_protocol(api_client: ApiClient) -> None:
    lock = LeaseLock(api_client, "foo", "bar", "baz")
    assert isinstance(lock, ResourceLock)
    assert lock.describe() == "foo/bar"
    assert lock.identity() == "baz"


def test_get_reads_the_lease_and_returns_record_and_raw(api_client: ApiClient, transport: FakeTransport) -> None:
    transport.responses.append((200, lease("7", full_spec())))
    lock = LeaseLock(api_client, "foo", "bar", "baz", request_timeout=(1.0, 4.0))

    record, raw = lock.get()

    assert record.holder_identity == "foo"
    assert raw == record.raw()
    (req,) = transport.requests
    assert (req.method, req.url) == ("GET", LEASE_URL)
    assert req.headers["Accept"] == "application/json"
    assert req.headers["authorization"] == "Bearer sekret"
    assert req.timeout == (1.0, 4.0)


def test_get_not_found_is_a_lock_not_found_error(api_client: ApiClient, transport: FakeTransport) -> None:
    transport.responses.append((404, status_doc(404, "NotFound", 'leases.coordination.k8s.io "bar" not found')))
    lock = LeaseLock(api_client, "foo", "bar", "baz")

    with pytest.raises(LockNotFoundError) as excinfo:
        lock.get()

    assert is_not_found(excinfo.value)
    assert str(excinfo.value) == 'leases.coordination.k8s.io "bar" not found'


def test_create_posts_a_lease_with_labels(api_client: ApiClient, transport: FakeTransport) -> None:
    record = LeaderElectionRecord(holder_identity="baz", lease_duration_seconds=15, acquire_time=T, renew_time=T)
    transport.responses.append((201, lease("1", leader_election_record_to_lease_spec(record), {"app": "jf"})))
    lock = LeaseLock(api_client, "foo", "bar", "baz", labels={"app": "jf"})

    lock.create(record)

    (req,) = transport.requests
    assert (req.method, req.url) == ("POST", HOST + "/apis/coordination.k8s.io/v1/namespaces/foo/leases")
    assert req.headers["Content-Type"] == "application/json"
    assert req.body == {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "bar", "namespace": "foo", "labels": {"app": "jf"}},
        "spec": {
            "holderIdentity": "baz",
            "leaseDurationSeconds": 15,
            "acquireTime": "2026-12-02T09:30:24.123456Z",
            "renewTime": "2026-12-02T09:30:24.123456Z",
            "leaseTransitions": 0,
        },
    }


def test_update_before_get_or_create_makes_no_request(api_client: ApiClient, transport: FakeTransport) -> None:
    lock = LeaseLock(api_client, "foo", "bar", "baz")
    with pytest.raises(LockNotInitializedError, match="lease not initialized, call get or create first"):
        lock.update(LeaderElectionRecord(holder_identity="baz"))
    assert transport.requests == []


def test_update_puts_the_last_seen_lease_with_its_resource_version(
    api_client: ApiClient, transport: FakeTransport
) -> None:
    seen = lease("7", full_spec(), {"team": "a", "app": "old"})
    transport.responses.append((200, seen))
    lock = LeaseLock(api_client, "foo", "bar", "baz", labels={"app": "jf"})
    lock.get()
    renewed = LeaderElectionRecord(holder_identity="baz", lease_duration_seconds=15, renew_time=T, leader_transitions=2)
    transport.responses.append((200, lease("8", leader_election_record_to_lease_spec(renewed))))

    lock.update(renewed)

    req = transport.requests[1]
    assert (req.method, req.url) == ("PUT", LEASE_URL)
    assert req.body["metadata"]["resourceVersion"] == "7"
    assert req.body["metadata"]["uid"] == "u-1"
    assert req.body["metadata"]["labels"] == {"team": "a", "app": "jf"}
    assert req.body["spec"] == leader_election_record_to_lease_spec(renewed)
    assert seen["metadata"]["labels"] == {"team": "a", "app": "old"}  # what the server returned is untouched
    lease_now = lock.lease()
    assert lease_now is not None and lease_now["metadata"]["resourceVersion"] == "8"


def test_update_conflict_is_a_lock_conflict_error(api_client: ApiClient, transport: FakeTransport) -> None:
    transport.responses.append((200, lease("7", full_spec())))
    lock = LeaseLock(api_client, "foo", "bar", "baz")
    lock.get()
    message = (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "bar": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    transport.responses.append((409, status_doc(409, "Conflict", message)))

    with pytest.raises(LockConflictError) as excinfo:
        lock.update(LeaderElectionRecord(holder_identity="baz"))

    assert is_conflict(excinfo.value)
    assert str(excinfo.value) == message
    lease_now = lock.lease()
    assert lease_now is not None and lease_now["metadata"]["resourceVersion"] == "7"


def test_other_statuses_are_resource_lock_errors(api_client: ApiClient, transport: FakeTransport) -> None:
    transport.responses.append((500, status_doc(500, "InternalError", "etcdserver: request timed out")))
    lock = LeaseLock(api_client, "foo", "bar", "baz")

    with pytest.raises(ResourceLockError) as excinfo:
        lock.get()

    assert excinfo.value.status == 500
    assert excinfo.value.reason == "InternalError"
    assert not is_not_found(excinfo.value) and not is_conflict(excinfo.value)


def test_record_event_is_about_the_lease(api_client: ApiClient, transport: FakeTransport) -> None:
    transport.responses.append((200, lease("7", full_spec())))
    events = Events()
    lock = LeaseLock(api_client, "foo", "bar", "baz", event_recorder=events)
    lock.get()

    lock.record_event("became leader")

    ((subject, event_type, reason, message),) = events.calls
    assert (event_type, reason, message) == ("Normal", "LeaderElection", "baz became leader")
    assert subject["apiVersion"] == "coordination.k8s.io/v1"
    assert subject["kind"] == "Lease"
    assert subject["metadata"]["uid"] == "u-1"


def test_record_event_without_recorder_does_nothing(api_client: ApiClient) -> None:
    LeaseLock(api_client, "foo", "bar", "baz").record_event("became leader")


def test_create_already_exists_is_not_a_conflict(api_client: ApiClient, transport: FakeTransport) -> None:
    message = 'leases.coordination.k8s.io "bar" already exists'
    transport.responses.append((409, status_doc(409, "AlreadyExists", message)))
    lock = LeaseLock(api_client, "foo", "bar", "baz")

    with pytest.raises(ResourceLockError) as excinfo:
        lock.create(LeaderElectionRecord(holder_identity="baz"))

    assert excinfo.value.status == 409
    assert not is_conflict(excinfo.value)
    assert str(excinfo.value) == message


def test_status_reason_decides_and_code_only_for_unknown_reasons() -> None:
    assert is_not_found(ResourceLockError("x", status=404, reason="SomethingNew"))
    assert not is_not_found(ResourceLockError("x", status=404, reason="Gone"))
    assert is_conflict(ResourceLockError("x", status=409))
    assert not is_conflict(ResourceLockError("x", status=409, reason="AlreadyExists"))
    assert not is_not_found(ValueError("404"))


def test_requests_time_out_by_default(api_client: ApiClient, transport: FakeTransport) -> None:
    transport.responses.append((200, lease("7", full_spec())))
    LeaseLock(api_client, "foo", "bar", "baz").get()
    assert transport.requests[0].timeout == 5.0


class LeaseServer:
    """A one-Lease API server behind the fake transport: GET/POST/PUT with resourceVersion checks."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.rv = 0
        self.calls: list[str] = []

    def __call__(
        self,
        method: str,
        url: str,
        headers: dict[str, str] | None = None,
        body: Any = None,
        post_params: Any = None,
        _request_timeout: Any = None,
    ) -> RESTResponse:
        self.calls.append(method)
        status, doc = self._handle(method, body)
        return RESTResponse(_Urllib3Like(status, "", json.dumps(doc).encode()))

    def _handle(self, method: str, body: Any) -> tuple[int, dict[str, Any]]:
        not_found = status_doc(404, "NotFound", 'leases.coordination.k8s.io "bar" not found')
        if method == "GET":
            return (200, self.lease) if self.lease is not None else (404, not_found)
        if method == "POST":
            if self.lease is not None:
                return 409, status_doc(409, "AlreadyExists", "already exists")
            return 201, self._store(body)
        if self.lease is None:
            return 404, not_found
        if body["metadata"].get("resourceVersion") != self.lease["metadata"]["resourceVersion"]:
            return 409, status_doc(409, "Conflict", "the object has been modified")
        return 200, self._store(body)

    def _store(self, body: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        stored: dict[str, Any] = json.loads(json.dumps(body))
        stored["metadata"]["resourceVersion"] = str(self.rv)
        self.lease = stored
        return stored


def test_elector_over_lease_lock_acquires_renews_and_releases() -> None:
    server = LeaseServer()
    client = ApiClient(Configuration(host=HOST))
    client.rest_client.request = server  # type: ignore[method-assign]
    lock = LeaseLock(client, "foo", "bar", "baz")
    stop = threading.Event()
    clock = FakeClock()
    renewals: list[LeaderElectionRecord] = []

    original_update = lock.update

    def counting_update(record: LeaderElectionRecord) -> None:
        original_update(record)
        renewals.append(record)
        if len(renewals) == 3:
            stop.set()

    lock.update = counting_update  # type: ignore[method-assign]
    elector = LeaderElector(make_config(lock, release_on_cancel=True), clock=clock)

    elector.run(stop)

    assert server.calls == ["GET", "POST", "PUT", "PUT", "PUT", "GET", "PUT"]
    assert server.lease is not None
    spec = server.lease["spec"]
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 0
    assert spec["renewTime"] == format_micro_time(clock.wall())
