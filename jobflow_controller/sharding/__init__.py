"""Sharding JobFlows across controller replicas (opt-in with --shards=N; docs/operations.md).

A JobFlow belongs to shard `fnv32a(namespace) % N` (`hash.py`), so a JobFlow, its JobTemplates and
its Jobs always share one shard. Each shard is guarded by a Lease of its own, campaigned for with
the ordinary leader elector (`campaign.py`); each replica keeps a membership Lease, and the
rebalancing rule (`rebalance.py`, over what `leases.py` reads) spreads the N shards evenly over
the live replicas, however many there are. A replica runs a controller unit for every shard it
holds; the units share the replica's informers and each sees only its shard (`filter.py`).
"""

from .campaign import LeaseAccess, ShardCampaign
from .filter import ShardFilter
from .hash import fnv32a, ordinal_from_name, shard_for_namespace
from .leases import LeaseObserver, member_lease_name, shard_lease_name
from .rebalance import Plan, View, plan, quotas

__all__ = [
    "LeaseAccess",
    "LeaseObserver",
    "Plan",
    "ShardCampaign",
    "ShardFilter",
    "View",
    "fnv32a",
    "member_lease_name",
    "ordinal_from_name",
    "plan",
    "quotas",
    "shard_for_namespace",
    "shard_lease_name",
]
