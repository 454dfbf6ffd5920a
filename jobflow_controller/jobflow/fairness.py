"""When a sync creating many Jobs gives way to the others (ours; docs/fairness.md).

A JobFlow with a backlog (a 500-flow layer come due, a 256-Job matrix) creates at most
`MAX_CREATES_PER_SYNC` Jobs per sync (action.py), but at the default client QPS, shared with the
other workers and the event sink, 25 creates hold a worker for a second or more. With every worker
in such a sync, another tenant's JobFlow waits that long for a worker at each of its steps. So the
sync also stops creating once it has spent `CREATE_SLICE_SECONDS` on it while other syncs wait
ready in the queue, and goes back in the queue's default lane (behind them: the lanes and the
namespaces' turns, urgency.py, hand them out first); the
rest is created by its next syncs, as `MAX_CREATES_PER_SYNC`'s rest already is. Alone in the
queue it goes on: giving way to nobody only costs a sync.

Every sync creates at least one Job, so a backlog always moves. Only when and in how many syncs the
Jobs are created changes: the same Jobs, in the same order, with the same events.
"""

from __future__ import annotations

#: How long a sync may spend creating Jobs while other syncs wait, before it gives way.
CREATE_SLICE_SECONDS = 0.2


def gives_way(created: int, spent: float, others_waiting: bool) -> bool:
    """Whether a sync that has created `created` Jobs in `spent` seconds stops creating now."""
    return created > 0 and others_waiting and spent >= CREATE_SLICE_SECONDS
