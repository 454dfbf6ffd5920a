"""What the shards' rebalancing reads from the Leases of its namespace (jobflow_controller/sharding/leases.py).

No tenant writes these Leases, but anyone holding the Role may: a malformed Lease must read as free
or expired (the worst it does is one handover too many), never raise, and a membership Lease's name
made from any identity must be a valid name of bounded length.
"""

from __future__ import annotations

import datetime
from typing import Any

from registry import Parser, as_text

from jobflow_controller.sharding.leases import LeaseObserver, _age, member_lease_name, shard_lease_name

WALL = datetime.datetime(2026, 12, 6, tzinfo=datetime.UTC)


def _observe(value: Any) -> object:
    spec = value if isinstance(value, dict) else {"holderIdentity": value}
    leases = [
        {"metadata": {"name": shard_lease_name("jobflow-controller", 0)}, "spec": spec},
        {"metadata": {"name": member_lease_name("jobflow-controller", "x")}, "spec": spec},
    ]
    return LeaseObserver("jobflow-controller", 1, stale_after=15.0).observe(leases, 1.0, WALL)


def _name(value: Any) -> str:
    name = member_lease_name("jobflow-controller", as_text(value))
    assert len(name) <= 253
    return name


PARSERS: list[Parser] = [
    Parser("jobflow_controller.sharding.leases.member_lease_name", _name, "text", ()),
    Parser("jobflow_controller.sharding.leases._age", lambda v: _age(v, WALL), "json", ()),
    Parser("jobflow_controller.sharding.leases.LeaseObserver.observe", _observe, "json", ()),
]
