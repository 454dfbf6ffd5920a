"""A shard's Lease lock that reads from the campaign's last LIST while the shard is not ours to take.

Every replica keeps an elector per shard so that, the moment the rebalancing rule lets it take a
shard, it already knows how long the Lease has gone unchanged (a fresh elector would have to watch
it for a whole lease duration first). Those standby electors need not each GET their Lease every
retry period: the campaign LISTs the namespace's Leases every retry period anyway. So while the
shard may not be taken and is not held here, `get` answers from that LIST (no request); once it
may be taken, or is held, every call goes to the API, and so does a read whose listed record names
this replica (a LIST from before our own release: the elector must not take it for a renewal).

Safety does not rest on the cached reads. The cached record is at most a LIST old, so the elector
sees a change later than it happened, never earlier, and only waits longer; and the elector reads
the Lease from the API (the gate is open then) right before it writes, so a stale cache that made
a live Lease look expired is caught by that read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jobflow_controller.leaderelection import LeaderElectionRecord, LockNotFoundError, ResourceLock


class CachedReadLock:
    """Wraps a shard's `ResourceLock`: reads from `cached(name)` unless `use_api()` or the Lease is ours."""

    def __init__(
        self,
        inner: ResourceLock,
        name: str,
        *,
        cached: Callable[[str], Mapping[str, Any] | None],
        use_api: Callable[[], bool],
        to_record: Callable[[Mapping[str, Any]], LeaderElectionRecord],
    ) -> None:
        self._inner = inner
        self._name = name
        self._cached = cached
        self._use_api = use_api
        self._to_record = to_record
        # True from our write of a record naming us until our write of one that does not (a release).
        self._ours = False

    def get(self) -> tuple[LeaderElectionRecord, bytes]:
        if self._ours or self._use_api():
            return self._inner.get()
        spec = self._cached(self._name)
        if spec is None:
            raise LockNotFoundError(f'leases.coordination.k8s.io "{self._name}" not found (in the last list)')
        record = self._to_record(spec)
        if record.holder_identity == self._inner.identity():
            # A list older than our own release: the elector would take itself for the holder.
            return self._inner.get()
        return record, record.raw()

    def create(self, record: LeaderElectionRecord) -> None:
        self._inner.create(record)
        self._ours = record.holder_identity == self._inner.identity()

    def update(self, record: LeaderElectionRecord) -> None:
        self._inner.update(record)
        self._ours = record.holder_identity == self._inner.identity()

    def record_event(self, message: str) -> None:
        self._inner.record_event(message)

    def identity(self) -> str:
        return self._inner.identity()

    def describe(self) -> str:
        return self._inner.describe()
