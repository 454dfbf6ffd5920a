"""The lock a LeaderElector competes for (client-go `tools/leaderelection/resourcelock`).

The elector never sees an API object: it reads and writes a `LeaderElectionRecord` through a
`ResourceLock`. That keeps this package free of the `kubernetes` client (the Lease implementation
lives in `jobflow_controller.kube.lease_lock`) and lets the tests drive the elector with an
in-memory lock.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "LEASES_RESOURCE_LOCK",
    "EventRecorder",
    "LeaderElectionRecord",
    "LockConflictError",
    "LockNotFoundError",
    "LockNotInitializedError",
    "ResourceLock",
    "ResourceLockConfig",
    "ResourceLockError",
    "is_conflict",
    "is_not_found",
]

#: The only lock type client-go still accepts; endpoints/configmaps locks were removed upstream.
LEASES_RESOURCE_LOCK = "leases"


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """What the elector stores in the lock, field for field as client-go's record.

    Frozen so that a record handed to a lock, kept as the "observed record" and read from the
    health-check thread can never change underneath any of them; build a new one with
    `dataclasses.replace`. Times are timezone-aware UTC datetimes, `None` standing for Go's zero
    `metav1.Time`.
    """

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime.datetime | None = None
    renew_time: datetime.datetime | None = None
    leader_transitions: int = 0
    strategy: str = ""
    preferred_holder: str = ""

    def raw(self) -> bytes:
        """The record's bytes as client-go's `json.Marshal(record)` would write them.

        The elector decides "the holder renewed" by comparing these bytes with the last ones it
        saw, never by reading the remote timestamps (which come from someone else's clock). Like
        `metav1.Time`, times are written at second precision, so the comparison has exactly the
        granularity it has in Go.
        """
        doc: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": _format_seconds(self.acquire_time),
            "renewTime": _format_seconds(self.renew_time),
            "leaderTransitions": self.leader_transitions,
            "strategy": self.strategy,
            "preferredHolder": self.preferred_holder,
        }
        return json.dumps(doc, separators=(",", ":")).encode()


def _format_seconds(t: datetime.datetime | None) -> str | None:
    """`metav1.Time.MarshalJSON`: RFC3339 in UTC at second precision, zero time as null."""
    if t is None:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.UTC)
    return t.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ResourceLockError(Exception):
    """A lock operation failed. `status` is the HTTP status when the API server answered."""

    def __init__(self, message: str, *, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class LockNotFoundError(ResourceLockError):
    """The lock object does not exist (404); the elector creates it."""

    def __init__(self, message: str, *, reason: str = "NotFound") -> None:
        super().__init__(message, status=404, reason=reason)


class LockConflictError(ResourceLockError):
    """The write lost an optimistic-concurrency race (409): someone wrote the lock since we read it."""

    def __init__(self, message: str, *, reason: str = "Conflict") -> None:
        super().__init__(message, status=409, reason=reason)


class LockNotInitializedError(ResourceLockError):
    """`update` before any `get`/`create`: there is no resourceVersion to write against.

    client-go returns this without calling the API, which is what sends the elector's very first
    fast-path attempt (when its observed record was pre-seeded) to the slow path.
    """

    def __init__(self) -> None:
        super().__init__("lease not initialized, call get or create first")


# metav1.StatusReason values apimachinery knows; a status code decides only for other reasons.
_KNOWN_REASONS = frozenset(
    {
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
        "ServiceUnavailable",
    }
)


def _has_reason(err: BaseException | None, reason: str, code: int) -> bool:
    """apimachinery's rule: the Status reason decides; the HTTP code only when the reason is
    not one it knows (so a 409 AlreadyExists is not a conflict)."""
    if not isinstance(err, ResourceLockError):
        return False
    if err.reason == reason:
        return True
    return err.reason not in _KNOWN_REASONS and err.status == code


def is_not_found(err: BaseException | None) -> bool:
    """`apierrors.IsNotFound` for lock errors."""
    return _has_reason(err, "NotFound", 404)


def is_conflict(err: BaseException | None) -> bool:
    """`apierrors.IsConflict` for lock errors."""
    return _has_reason(err, "Conflict", 409)


class EventRecorder(Protocol):
    """The slice of `record.EventRecorder` a lock needs (`Eventf`).

    The parameters are positional-only so any recorder whose `eventf` takes (object, type, reason,
    format, *args) satisfies it, whatever it names them.
    """

    def eventf(self, obj: Any, event_type: str, reason: str, message_fmt: str, /, *args: Any) -> None: ...


@dataclass(frozen=True, slots=True)
class ResourceLockConfig:
    """client-go's `ResourceLockConfig`: who we are, and where "became leader" events go."""

    identity: str
    event_recorder: EventRecorder | None = None


@runtime_checkable
class ResourceLock(Protocol):
    """client-go's `resourcelock.Interface`, without the contexts.

    `get` raises `LockNotFoundError` when the object does not exist; `update` writes against the
    object seen by the last successful `get`/`create` (its resourceVersion), so a concurrent write
    makes it raise `LockConflictError`. Any other exception is just a failed attempt to the
    elector. Implementations are used from the elector's thread only, apart from `identity` and
    `describe`, which must be safe to call from anywhere.
    """

    def get(self) -> tuple[LeaderElectionRecord, bytes]:
        """Read the record; return it with its raw bytes (`LeaderElectionRecord.raw`)."""
        ...

    def create(self, record: LeaderElectionRecord) -> None:
        """Create the lock object holding `record`."""
        ...

    def update(self, record: LeaderElectionRecord) -> None:
        """Replace the record in the lock object last read or created."""
        ...

    def record_event(self, message: str) -> None:
        """Emit a Normal `LeaderElection` event "<identity> <message>" about the lock object."""
        ...

    def identity(self) -> str:
        """This candidate's holder identity."""
        ...

    def describe(self) -> str:
        """A human-readable name for logs ("namespace/name")."""
        ...
