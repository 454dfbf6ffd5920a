"""The network side of `dependsOn.probe` (ours): the HTTP and TCP checks, and the addresses refused.

Each check runs under one absolute deadline (`PROBE_TIMEOUT` from its start): before every socket
operation (connect, send, each read of the status line, headers and body) the socket is given only
the time left, and the check fails once none is left. A per-operation timeout would let a server
that sends one byte just inside it keep a check, and a pool thread, for as long as it likes.

A pod whose address is not a pod's own is never checked (`refused_target`): a hostNetwork pod's IP
is its node's, and a loopback, link-local (169.254.169.254 is the cloud metadata service),
unspecified, multicast or broadcast address, a cloud metadata address outside link-local
(`METADATA_ADDRESSES`), or a NAT64 address embedding any of these would make the controller call
something other than the tenant's pod with its own network identity.
"""

from __future__ import annotations

import http.client
import io
import ipaddress
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from jobflow_controller import __version__
from jobflow_controller.apis.probe import HttpGet, TcpSocket

Obj = Mapping[str, Any]

#: kubelet's default `timeoutSeconds`: the whole of one HTTP or TCP check, connect to last byte.
PROBE_TIMEOUT = 1.0
#: kubelet reads at most this much of a probe's response body.
MAX_BODY_BYTES = 10 * 1024
USER_AGENT = f"jobflow-controller-probe/{__version__}"

_BROADCAST = ipaddress.IPv4Address("255.255.255.255")
#: Cloud metadata services that are not link-local: AWS's IPv6 IMDS and Alibaba Cloud's (169.254.169.254,
#: the usual one, is refused as link-local).
METADATA_ADDRESSES: frozenset[ipaddress.IPv4Address | ipaddress.IPv6Address] = frozenset(
    {ipaddress.IPv6Address("fd00:ec2::254"), ipaddress.IPv4Address("100.100.100.200")}
)
#: NAT64 (RFC 6052, RFC 8215): a gateway translates these to the IPv4 address they embed. The
#: well-known /96 puts it in the last 32 bits; the local-use /48 lets each network choose its prefix
#: length, so every RFC 6052 position inside it is tried.
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")
_NAT64_PREFIX_LENGTHS = (96, 64, 56, 48)


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    message: str = ""


class ProbeRunner(Protocol):
    """Runs one network check; called on the probe pool, never on a worker."""

    def http_get(self, host: str, check: HttpGet, timeout: float) -> ProbeResult: ...

    def tcp_socket(self, host: str, check: TcpSocket, timeout: float) -> ProbeResult: ...


class Deadline:
    """An absolute deadline on the monotonic clock; `remaining()` raises once it has passed."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._end = time.monotonic() + timeout

    def remaining(self) -> float:
        left = self._end - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"timed out: the whole check must end within {self.timeout:g}s")
        return left


class _DeadlineReader(io.RawIOBase):
    """The socket's read side for http.client: each read waits at most until the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        super().__init__()
        self._sock, self._deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self._sock.settimeout(self._deadline.remaining())
        return self._sock.recv_into(buffer)


class _DeadlineSocket:
    """What http.client uses of its socket (`sendall`, `makefile`, `close`), under one deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self._sock, self._deadline = sock, deadline

    def sendall(self, data: bytes) -> None:
        self._sock.settimeout(self._deadline.remaining())  # since 3.5, the total time of sendall
        self._sock.sendall(data)

    def makefile(self, mode: str = "rb") -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))

    def close(self) -> None:
        """Nothing: http.client closes its socket while the response may still be read (a real
        socket stays open while its makefile() is); the check closes it when done (`release`)."""


class _DeadlineHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, deadline: Deadline) -> None:
        super().__init__(host, port, timeout=deadline.timeout)
        self._deadline = deadline
        self._raw: socket.socket | None = None

    def connect(self) -> None:
        self._raw = socket.create_connection((self.host, self.port), timeout=self._deadline.remaining())
        self.sock = _DeadlineSocket(self._raw, self._deadline)

    def release(self) -> None:
        self.close()
        if self._raw is not None:
            self._raw.close()


class NetworkProbeRunner:
    """kubelet's HTTP and TCP probes: GET succeeds on 2xx and 3xx (redirects are not followed, and a
    3xx counts as success, as kubelet counts a redirect it does not follow); TCP on a completed
    connect. `timeout` bounds the whole check."""

    def http_get(self, host: str, check: HttpGet, timeout: float) -> ProbeResult:
        headers = {"User-Agent": USER_AGENT, "Accept": "*/*"}
        if check.header is not None:
            headers[check.header[0]] = check.header[1]
        url = f"http://{host}:{check.port}{check.path or '/'}"
        conn = _DeadlineHTTPConnection(host, check.port, Deadline(timeout))
        try:
            conn.request("GET", check.path or "/", headers=headers)
            response = conn.getresponse()
            response.read(MAX_BODY_BYTES)
            status = response.status
        except (OSError, http.client.HTTPException) as err:
            return ProbeResult(False, f"GET {url}: {err or type(err).__name__}")
        finally:
            conn.release()
        if 200 <= status < 400:
            return ProbeResult(True, f"HTTP {status}")
        return ProbeResult(False, f"GET {url}: HTTP {status}")

    def tcp_socket(self, host: str, check: TcpSocket, timeout: float) -> ProbeResult:
        try:
            with socket.create_connection((host, check.port), timeout=Deadline(timeout).remaining()):
                return ProbeResult(True)
        except OSError as err:
            return ProbeResult(False, f"dial tcp {host}:{check.port}: {err or type(err).__name__}")


def refused_target(pod: Obj, ip: object, *, allow_loopback: bool = False) -> str | None:
    """Why the pod at `ip` is never checked (the end of an `InvalidProbe` message), or None.

    `allow_loopback` is for a local control plane only, whose simulated pods run on 127.0.0.1.
    """
    spec = pod.get("spec")
    if isinstance(spec, Mapping) and spec.get("hostNetwork") is True:
        return "it runs in its node's network (spec.hostNetwork), so its IP is the node's"
    if not isinstance(ip, str) or len(ip) > _MAX_IP_TEXT:
        return "that is not an IP address"
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return "that is not an IP address"
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    why = _refused_address(address, allow_loopback)
    if why is not None:
        return why
    refused = [v4 for v4 in nat64_embedded(address) if _refused_address(v4, allow_loopback=False) is not None]
    if refused:
        # The local-use prefix's zero bits read as 0.0.0.0 at some length: name a meaningful one.
        named = next((v4 for v4 in refused if not v4.is_unspecified), refused[0])
        return f"a NAT64 address of {named} is never probed"
    return None


#: The longest text an IP address has ("ffff:...:255.255.255.255" with a zone is under 64).
_MAX_IP_TEXT = 64


def _refused_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address, allow_loopback: bool) -> str | None:
    for refused, what in (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback and not allow_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address == _BROADCAST, "the broadcast address"),
        (address in METADATA_ADDRESSES, "a cloud metadata address"),
    ):
        if refused:
            return f"{what} is never probed"
    return None


def nat64_embedded(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses a NAT64 gateway may translate `address` to (none outside NAT64's prefixes)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    value = int(address)
    if address in _NAT64_WELL_KNOWN:
        return [ipaddress.IPv4Address(value & 0xFFFFFFFF)]
    if address not in _NAT64_LOCAL_USE:
        return []
    return [ipaddress.IPv4Address(_rfc6052_ipv4(value, n)) for n in _NAT64_PREFIX_LENGTHS]


def _rfc6052_ipv4(value: int, prefix_length: int) -> int:
    """RFC 6052 section 2.2: the 32 bits after the prefix, skipping bits 64-71 (the "u" octet)."""
    bits = value.to_bytes(16, "big")
    start = prefix_length // 8
    octets = [b for i, b in enumerate(bits[start:], start) if i != 8][:4]
    return int.from_bytes(bytes(octets), "big")
