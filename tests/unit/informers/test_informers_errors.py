"""API-style errors and the predicates the reflector and controllers rely on."""

from __future__ import annotations

import pytest
from informers_fakes import status_object

from informers import (
    ApiStatusError,
    ExpiredError,
    NotFoundError,
    TooManyRequestsError,
    UnexpectedObjectError,
    is_expired,
    is_not_found,
    is_too_large_resource_version,
    is_too_many_requests,
    status_error_from_object,
)
from informers.errors import is_connection_refused


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (status_object(410, "Expired", "too old"), ExpiredError),
        (status_object(410, "Gone", "gone"), ExpiredError),
        (status_object(404, "NotFound", "x not found"), NotFoundError),
        (status_object(429, "TooManyRequests", "slow down"), TooManyRequestsError),
        (status_object(500, "InternalError", "boom"), ApiStatusError),
    ],
)
def test_an_error_event_status_becomes_the_matching_error(status: dict[str, object], cls: type) -> None:
    err = status_error_from_object(status)
    assert type(err) is cls
    assert isinstance(err, ApiStatusError)
    assert (err.code, err.reason, err.message) == (status["code"], status["reason"], status["message"])


def test_an_error_event_without_a_status_is_an_unexpected_object() -> None:
    assert isinstance(status_error_from_object({"kind": "Pod"}), UnexpectedObjectError)


def test_predicates() -> None:
    assert is_expired(ExpiredError())
    assert is_expired(ApiStatusError(410, "", "gone"))
    assert not is_expired(ApiStatusError(500, "InternalError", ""))
    assert is_not_found(NotFoundError.for_resource("flow.volcano.sh", "jobflow", "x"))
    assert is_not_found(ApiStatusError(404, "", "x"))
    assert not is_not_found(ApiStatusError(404, "Expired", "x"))
    assert is_too_many_requests(TooManyRequestsError())
    assert not is_too_many_requests(RuntimeError())
    assert is_too_large_resource_version(
        ApiStatusError(504, "Timeout", "", details={"causes": [{"reason": "ResourceVersionTooLarge"}]})
    )
    assert not is_too_large_resource_version(ApiStatusError(500, "InternalError", "Too large resource version"))


def test_connection_refused_is_found_through_the_cause_chain() -> None:
    try:
        try:
            raise ConnectionRefusedError("refused")
        except ConnectionRefusedError as inner:
            raise OSError("connection failed") from inner
    except OSError as outer:
        assert is_connection_refused(outer)
    assert not is_connection_refused(OSError("other"))


def test_not_found_for_resource_quotes_like_go() -> None:
    assert str(NotFoundError.for_resource("", "pod", 'we"ird')) == 'pod "we\\"ird" not found'
