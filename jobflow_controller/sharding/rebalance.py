"""The elastic shards' rule: how many shards each live replica should hold, and what to do about it.

Pure functions of one replica's view (the live members, who holds which shard, how long each free
shard has been free); the campaign (campaign.py) reads the Leases and acts. The rule:

- quota: N // members each, one more for the first N % members in sorted identity order, so every
  replica computes the same quotas from the same view;
- under its quota a replica campaigns at once for free shards (its preferred shard first, then the
  others in an order of its own, so two newcomers rarely reach for the same shard);
- above its quota it hands shards over (its unit drained, then its Lease released) only when some
  live member is under its quota and the free shards do not already cover that deficit;
- a shard free for `takeover_delay` is taken by anyone whatever the quotas, so a stale or wrong view
  of the members can delay a shard but never strand it.

A view can be wrong for a while (a member just died, a Lease just changed hands); the worst a
wrong view does is one handover too many, which the next view undoes. Safety never rests on it:
two replicas never run one shard because each shard's Lease is won with the leader elector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .hash import fnv32a


@dataclass(frozen=True, slots=True)
class View:
    """What one replica sees of the others at one moment."""

    me: str
    shards: int
    #: Identities of the live members (this replica's own is added if missing).
    members: frozenset[str]
    #: Shard -> identity of its live holder; a shard missing here is free (released, expired, new).
    holders: Mapping[int, str]
    #: Shard -> seconds it has been free, as observed here (missing: 0).
    free_for: Mapping[int, float] = field(default_factory=dict)
    preferred: int | None = None
    takeover_delay: float = 15.0


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do now: which free shards may be taken, which held ones handed over."""

    campaign: frozenset[int]
    release: frozenset[int]


def quotas(shards: int, members: frozenset[str] | set[str]) -> dict[str, int]:
    """Each member's share of `shards`: N // M, plus one for the first N % M in sorted order."""
    ordered = sorted(members)
    if not ordered:
        return {}
    base, extra = divmod(shards, len(ordered))
    return {member: base + (1 if index < extra else 0) for index, member in enumerate(ordered)}


def campaign_order(me: str, shards: int, preferred: int | None) -> list[int]:
    """The order this replica reaches for free shards: preferred first, then from a point of its own."""
    start = fnv32a(me.encode("utf-8")) % shards
    order = [(start + i) % shards for i in range(shards)]
    if preferred is not None and 0 <= preferred < shards:
        order.remove(preferred)
        order.insert(0, preferred)
    return order


def release_order(held: frozenset[int], preferred: int | None) -> list[int]:
    """Which held shards go first when handing over: the highest numbers, the preferred one last."""
    return sorted(held, key=lambda shard: (shard == preferred, -shard))


def plan(view: View, held: frozenset[int]) -> Plan:
    """The shards to campaign for and to release, given the view and the shards whose unit runs here."""
    members = frozenset(view.members | {view.me})
    quota = quotas(view.shards, members)
    holders = {shard: holder for shard, holder in view.holders.items() if holder != view.me and shard not in held}
    free = [s for s in range(view.shards) if s not in holders and s not in held]
    counts = {member: 0 for member in members}
    for holder in holders.values():
        if holder in counts:
            counts[holder] += 1
    mine = quota[view.me]

    campaign: set[int] = set()
    if len(held) < mine:
        wanted = mine - len(held)
        campaign.update([s for s in campaign_order(view.me, view.shards, view.preferred) if s in free][:wanted])
    campaign.update(s for s in free if view.free_for.get(s, 0.0) >= view.takeover_delay)

    release: list[int] = []
    excess = len(held) - mine
    if excess > 0:
        deficit = sum(max(0, quota[m] - counts[m]) for m in members if m != view.me)
        uncovered = max(0, deficit - len(free))
        release = release_order(held, view.preferred)[: min(excess, uncovered)]
    return Plan(campaign=frozenset(campaign), release=frozenset(release))
