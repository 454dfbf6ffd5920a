"""The record package's EventSink over the core/v1 Events API (client-go ``EventSinkImpl``).

Why not ``CoreV1Api.create_namespaced_event``: with the 37.x client (openapi-generator v7)
that method is wrapped in pydantic's ``validate_call`` and its ``body`` is typed
``CoreV1Event``. A dict is accepted, but only by being coerced into the model and serialised
back, which rewrites timestamps (``…T00:00:00+00:00`` instead of ``…Z``), rejects fields the
model does not know and costs a validation per event. So the sink sends the event dict itself
to the same endpoints, through the same ``ApiClient`` machinery the generated method uses
(``param_serialize`` for host, auth headers with token refresh and user agent, ``call_api``
for the request), and decodes the JSON reply into a dict. PATCH is sent as
``application/strategic-merge-patch+json``, as client-go sends it (the generated method would
default to ``application/json-patch+json``).

Errors become :class:`~jobflow_controller.record.sink.SinkError` so the record package, which
never imports the client, can decide: 404 → ``not_found`` (the PATCH falls back to create),
409 AlreadyExists → ``already_exists``, a ``NamespaceTerminating`` cause →
``namespace_terminating`` (both dropped quietly), transport failures, 429 and 502/503/504 →
``retriable``; every other API status is a rejection that is not retried.

Construction, for the manager and the e2e tests::

    sink = KubeEventSink(kubernetes.client.ApiClient(configuration))
    # or, sharing the process's QPS/burst budget and request metrics:
    sink = KubeEventSink.from_rest_client(rest_client)
    broadcaster.start_recording_to_sink(sink)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import quote

import urllib3

from informers.errors import ApiStatusError
from jobflow_controller.kube import errors
from jobflow_controller.kube.client_library import ApiException
from jobflow_controller.kube.client_library import client as k8s_client
from jobflow_controller.record.sink import SinkError
from jobflow_controller.record.types import Event

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "KubeEventSink"]

#: (connect, read) seconds for one event write; bounds what one attempt can cost at shutdown.
DEFAULT_REQUEST_TIMEOUT: tuple[float, float] = (10.0, 30.0)

_JSON = "application/json"
_STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
_NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"
_RETRIABLE_STATUSES = frozenset({429, 502, 503, 504})


class _Requester(Protocol):
    """The part of ``jobflow_controller.kube.rest.RestClient`` the sink uses."""

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        content_type: str = _JSON,
        timeout: float | tuple[float, float] = ...,
    ) -> Any: ...


def _events_path(namespace: str, name: str | None = None) -> str:
    path = f"/api/v1/namespaces/{quote(namespace, safe='')}/events"
    if name is not None:
        path += f"/{quote(name, safe='')}"
    return path


def _sink_error_from_status(err: ApiStatusError) -> SinkError:
    causes = err.details.get("causes") if isinstance(err.details, Mapping) else None
    terminating = any(
        isinstance(cause, Mapping) and cause.get("reason") == _NAMESPACE_TERMINATING_CAUSE for cause in (causes or [])
    )
    return SinkError(
        str(err) or f"the server responded with status {err.code}",
        status=err.code,
        reason=err.reason,
        not_found=err.code == 404,
        already_exists=err.code == 409 and err.reason == "AlreadyExists",
        namespace_terminating=terminating,
        retriable=err.code in _RETRIABLE_STATUSES,
    )


class KubeEventSink:
    """Creates, updates and patches core/v1 Events, returning the server's copies as dicts.

    Safe to share between threads: the underlying ``ApiClient`` (urllib3 pool) is.
    """

    def __init__(
        self,
        api_client: k8s_client.ApiClient | None,
        *,
        request_timeout: float | tuple[float, float] = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        # Held as Any: most of ApiClient's methods are unannotated, and mypy --strict rejects
        # calls to untyped functions.
        self._api_client: Any = api_client
        self._requester: _Requester | None = None
        self._timeout = request_timeout

    @classmethod
    def from_rest_client(
        cls,
        rest: _Requester,
        *,
        request_timeout: float | tuple[float, float] = DEFAULT_REQUEST_TIMEOUT,
    ) -> KubeEventSink:
        """A sink over the project's ``RestClient``, so event writes share its QPS budget."""
        sink = cls(None, request_timeout=request_timeout)
        sink._requester = rest
        return sink

    # -- the record.EventSink protocol ---------------------------------------------------------

    def create(self, event: Event) -> Event:
        return self.create_event(self._namespace_of(event), event)

    def update(self, event: Event) -> Event:
        return self.update_event(self._namespace_of(event), self._name_of(event), event)

    def patch(self, event: Event, data: Mapping[str, Any]) -> Event:
        return self.patch_event(self._namespace_of(event), self._name_of(event), data)

    # -- the API calls ---------------------------------------------------------------------------

    def create_event(self, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST /api/v1/namespaces/{namespace}/events."""
        return self._send("POST", _events_path(namespace), body, _JSON)

    def update_event(self, namespace: str, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """PUT /api/v1/namespaces/{namespace}/events/{name}."""
        return self._send("PUT", _events_path(namespace, name), body, _JSON)

    def patch_event(self, namespace: str, name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        """PATCH /api/v1/namespaces/{namespace}/events/{name} as a strategic merge patch."""
        return self._send("PATCH", _events_path(namespace, name), patch, _STRATEGIC_MERGE_PATCH)

    # -- plumbing ----------------------------------------------------------------------------------

    @staticmethod
    def _namespace_of(event: Mapping[str, Any]) -> str:
        metadata = event.get("metadata") or {}
        namespace = str(metadata.get("namespace") or "")
        if not namespace:
            # client-go: "can't create an event with empty namespace"; the request would be the
            # same next time, so this is a construction error (status None), never retried.
            raise SinkError("can't write an event with an empty namespace")
        return namespace

    @staticmethod
    def _name_of(event: Mapping[str, Any]) -> str:
        name = str((event.get("metadata") or {}).get("name") or "")
        if not name:
            raise SinkError("can't write an event with an empty name")
        return name

    def _send(self, method: str, path: str, body: Mapping[str, Any], content_type: str) -> dict[str, Any]:
        try:
            payload = json.loads(json.dumps(body))  # a plain JSON tree, detached from the caller's
        except (TypeError, ValueError) as err:
            # The body cannot be serialised: the same request would fail again (status None).
            raise SinkError(f"{method} {path}: cannot build the request: {err}") from err
        try:
            if self._requester is not None:
                result = self._requester.request(
                    method, path, body=payload, content_type=content_type, timeout=self._timeout
                )
            else:
                result = self._send_with_api_client(method, path, payload, content_type)
        except ApiStatusError as err:
            raise _sink_error_from_status(err) from err
        except ApiException as err:
            # Raised by the client's REST layer before any response (TLS failures, status 0).
            raise SinkError(f"{method} {path}: {err.reason}", retriable=True) from err
        except (urllib3.exceptions.HTTPError, OSError) as err:
            raise SinkError(f"{method} {path}: {err}", retriable=True) from err
        except ValueError as err:
            # An undecodable reply (client-go's UnexpectedObjectError): worth another try.
            raise SinkError(f"{method} {path}: undecodable response: {err}", retriable=True) from err
        if not isinstance(result, dict):
            raise SinkError(
                f"{method} {path}: the server returned {type(result).__name__}, not an Event",
                retriable=True,
            )
        return result

    def _send_with_api_client(self, method: str, path: str, payload: Any, content_type: str) -> Any:
        """One request through ``ApiClient``, as the generated method would send it."""
        client = self._api_client
        _, url, headers, payload, _ = client.param_serialize(
            method=method,
            resource_path=path,
            header_params={"Accept": _JSON, "Content-Type": content_type},
            body=payload,
            auth_settings=["BearerToken"],
        )
        response = client.call_api(method, url, header_params=headers, body=payload, _request_timeout=self._timeout)
        data = response.read()
        if not 200 <= response.status <= 299:
            raise errors.from_response(response.status, data)
        return json.loads(data) if data else None
