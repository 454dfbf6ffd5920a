"""Which pod addresses a probe never checks, beyond loopback and link-local (issue 33 item 6).

Cloud metadata services outside link-local, and NAT64 addresses that a gateway would translate to
an address refused in IPv4, are refused as their IPv4 form is (docs/probe.md, "addresses never
checked").
"""

from __future__ import annotations

import ipaddress

import pytest

from jobflow_controller.jobflow.probes.net import nat64_embedded, refused_target

POD: dict[str, object] = {"metadata": {"name": "p"}, "status": {"phase": "Running"}}


@pytest.mark.parametrize(
    ("ip", "why"),
    [
        ("fd00:ec2::254", "a cloud metadata address is never probed"),
        ("100.100.100.200", "a cloud metadata address is never probed"),
        ("::ffff:100.100.100.200", "a cloud metadata address is never probed"),
        # NAT64 well-known prefix (RFC 6052): the last 32 bits are the IPv4 address.
        ("64:ff9b::a9fe:a9fe", "a NAT64 address of 169.254.169.254 is never probed"),
        ("64:ff9b::169.254.169.254", "a NAT64 address of 169.254.169.254 is never probed"),
        ("64:ff9b::7f00:1", "a NAT64 address of 127.0.0.1 is never probed"),
        ("64:ff9b::6464:64c8", "a NAT64 address of 100.100.100.200 is never probed"),
        ("64:ff9b::e000:1", "a NAT64 address of 224.0.0.1 is never probed"),
        ("64:ff9b::ffff:ffff", "a NAT64 address of 255.255.255.255 is never probed"),
        ("64:ff9b::", "a NAT64 address of 0.0.0.0 is never probed"),
        # NAT64 local-use prefix (RFC 8215), each RFC 6052 prefix length (bits 64-71 are skipped).
        ("64:ff9b:1::a9fe:a9fe", "a NAT64 address of 169.254.169.254 is never probed"),  # /96
        ("64:ff9b:1:0:a9:fea9:fe00:0", "a NAT64 address of 169.254.169.254 is never probed"),  # /64
        ("64:ff9b:1:a9:fe:a9fe::", "a NAT64 address of 169.254.169.254 is never probed"),  # /56
        ("64:ff9b:1:7f00:0:100::", "a NAT64 address of 127.0.0.1 is never probed"),  # /48
        # Read at /48 it is 169.254.169.254; read at /64, 169.254.0.0: any refused reading refuses
        # it, and the message names the first (lengths tried from /96 down, 0.0.0.0 named last).
        ("64:ff9b:1:a9fe:a9:fe00::", "a NAT64 address of 169.254.0.0 is never probed"),
    ],
)
def test_a_metadata_or_nat64_form_of_a_refused_address_is_refused(ip: str, why: str) -> None:
    assert refused_target(POD, ip) == why


@pytest.mark.parametrize(
    "ip",
    [
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8: a public address, as a pod's own could be
        "64:ff9b::a00:7",  # NAT64 of 10.0.0.7
        "100.100.100.201",
        "fd00:ec2::253",
        "64:ff9b:2::a9fe:a9fe",  # outside both NAT64 prefixes
    ],
)
def test_an_address_next_to_a_refused_one_is_checked(ip: str) -> None:
    assert refused_target(POD, ip) is None


def test_loopback_allowed_for_the_local_control_plane_is_not_allowed_through_nat64() -> None:
    assert refused_target(POD, "127.0.0.1", allow_loopback=True) is None
    assert refused_target(POD, "64:ff9b::7f00:1", allow_loopback=True) == "a NAT64 address of 127.0.0.1 is never probed"


@pytest.mark.parametrize("ip", [5, None, ["10.0.0.1"], "1" * 10_000, "10.0.0.1%eth0" + "x" * 100])
def test_a_pod_ip_that_is_not_an_address_text_is_refused(ip: object) -> None:
    assert refused_target(POD, ip) == "that is not an IP address"


def test_outside_nat64_nothing_is_embedded() -> None:
    assert nat64_embedded(ipaddress.ip_address("10.0.0.1")) == []
    assert nat64_embedded(ipaddress.ip_address("2001:db8::1")) == []
