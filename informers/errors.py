"""API-style errors, shaped like apimachinery's ``StatusError``.

The informer machinery has to tell a few API failures apart without knowing the transport: an
expired resourceVersion (410) forces a relist, 429 and connection-refused mean "back off and
re-watch", a too-large resourceVersion means "relist from the newest". The ``kube`` package maps
the client's exceptions onto these classes, and the lister raises :class:`NotFoundError`, so
callers can test for them with ``isinstance`` or the ``is_*`` predicates below (mirroring
``apierrors.IsNotFound`` and friends).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STATUS_REASON_NOT_FOUND = "NotFound"
STATUS_REASON_EXPIRED = "Expired"
STATUS_REASON_GONE = "Gone"
STATUS_REASON_TOO_MANY_REQUESTS = "TooManyRequests"
STATUS_REASON_TIMEOUT = "Timeout"
STATUS_REASON_INTERNAL_ERROR = "InternalError"
CAUSE_TYPE_RESOURCE_VERSION_TOO_LARGE = "ResourceVersionTooLarge"

_KNOWN_REASONS = frozenset(
    {
        "Unauthorized",
        "Forbidden",
        STATUS_REASON_NOT_FOUND,
        "AlreadyExists",
        "Conflict",
        STATUS_REASON_GONE,
        "Invalid",
        "ServerTimeout",
        STATUS_REASON_TIMEOUT,
        STATUS_REASON_TOO_MANY_REQUESTS,
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        STATUS_REASON_INTERNAL_ERROR,
        STATUS_REASON_EXPIRED,
        "ServiceUnavailable",
    }
)


class ApiStatusError(Exception):
    """An error the API server reported as a ``Status`` (HTTP code, machine reason, message).

    ``details`` is the Status's ``details`` object as the server sent it (``name``, ``group``,
    ``kind``, ``causes``), kept raw because only a few callers need it.
    """

    def __init__(self, code: int, reason: str, message: str, *, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details: Mapping[str, Any] = details or {}

    def causes(self) -> list[Mapping[str, Any]]:
        """The ``details.causes`` entries (each with ``reason``/``message``/``field``)."""
        raw = self.details.get("causes") or []
        return [c for c in raw if isinstance(c, Mapping)]

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, reason={self.reason!r}, message={self.message!r})"


class ExpiredError(ApiStatusError):
    """410: the requested resourceVersion (or continue token) is older than the server keeps.

    The reason is ``Expired`` for a watch/list RV that has been compacted, ``Gone`` for the older
    HTTP-level form; client-go treats both the same (``isExpiredError``).
    """

    def __init__(
        self,
        message: str = "too old resource version",
        *,
        reason: str = STATUS_REASON_EXPIRED,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(410, reason, message, details=details)


class NotFoundError(ApiStatusError):
    """404 NotFound, with upstream's message ``<resource>.<group> "<name>" not found``."""

    def __init__(self, message: str, *, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(404, STATUS_REASON_NOT_FOUND, message, details=details)

    @classmethod
    def for_resource(cls, group: str, resource: str, name: str) -> NotFoundError:
        """Build the error as ``errors.NewNotFound(GroupResource{group, resource}, name)`` does."""
        group_resource = f"{resource}.{group}" if group else resource
        return cls(
            f"{group_resource} {go_quote(name)} not found",
            details={"name": name, "group": group, "kind": resource},
        )


class TooManyRequestsError(ApiStatusError):
    """429: the server (or priority and fairness) asks us to slow down."""

    def __init__(self, message: str = "too many requests", *, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(429, STATUS_REASON_TOO_MANY_REQUESTS, message, details=details)


class UnexpectedObjectError(Exception):
    """An ERROR watch event whose object is not a ``Status`` (apimachinery ``UnexpectedObjectError``)."""

    def __init__(self, obj: object) -> None:
        super().__init__(f"unexpected object: {obj!r}")
        self.obj = obj


def go_quote(text: str) -> str:
    """Quote ``text`` the way Go's ``%q`` does for the strings Kubernetes names can hold."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def status_error_from_object(obj: object) -> Exception:
    """Turn the object of an ERROR watch event into an exception (``apierrors.FromObject``).

    A ``Status`` becomes the matching :class:`ApiStatusError` subclass, so a 410 delivered inside the
    stream is handled exactly like a 410 raised by the transport.
    """
    if not isinstance(obj, Mapping) or obj.get("kind") != "Status":
        return UnexpectedObjectError(obj)
    try:
        code = int(obj.get("code") or 0)
    except (TypeError, ValueError):
        code = 0
    reason = str(obj.get("reason") or "")
    message = str(obj.get("message") or "")
    raw_details = obj.get("details")
    details = raw_details if isinstance(raw_details, Mapping) else None
    if code == 410 or reason in (STATUS_REASON_EXPIRED, STATUS_REASON_GONE):
        return ExpiredError(message, reason=reason or STATUS_REASON_EXPIRED, details=details)
    if code == 404 and reason in ("", STATUS_REASON_NOT_FOUND):
        return NotFoundError(message, details=details)
    if code == 429 or reason == STATUS_REASON_TOO_MANY_REQUESTS:
        return TooManyRequestsError(message, details=details)
    return ApiStatusError(code, reason, message, details=details)


def _reason_and_code(err: BaseException) -> tuple[str, int]:
    if isinstance(err, ApiStatusError):
        return err.reason, err.code
    return "", 0


def _matches(err: BaseException, reason: str, code: int) -> bool:
    actual_reason, actual_code = _reason_and_code(err)
    if actual_reason == reason:
        return True
    return actual_reason not in _KNOWN_REASONS and actual_code == code


def is_not_found(err: BaseException) -> bool:
    """``apierrors.IsNotFound``: reason NotFound, or code 404 with an unknown reason."""
    return _matches(err, STATUS_REASON_NOT_FOUND, 404)


def is_resource_expired(err: BaseException) -> bool:
    """``apierrors.IsResourceExpired``: reason Expired."""
    return _reason_and_code(err)[0] == STATUS_REASON_EXPIRED


def is_gone(err: BaseException) -> bool:
    """``apierrors.IsGone``: reason Gone, or code 410 with an unknown reason."""
    return _matches(err, STATUS_REASON_GONE, 410)


def is_expired(err: BaseException) -> bool:
    """The reflector's ``isExpiredError``: Expired or Gone (both are 410)."""
    return isinstance(err, ExpiredError) or is_resource_expired(err) or is_gone(err)


def is_too_many_requests(err: BaseException) -> bool:
    """``apierrors.IsTooManyRequests``: reason TooManyRequests, or code 429."""
    reason, code = _reason_and_code(err)
    return reason == STATUS_REASON_TOO_MANY_REQUESTS or code == 429


def is_timeout(err: BaseException) -> bool:
    """``apierrors.IsTimeout``: reason Timeout (HTTP 504)."""
    return _matches(err, STATUS_REASON_TIMEOUT, 504)


def has_status_cause(err: BaseException, cause_type: str) -> bool:
    """``apierrors.HasStatusCause``: one of ``details.causes`` has this reason."""
    if not isinstance(err, ApiStatusError):
        return False
    return any(c.get("reason") == cause_type for c in err.causes())


def is_too_large_resource_version(err: BaseException) -> bool:
    """The reflector's ``isTooLargeResourceVersionError``, including the pre-1.18.6 server forms."""
    if has_status_cause(err, CAUSE_TYPE_RESOURCE_VERSION_TOO_LARGE):
        return True
    if not is_timeout(err) or not isinstance(err, ApiStatusError):
        return False
    if any(c.get("message") == "Too large resource version" for c in err.causes()):
        return True
    return "Too large resource version" in err.message


def is_connection_refused(err: BaseException) -> bool:
    """True if ``err`` or anything in its cause/context chain is a ``ConnectionRefusedError``."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


class KeyFuncError(Exception):
    """A key function could not compute a key (client-go ``KeyError``); the cause is chained."""

    def __init__(self, obj: object, err: BaseException) -> None:
        super().__init__(f"couldn't create key for object {obj!r}: {err}")
        self.obj = obj
        self.err = err
