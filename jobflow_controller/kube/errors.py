"""API errors, mapped from HTTP statuses onto the classes the transport-agnostic layers know.

client-go's `apierrors.IsNotFound`, `IsConflict`, `IsAlreadyExists`, `IsResourceExpired` become
`isinstance` checks against these classes; `informers.errors` owns the base so that the informers
package can recognise a 410 without importing the kubernetes client.
"""

from __future__ import annotations

import json
from typing import Any

from informers.errors import ApiStatusError, ExpiredError, NotFoundError, TooManyRequestsError


class ConflictError(ApiStatusError):
    """409 Conflict: an update carried a stale resourceVersion."""


class AlreadyExistsError(ApiStatusError):
    """409 with reason AlreadyExists: a create found the name taken."""


class ForbiddenError(ApiStatusError):
    """403: RBAC (or an admission plugin) refused the request."""


class InvalidError(ApiStatusError):
    """422: the object failed validation (schema, CEL rules, or a webhook)."""


class RequestCancelled(Exception):
    """The process stopped before this request was sent (Go's `context.Canceled`).

    Raised by a `RestClient` whose cancel event is set, from the token bucket's wait or before
    a request goes out, so that nothing is written after the lease is lost.
    """


def from_response(status: int, body: bytes | str | None) -> ApiStatusError:
    """Build the right error from a non-2xx response and its Status body."""
    reason, message = "", ""
    details: dict[str, Any] = {}
    if body:
        try:
            payload = json.loads(body)
        except (ValueError, TypeError):
            payload = None
        if isinstance(payload, dict) and payload.get("kind") == "Status":
            reason = str(payload.get("reason") or "")
            message = str(payload.get("message") or "")
            details = payload.get("details") or {}
        else:
            message = body.decode(errors="replace") if isinstance(body, bytes) else str(body)
    return from_status(status, reason, message or f"the server responded with status {status}", details)


def from_status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> ApiStatusError:
    info = details or {}
    if code == 404:
        return NotFoundError(message, details=info)
    if code == 410:
        return ExpiredError(message, reason=reason or "Expired", details=info)
    if code == 429:
        return TooManyRequestsError(message, details=info)
    cls: type[ApiStatusError] = ApiStatusError
    if code == 409:
        cls = AlreadyExistsError if reason == "AlreadyExists" else ConflictError
    elif code == 403:
        cls = ForbiddenError
    elif code == 422:
        cls = InvalidError
    return cls(code, reason, message, details=info)


def is_conflict(err: BaseException | None) -> bool:
    """True when `err`, or an error it was raised from, is a 409 Conflict (not AlreadyExists).

    Go's `apierrors.IsConflict` unwraps `%w` chains with `errors.As`; `raise ... from err` is the
    Python wrap, so the chain of causes is followed the same way.
    """
    seen = 0
    while err is not None and seen < 16:
        if isinstance(err, ConflictError):
            return True
        err, seen = err.__cause__, seen + 1
    return False


def is_refusal(err: ApiStatusError) -> bool:
    """A 4xx that the user can act on (quota, admission, validation), not a conflict or a throttle.

    Those get a Warning event at once; server errors and throttling are the API server's weather,
    retried quietly.
    """
    return 400 <= err.code < 500 and err.code not in (409, 429)
