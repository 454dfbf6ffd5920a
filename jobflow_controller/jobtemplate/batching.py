"""At most one JobTemplate sync per template per batching window, for the Jobs made from it.

Upstream syncs a template on every Job add that carries its label, and each sync writes the
template's `status.jobDependsOnList` afresh: one status write per Job created, on the few templates
that every JobFlow of a namespace shares (a third of all the controller's writes in
bench/e2e_flows.py). The list is a record, nothing waits on it, so the Jobs created within one
window are recorded together: the first Job add after a quiet spell syncs at once, the adds that
follow within `window` seconds share one sync at the window's end. The list written is the same
(the sync lists the template's Jobs from the cache, as before); it is at most `window` late.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable

#: Seconds between two syncs of one template caused by Job adds.
DEFAULT_BATCH_WINDOW = 5.0


class SyncBatcher:
    """When the next sync of a key may run, so that a burst of triggers shares one sync."""

    def __init__(self, window: float = DEFAULT_BATCH_WINDOW) -> None:
        self.window = window
        self._lock = threading.Lock()
        #: key -> when its latest scheduled sync becomes ready (queue clock).
        self._scheduled: dict[Hashable, float] = {}

    def delay(self, key: Hashable, now: float) -> float | None:
        """Seconds until `key` should be synced for a trigger at `now`, or None if already scheduled.

        A sync that becomes ready at or after `now` has not listed yet, so it sees whatever this
        trigger brought (the informer stores an object before it calls the handlers): no new one.
        """
        with self._lock:
            scheduled = self._scheduled.get(key)
            if scheduled is not None and scheduled >= now:
                return None
            at = now if scheduled is None else max(now, scheduled + self.window)
            self._scheduled[key] = at
            if len(self._scheduled) > 1024:
                self._prune(now)
            return at - now

    def _prune(self, now: float) -> None:
        """Drop keys whose last sync is more than a window ago: their next trigger syncs at once anyway."""
        for key in [k for k, at in self._scheduled.items() if at + self.window < now]:
            del self._scheduled[key]
