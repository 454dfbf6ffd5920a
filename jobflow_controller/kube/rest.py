"""The REST layer: every request of the process goes through here.

It sits on the kubernetes client's `ApiClient` only for what that does well (TLS, client
certificates, bearer tokens with refresh, connection pooling) and bypasses its generated models:
our objects are plain JSON dicts, and a custom resource has no model anyway. It adds what
client-go's rest.Config gives a Go controller: a client-side QPS/burst token bucket shared by all
callers (its tokens going to the waiting namespaces in turn, fair_limiter.py), a user agent,
per-request timeouts, API errors as typed exceptions, and request metrics.
"""

from __future__ import annotations

import functools
import json
import math
import platform
import ssl
import threading
import time
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

import orjson
import urllib3

from jobflow_controller.kube import errors
from jobflow_controller.kube.client_library import ApiException
from jobflow_controller.kube.client_library import client as k8s_client
from jobflow_controller.kube.fair_limiter import FairTokenBucket, tenant_of_path
from jobflow_controller.kube.transport import Transport
from jobflow_controller.kube.transport import supports as transport_supports
from workqueue import BucketRateLimiter, Clock

Query = Mapping[str, str | int | bool | None] | Sequence[tuple[str, str]]
DEFAULT_TIMEOUT = (10.0, 60.0)

#: Upstream's binary name. client-go builds the default user agent from `os.Args[0]`, and the
#: API server names the field manager of every write after the user agent's first segment, so
#: upstream's objects show `manager: vc-controller-manager` in managedFields; so do ours.
COMPONENT_COMMAND = "vc-controller-manager"

_GO_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "i686": "386"}


def default_user_agent(command: str = COMPONENT_COMMAND, version: str | None = None) -> str:
    """client-go's `rest.DefaultKubernetesUserAgent`: `<command>/<version> (<os>/<arch>) <client>`.

    The last part is `kubernetes/<commit>` in Go; here it names this implementation instead, so
    audit logs still tell the port from the original.
    """
    if version is None:
        from jobflow_controller import __version__ as version
    machine = platform.machine().lower()
    arch = _GO_ARCH.get(machine, machine or "unknown")
    os_name = platform.system().lower() or "unknown"
    return f"{command}/v{version} ({os_name}/{arch}) jobflow-controller"


def add_user_agent(user_agent: str, suffix: str) -> str:
    """client-go's `rest.AddUserAgent`: the same agent with `/<suffix>` appended."""
    return f"{user_agent}/{suffix}"


class RequestMetrics(Protocol):
    """What the REST layer reports per request (client-go's `rest_client_*` metrics)."""

    def observe(self, verb: str, host: str, code: str, seconds: float) -> None: ...

    def observe_rate_limiter(self, verb: str, host: str, seconds: float) -> None:
        """How long the request waited for the client-side QPS/burst limiter."""


class TokenBucket:
    """client-go's flowcontrol token bucket: `accept()` blocks until a token is free.

    The bucket is the work queue's `BucketRateLimiter` (the same golang.org/x/time/rate reservation
    semantics: a caller takes the next token even if it lies in the future and waits for it, so
    bursts beyond `burst` are smoothed to `qps`). A qps of 0 means no limit, as in rest.Config.
    """

    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        # The clock is the bucket's time source (tests pass a FakeClock); `accept` sleeps for real.
        self._bucket: BucketRateLimiter[None] = BucketRateLimiter(qps if qps > 0 else math.inf, max(1, burst), clock)

    def reserve(self) -> float:
        """Take a token and return how long to wait before using it."""
        return self._bucket.when(None)

    def backlog(self) -> float:
        """How long a request made now would wait for its token (0 while the bucket has one)."""
        return self._bucket.delay()

    def accept(self, stop: threading.Event | None = None, tenant: Hashable = "") -> None:
        """Wait for a token; raise `RequestCancelled` if `stop` is set first (rate.Limiter.Wait
        with a context): a client throttled to a trickle must not hold a stopping process. First
        come, first served: `tenant` is not looked at (`FairTokenBucket` takes turns by it)."""
        delay = self.reserve()
        if stop is None:
            if delay > 0:
                time.sleep(delay)
            return
        if stop.is_set() or (delay > 0 and stop.wait(delay)):
            raise errors.RequestCancelled("client rate limiter Wait returned an error: context canceled")


class Limiter(Protocol):
    """The client-side QPS limiter a `RestClient` waits on (client-go's flowcontrol.RateLimiter)."""

    def accept(self, stop: threading.Event | None = None, tenant: Hashable = "") -> None: ...

    def backlog(self) -> float: ...


class RestClient:
    """JSON-in, JSON-out requests against one API server, rate limited and instrumented."""

    def __init__(
        self,
        configuration: k8s_client.Configuration,
        *,
        qps: float = 50.0,
        burst: int = 100,
        user_agent: str | None = None,
        metrics: RequestMetrics | None = None,
        cancel: threading.Event | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        """`cancel`, once set, fails every request not yet sent with `RequestCancelled`, including
        one waiting for a token; a request already on the wire runs to its timeout. `limiter`
        shares another client's QPS budget (the shards of one process share one); by default the
        client has a bucket of its own, whose tokens go to the waiting namespaces in turn
        (fair_limiter.py)."""
        self.configuration = configuration
        self.cancel = cancel
        self.api_client = k8s_client.ApiClient(configuration)
        self.transport = Transport(configuration) if transport_supports(configuration) else None
        if user_agent:
            self.api_client.user_agent = user_agent
        self.limiter: Limiter = limiter if limiter is not None else FairTokenBucket(qps, burst)
        self.metrics = metrics
        self.host = urlsplit(configuration.host).netloc

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.api_client.close()

    # -- requests ------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        query: Query | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | tuple[float, float] = DEFAULT_TIMEOUT,
    ) -> Any:
        """Send one request and return its decoded JSON body; raise an `ApiStatusError` on non-2xx."""
        response = self._send(method, path, query, body, content_type, timeout)
        data = response.data
        return decode_json(data) if data else None

    def stream(self, path: str, *, query: Query | None = None, read_timeout: float) -> urllib3.BaseHTTPResponse:
        """Open a streaming GET (a watch) and hand back the unread response (the library's pool)."""
        response = self._send(
            "GET", path, query, None, "application/json", (DEFAULT_TIMEOUT[0], read_timeout), streaming=True
        )
        raw: urllib3.BaseHTTPResponse = response
        return raw

    def get(self, path: str, query: Query | None = None) -> Any:
        return self.request("GET", path, query=query)

    def _send(
        self,
        method: str,
        path: str,
        query: Query | None,
        body: Any,
        content_type: str,
        timeout: float | tuple[float, float],
        streaming: bool = False,
    ) -> Any:
        waited = time.monotonic()
        self.limiter.accept(self.cancel, tenant_of_path(path))
        if self.metrics is not None:
            self.metrics.observe_rate_limiter(method, self.host, time.monotonic() - waited)
        params = _query_tuples(query)
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        # The body is not handed to param_serialize: its sanitize_for_serialization walks and copies
        # every node in Python (about twice json.dumps' time for a JobFlow status), and our bodies are
        # plain JSON documents already. Anything json.dumps refuses (a datetime, an Enum) is sanitized
        # as before: json.dumps raises before anything is sent.
        _, url, headers, _, _ = self.api_client.param_serialize(
            method=method,
            resource_path=path,
            query_params=params or None,
            header_params=headers,
            auth_settings=["BearerToken"],
        )
        start = time.monotonic()
        code = "<error>"
        try:
            response = self._call(method, url, headers, body, timeout, streaming)
            code = str(response.status)
        except ApiException as err:  # TLS failures surface here with status 0
            raise ConnectionError(f"{method} {path}: {err.reason}") from err
        finally:
            if self.metrics is not None:
                self.metrics.observe(method, self.host, code, time.monotonic() - start)
        if not 200 <= response.status <= 299:
            raise errors.from_response(response.status, response.data)
        return response

    def _call(
        self, method: str, url: str, headers: Any, body: Any, timeout: float | tuple[float, float], streaming: bool
    ) -> Any:
        """The request on our transport (transport.py), or for a watch or a configuration it does
        not model on the client library's pool (its proxy and TLS settings) without its
        RESTClientObject, which for a JSON body only json.dumps the body and wraps the response."""
        data = None if body is None else self._encode(body)
        try:
            if self.transport is not None and not streaming:
                return self.transport.round_trip(method, url, headers, data, timeout)
            return self.api_client.rest_client.pool_manager.urlopen(
                method, url, body=data, headers=headers, timeout=_urllib3_timeout(timeout), preload_content=False
            )
        except (urllib3.exceptions.SSLError, ssl.SSLError) as err:  # as RESTClientObject reports it: status 0
            raise ApiException(status=0, reason=f"{type(err).__name__}\n{err}") from err

    def _encode(self, body: Any) -> bytes:
        """orjson for a plain JSON document; anything it refuses (a datetime, a dataclass, a
        non-string key) goes through the client library's sanitizing and json.dumps, as before."""
        try:
            return orjson.dumps(body, option=_ORJSON_STRICT)
        except TypeError:
            return json.dumps(self.api_client.sanitize_for_serialization(body)).encode()


#: What orjson would serialize but json.dumps refuses goes the sanitizing way instead.
_ORJSON_STRICT = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


@functools.lru_cache(maxsize=16)
def _urllib3_timeout(timeout: float | tuple[float, float]) -> urllib3.Timeout:
    """RESTClientObject's reading of `_request_timeout`: a number is the total, a pair is
    (connect, read)."""
    if isinstance(timeout, tuple):
        return urllib3.Timeout(connect=timeout[0], read=timeout[1])
    return urllib3.Timeout(total=timeout)


#: Above this size a document (a whole LIST the API server would not page) goes to `json.loads`:
#: orjson first parses into a tree of its own, about twice the input, before it builds the Python
#: objects, which for a 33 MB list of 10,000 Jobs raised the peak RSS from 265 to 327 MiB.
LARGE_DOCUMENT_BYTES = 8 << 20


def decode_json(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode one JSON document from the API server (orjson: see pyproject.toml for why).

    Besides being two to three times faster than `json.loads`, orjson keeps one copy of each
    dictionary key across calls (a cache of short keys), so objects decoded one by one, as
    watch events are, share their keys the way a single `json.loads` shares them within a list.
    Documents above `LARGE_DOCUMENT_BYTES` are decoded by `json.loads` (which shares keys within
    the one document). Both raise a `json.JSONDecodeError` (so a `ValueError`).
    """
    if len(data) > LARGE_DOCUMENT_BYTES:
        return json.loads(data.tobytes() if isinstance(data, memoryview) else data)
    return orjson.loads(data)


def _query_tuples(query: Query | None) -> list[tuple[str, str]]:
    if not query:
        return []
    items = query.items() if isinstance(query, Mapping) else query
    out = []
    for key, value in items:
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        out.append((key, str(value)))
    return out
