"""What the Leases of a namespace say about the elastic shards: live members, holders, free shards.

`LeaseObserver` reads a LIST of Leases as the leader elector reads one: a record is alive while it
has changed within its `leaseDurationSeconds` on *this* replica's clock (a holder renews every
retry period, so its record keeps changing). Only the first sight of a record looks at its
renewTime (another machine's clock, allowed `CLOCK_SKEW` of error), so that a replica just started
does not count members dead for an hour as alive for a lease duration. What it concludes feeds the
rebalancing rule only; it never decides who may run a shard (each shard's elector does).

Pure apart from the observations it remembers; time and the Leases are handed in.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: How far another replica's wall clock may be off ours when judging a record seen for the first time.
CLOCK_SKEW = 2.0
#: A Lease name is a DNS subdomain: at most 253 characters of [a-z0-9.-].
MAX_NAME = 253
_NOT_IN_NAME = re.compile(r"[^a-z0-9.-]+")


def shard_lease_name(base: str, shard: int) -> str:
    """The Lease of shard `shard`: `jobflow-controller-shard-<shard>` for the default base name."""
    return f"{base}-shard-{shard}"


def member_prefix(base: str) -> str:
    return f"{base}-member-"


def member_lease_name(base: str, identity: str) -> str:
    """The membership Lease of `identity` (`<host>_<uuid>`): lowercased, `_` and the like made `-`."""
    slug = _NOT_IN_NAME.sub("-", identity.lower()).strip("-.") or "replica"
    prefix = member_prefix(base)
    return (prefix + slug)[:MAX_NAME].rstrip("-.")


@dataclass(frozen=True, slots=True)
class Observation:
    """One reading of the Leases."""

    members: frozenset[str]
    holders: Mapping[int, str]
    free_for: Mapping[int, float]
    #: (name, uid) of member Leases dead long enough to be deleted by anyone.
    stale_members: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class _Seen:
    fingerprint: tuple[Any, ...]
    since: float


@dataclass(slots=True)
class LeaseObserver:
    """Remembers when each Lease last changed, to tell live records from dead ones."""

    base: str
    shards: int
    #: A member Lease dead this long (past its expiry) is stale: anyone may delete it.
    stale_after: float
    _seen: dict[str, _Seen] = field(default_factory=dict)
    _absent_since: dict[int, float] = field(default_factory=dict)

    def observe(self, leases: Iterable[Mapping[str, Any]], now: float, wall: datetime.datetime) -> Observation:
        shard_names = {shard_lease_name(self.base, s): s for s in range(self.shards)}
        prefix = member_prefix(self.base)
        members: set[str] = set()
        stale: list[tuple[str, str]] = []
        holders: dict[int, str] = {}
        free_for: dict[int, float] = {}
        present: set[str] = set()
        for lease in leases:
            metadata = lease.get("metadata") or {}
            name = str(metadata.get("name") or "")
            shard = shard_names.get(name)
            if shard is None and not name.startswith(prefix):
                continue
            present.add(name)
            holder, expired_for = self._judge(name, lease.get("spec") or {}, now, wall)
            if shard is not None:
                if expired_for is None:
                    holders[shard] = holder
                else:
                    free_for[shard] = expired_for
            elif expired_for is None:
                members.add(holder)
            elif expired_for >= self.stale_after:
                stale.append((name, str(metadata.get("uid") or "")))
        for name in set(self._seen) - present:
            del self._seen[name]
        for name, shard in shard_names.items():
            if name in present:
                self._absent_since.pop(shard, None)
            else:
                free_for[shard] = now - self._absent_since.setdefault(shard, now)
        return Observation(frozenset(members), holders, free_for, tuple(stale))

    def _judge(
        self, name: str, spec: Mapping[str, Any], now: float, wall: datetime.datetime
    ) -> tuple[str, float | None]:
        """(holder, None) for a live record; ("", seconds it has been free) for a free one."""
        holder = str(spec.get("holderIdentity") or "")
        duration = _number(spec.get("leaseDurationSeconds"))
        fingerprint = (holder, spec.get("renewTime"), spec.get("acquireTime"), duration)
        seen = self._seen.get(name)
        if seen is None or seen.fingerprint != fingerprint:
            since = now - (_age(spec.get("renewTime"), wall) if seen is None else 0.0)
            seen = self._seen[name] = _Seen(fingerprint, since)
        if not holder:
            return "", now - seen.since
        left = seen.since + duration - now
        return (holder, None) if left > 0 else ("", -left)


def _number(value: Any) -> float:
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return 0.0


def _age(renew_time: Any, wall: datetime.datetime) -> float:
    """How long ago (beyond CLOCK_SKEW) another clock says a record was written; 0 when unknown."""
    if not isinstance(renew_time, str):
        return 0.0
    try:
        written = datetime.datetime.fromisoformat(renew_time.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    if written.tzinfo is None:
        written = written.replace(tzinfo=datetime.UTC)
    return max(0.0, (wall - written).total_seconds() - CLOCK_SKEW)
