"""Sharding JobFlows across controller replicas (opt-in with --shards=N; docs/operations.md).

A JobFlow belongs to shard `fnv32a(namespace) % N` (`hash.py`), so a JobFlow, its JobTemplates and
its Jobs always share one shard. Each shard is guarded by a Lease of its own, campaigned for with
the ordinary leader elector (`campaign.py`); a replica runs a full controller unit for every shard
it holds, whose informers cache only that shard's namespaces (`filter.py`).
"""

from .campaign import ShardCampaign, shard_lease_name
from .filter import ShardFilter, ShardListerWatcher
from .hash import fnv32a, ordinal_from_name, shard_for_namespace

__all__ = [
    "ShardCampaign",
    "ShardFilter",
    "ShardListerWatcher",
    "fnv32a",
    "ordinal_from_name",
    "shard_for_namespace",
    "shard_lease_name",
]
