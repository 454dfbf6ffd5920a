"""`ResourceLock` over a `coordination.k8s.io/v1` Lease (client-go `resourcelock/leaselock.go`).

Requests go through `ApiClient.param_serialize` / `call_api` with plain dict bodies rather than
`CoordinationV1Api`: the 37.x generated method validates the body into a pydantic `V1Lease` and
serializes its datetimes with `isoformat()` ("2026-12-02T09:30:24+00:00", and no fraction at all
when the microseconds are zero), which is not `metav1.MicroTime`'s layout
("2006-01-02T15:04:05.000000Z07:00", fraction mandatory on parse). Writing the JSON ourselves
keeps the timestamps exactly as client-go writes them and skips the model round trip; the
ApiClient still supplies the host, TLS, bearer token and connection pool.

Construct it from the manager's shared client::

    from kubernetes import client
    api_client = client.ApiClient(configuration)        # the one the manager already built
    lock = LeaseLock(api_client, "volcano-system", "jobflow-controller", default_identity(),
                     event_recorder=recorder,
                     request_timeout=lease_request_timeout(renew_deadline))

`request_timeout` matters: Python cannot cancel an in-flight request the way Go cancels a
context, so a hung call would stall the renew loop past `renew_deadline` without it (None means
no timeout at all). Like kube-controller-manager, which builds a separate "leader-election"
client, give the lock its own ApiClient rather than one throttled by the controllers' QPS budget:
renewals must not queue behind a burst of status writes.
"""

from __future__ import annotations

import datetime
import json
import re
import threading
from collections.abc import Mapping
from typing import Any

from jobflow_controller.kube.client_library import ApiClient, ApiException
from jobflow_controller.leaderelection.resourcelock import (
    EventRecorder,
    LeaderElectionRecord,
    LockConflictError,
    LockNotFoundError,
    LockNotInitializedError,
    ResourceLockError,
)

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "LEASE_API_VERSION",
    "LEASE_KIND",
    "LeaseLock",
    "format_micro_time",
    "leader_election_record_to_lease_spec",
    "lease_request_timeout",
    "lease_spec_to_leader_election_record",
    "parse_micro_time",
]

LEASE_API_VERSION = "coordination.k8s.io/v1"
LEASE_KIND = "Lease"
_LEASES_PATH = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
_LEASE_PATH = _LEASES_PATH + "/{name}"

_EVENT_TYPE_NORMAL = "Normal"
_EVENT_REASON = "LeaderElection"

_MICRO_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?([Zz]|[+-]\d{2}:\d{2})$")

RequestTimeout = float | tuple[float, float] | None

#: `lease_request_timeout` of component-base's default 10 s renew deadline.
DEFAULT_REQUEST_TIMEOUT = 5.0


def format_micro_time(t: datetime.datetime) -> str:
    """`metav1.MicroTime` JSON: RFC3339 in UTC with exactly six fractional digits."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.UTC)
    return t.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(value: str) -> datetime.datetime:
    """Parse a MicroTime (or plain RFC3339) string into an aware UTC datetime.

    Accepts any fraction length (nanoseconds are truncated to microseconds) and any offset, so a
    Lease written by another client still parses.
    """
    m = _MICRO_TIME.match(value)
    if m is None:
        raise ValueError(f"invalid MicroTime {value!r}")
    year, month, day, hour, minute, second, frac, zone = m.groups()
    micros = int((frac or "0")[:6].ljust(6, "0"))
    if zone in ("Z", "z"):
        tz = datetime.UTC
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = datetime.timezone(sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    parsed = datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, tzinfo=tz)
    return parsed.astimezone(datetime.UTC)


def _optional_time(value: Any) -> datetime.datetime | None:
    if value is None or value == "":
        return None
    return parse_micro_time(str(value))


def lease_spec_to_leader_election_record(spec: Mapping[str, Any] | None) -> LeaderElectionRecord:
    """`LeaseSpecToLeaderElectionRecord`: absent/null fields become the zero values."""
    spec = spec or {}
    return LeaderElectionRecord(
        holder_identity=spec.get("holderIdentity") or "",
        lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
        acquire_time=_optional_time(spec.get("acquireTime")),
        renew_time=_optional_time(spec.get("renewTime")),
        leader_transitions=int(spec.get("leaseTransitions") or 0),
        strategy=spec.get("strategy") or "",
        preferred_holder=spec.get("preferredHolder") or "",
    )


def leader_election_record_to_lease_spec(record: LeaderElectionRecord) -> dict[str, Any]:
    """`LeaderElectionRecordToLeaseSpec`: every field but strategy/preferredHolder is written,
    zero times as null (what Go's `&MicroTime{}` marshals to); the coordinated-election fields
    only when set."""
    spec: dict[str, Any] = {
        "holderIdentity": record.holder_identity,
        "leaseDurationSeconds": record.lease_duration_seconds,
        "acquireTime": format_micro_time(record.acquire_time) if record.acquire_time else None,
        "renewTime": format_micro_time(record.renew_time) if record.renew_time else None,
        "leaseTransitions": record.leader_transitions,
    }
    if record.preferred_holder:
        spec["preferredHolder"] = record.preferred_holder
    if record.strategy:
        spec["strategy"] = record.strategy
    return spec


def lease_request_timeout(renew_deadline: float) -> float:
    """client-go's `NewFromKubeconfig` heuristic: max(1 s, renew_deadline / 2), so one hung
    request cannot by itself cost the leader its lease."""
    return max(1.0, renew_deadline / 2)


def _status_error(status: int, reason: str, data: bytes | None) -> ResourceLockError:
    """Map a non-2xx answer to the lock's errors, keeping the API's Status message."""
    message = f"{status} {reason}".strip()
    status_reason = ""
    if data:
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            message = str(doc.get("message") or message)
            status_reason = str(doc.get("reason") or "")
    if status == 404:
        return LockNotFoundError(message, reason=status_reason or "NotFound")
    if status == 409 and status_reason in ("", "Conflict"):
        return LockConflictError(message)
    return ResourceLockError(message, status=status, reason=status_reason or reason)


class LeaseLock:
    """A Lease-backed `ResourceLock`.

    `update` PUTs the whole Lease last returned by `get`/`create` with its resourceVersion, so a
    write by anyone else in between is a 409 (`LockConflictError`): a failed attempt, which the
    elector resolves by reading again. `labels` are set on create and merged on every update, as
    client-go's `NewWithLabels` does.
    """

    def __init__(
        self,
        api_client: ApiClient,
        namespace: str,
        name: str,
        identity: str,
        *,
        event_recorder: EventRecorder | None = None,
        labels: Mapping[str, str] | None = None,
        request_timeout: RequestTimeout = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        self._api_client = api_client
        self._namespace = namespace
        self._name = name
        self._identity = identity
        self._event_recorder = event_recorder
        self._labels = dict(labels) if labels is not None else None
        self._request_timeout = request_timeout
        self._mu = threading.Lock()
        self._lease: dict[str, Any] | None = None

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def name(self) -> str:
        return self._name

    def get(self) -> tuple[LeaderElectionRecord, bytes]:
        lease = self._request("GET", _LEASE_PATH)
        with self._mu:
            self._lease = lease
        record = lease_spec_to_leader_election_record(lease.get("spec"))
        return record, record.raw()

    def create(self, record: LeaderElectionRecord) -> None:
        metadata: dict[str, Any] = {"name": self._name, "namespace": self._namespace}
        if self._labels is not None:
            metadata["labels"] = dict(self._labels)
        body = {
            "apiVersion": LEASE_API_VERSION,
            "kind": LEASE_KIND,
            "metadata": metadata,
            "spec": leader_election_record_to_lease_spec(record),
        }
        lease = self._request("POST", _LEASES_PATH, body)
        with self._mu:
            self._lease = lease

    def update(self, record: LeaderElectionRecord) -> None:
        with self._mu:
            last = self._lease
        if last is None:
            raise LockNotInitializedError()
        # A new body each time: the stored Lease stays exactly what the server last returned.
        body = dict(last)
        body.setdefault("apiVersion", LEASE_API_VERSION)
        body.setdefault("kind", LEASE_KIND)
        body["spec"] = leader_election_record_to_lease_spec(record)
        if self._labels is not None:
            metadata = dict(body.get("metadata") or {})
            metadata["labels"] = {**(metadata.get("labels") or {}), **self._labels}
            body["metadata"] = metadata
        lease = self._request("PUT", _LEASE_PATH, body)
        with self._mu:
            self._lease = lease

    def record_event(self, message: str) -> None:
        if self._event_recorder is None:
            return
        with self._mu:
            last = self._lease
        metadata = dict(last.get("metadata") or {}) if last is not None else {}
        metadata.setdefault("name", self._name)
        metadata.setdefault("namespace", self._namespace)
        subject = {"apiVersion": LEASE_API_VERSION, "kind": LEASE_KIND, "metadata": metadata}
        self._event_recorder.eventf(subject, _EVENT_TYPE_NORMAL, _EVENT_REASON, "%s", f"{self._identity} {message}")

    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return f"{self._namespace}/{self._name}"

    def lease(self) -> dict[str, Any] | None:
        """The Lease as last returned by the server (read-only), for diagnostics and tests."""
        with self._mu:
            return self._lease

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One HTTP call, no retries of our own: the elector's loops are the retry policy."""
        header_params = {"Accept": "application/json"}
        if body is not None:
            header_params["Content-Type"] = "application/json"
        try:
            serialized = self._api_client.param_serialize(
                method=method,
                resource_path=path,
                path_params={"namespace": self._namespace, "name": self._name},
                header_params=header_params,
                body=body,
                auth_settings=["BearerToken"],
            )
            http_method, url, headers, payload, post_params = serialized
            # RESTResponse's methods carry no annotations; treat it as the dynamic object it is.
            response: Any = self._api_client.call_api(
                http_method,
                url,
                header_params=headers,
                body=payload,
                post_params=post_params,
                _request_timeout=self._request_timeout,
            )
            data: bytes | None = response.read()
        except ApiException as err:  # raised by the REST layer itself, e.g. for TLS failures
            status_code = int(err.status) if err.status else None
            raise ResourceLockError(str(err), status=status_code, reason=str(err.reason or "")) from err
        status = int(response.status)
        if not 200 <= status <= 299:
            raise _status_error(status, str(response.reason or ""), data)
        if not data:
            raise ResourceLockError(f"empty response to {method} {self.describe()}", status=status)
        lease = json.loads(data)
        if not isinstance(lease, dict):
            raise ResourceLockError(f"unexpected response to {method} {self.describe()}", status=status)
        return lease
