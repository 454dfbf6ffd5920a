"""The HTTP round trip of the REST layer (client-go's `transport`): kept-alive connections, one request each at a time.

Why not the client library's urllib3 pool for every request: its pool manager, URL parsing, retry
and response objects cost about as much CPU as the TLS and HTTP work itself (about 180 of 410 us
of CPU per request, docs/performance.md), and the controller's CPU is mostly its requests. Here a
request is written and read by `http1.py` on a connection taken from a LIFO list of idle ones.

It models the configurations the controller meets (a kubeconfig or the in-cluster account: a CA,
client certificates, a token, `verify_ssl`, `tls_server_name`); `supports` says which. Anything
else (a proxy, socket options, an `assert_hostname`, a urllib3 `Retry` policy) keeps the client
library's pool, and so do the watches (`RestClient.stream`), whose cost is their events, not
their one request.

Retries follow Go's `http.Transport` rather than urllib3's: a connection the server closed while it
sat idle is noticed before it is used (as urllib3's `is_connection_dropped`), a failed connect is
tried again up to `configuration.retries` times (urllib3's default of 3; `False` is none), and a
request that failed on the wire is sent again on a new connection only if its method is idempotent
and the connection was a reused one (the server closed it as the request went out). Timeouts are
never retried. Every failure is an `OSError` (`ConnectionError` for a malformed response).
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from jobflow_controller.kube.client_library import client as k8s_client
from jobflow_controller.kube.http1 import Connection, encode_request, read_reply

__all__ = ["Response", "Transport", "supports"]

#: urllib3's default number of retries for a connection that cannot be made.
DEFAULT_CONNECT_RETRIES = 3
#: urllib3's `Retry.DEFAULT_ALLOWED_METHODS`, the ones a broken reused connection may resend.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})
#: The kubernetes client's default pool size (cpu_count * 5) is what `connection_pool_maxsize` holds.
FALLBACK_MAX_IDLE = 10


class Response(NamedTuple):
    status: int
    data: bytes


def supports(configuration: k8s_client.Configuration) -> bool:
    """Whether `Transport` reproduces the client library's pool for this configuration."""
    scheme = urlsplit(configuration.host).scheme
    return (
        scheme in ("http", "https")
        and not configuration.proxy
        and configuration.socket_options is None
        and not getattr(configuration, "keep_alive", False)
        and configuration.assert_hostname is None
        and _connect_retries(configuration.retries) is not None
    )


def _ssl_context(configuration: k8s_client.Configuration) -> ssl.SSLContext:
    """The context urllib3 builds from the same fields: the CA (file or data, else the system's),
    the client certificate, and no verification at all when `verify_ssl` is off."""
    ca_data = configuration.ca_cert_data
    if isinstance(ca_data, bytes):
        ca_data = ca_data.decode()
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert, cadata=ca_data)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    return context


def _connect_retries(retries: object) -> int | None:
    """`configuration.retries` as a count (None: urllib3's default, False: none), or None for what
    only urllib3 understands (a `Retry`, True)."""
    if retries is None:
        return DEFAULT_CONNECT_RETRIES
    if retries is False:
        return 0
    return retries if isinstance(retries, int) and not isinstance(retries, bool) else None


def _dropped(conn: Connection) -> bool:
    """An idle kept-alive connection with anything to read has been closed (or spoiled) by the server."""
    sock = conn.sock
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    try:
        poller = select.poll()  # not select(): it refuses descriptors above FD_SETSIZE (1024)
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


class Transport:
    """Requests to one API server over connections kept alive between them; safe for many threads."""

    def __init__(self, configuration: k8s_client.Configuration) -> None:
        base = urlsplit(configuration.host)
        tls = base.scheme == "https"
        default_port = 443 if tls else 80
        self._host = base.hostname or ""
        self._port = base.port or default_port
        self._prefix = base.path.rstrip("/")
        self._base = configuration.host
        self._server_hostname = configuration.tls_server_name or self._host
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._host_header = host if self._port == default_port else f"{host}:{self._port}"
        self._context = _ssl_context(configuration) if tls else None
        self._connect_retries = _connect_retries(configuration.retries) or 0
        self._max_idle = configuration.connection_pool_maxsize or FALLBACK_MAX_IDLE
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def target(self, url: str) -> str:
        """The request target of a URL the client library built on this server's base."""
        if url.startswith(self._base):
            return self._prefix + url[len(self._base) :]
        parts = urlsplit(url)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    def round_trip(
        self, method: str, url: str, headers: dict[str, Any], body: bytes | None, timeout: float | tuple[float, float]
    ) -> Response:
        connect_timeout, read_timeout = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        target = self.target(url)
        resends = self._connect_retries
        while True:
            conn, reused = self._checkout(connect_timeout)
            try:
                return self._exchange(conn, method, target, headers, body, read_timeout)
            except BaseException as err:
                conn.close()
                broken = isinstance(err, OSError) and not isinstance(err, TimeoutError)
                if not (broken and reused and method in IDEMPOTENT_METHODS and resends > 0):
                    raise
                resends -= 1

    def _exchange(
        self,
        conn: Connection,
        method: str,
        target: str,
        headers: dict[str, Any],
        body: bytes | None,
        read_timeout: float,
    ) -> Response:
        conn.sock.settimeout(read_timeout)
        conn.sock.sendall(encode_request(method, target, self._host_header, headers, body))
        reply = read_reply(conn.reader, method)
        if reply.will_close:
            conn.close()
        else:
            self._checkin(conn)
        return Response(reply.status, reply.data)

    def _checkout(self, connect_timeout: float) -> tuple[Connection, bool]:
        """An idle connection still open (most recently used first), else a new one."""
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._connect(connect_timeout), False
            if not _dropped(conn):
                return conn, True
            conn.close()

    def _checkin(self, conn: Connection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def _connect(self, connect_timeout: float) -> Connection:
        tries = self._connect_retries + 1
        while True:
            tries -= 1
            try:
                return self._open(connect_timeout)
            except (TimeoutError, ssl.SSLError) as err:
                # A server that does not answer, or a TLS refusal, says the same again.
                raise self._naming_the_server(err) from err
            except OSError as err:
                if tries <= 0:
                    raise self._naming_the_server(err) from err

    def _naming_the_server(self, err: OSError) -> OSError:
        """The same error, its message saying which server (as urllib3's named the pool's host)."""
        reason = err.strerror or str(err) or type(err).__name__
        where = f"{self._host_header}: {reason}"
        return type(err)(err.errno, where) if err.errno is not None else type(err)(where)

    def _open(self, connect_timeout: float) -> Connection:
        sock = socket.create_connection((self._host, self._port), timeout=connect_timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._context is not None:
                sock = self._context.wrap_socket(sock, server_hostname=self._server_hostname)
        except BaseException:
            sock.close()
            raise
        return Connection(sock)

    def close(self) -> None:
        """Close the idle connections; one in use is closed when its request ends."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
