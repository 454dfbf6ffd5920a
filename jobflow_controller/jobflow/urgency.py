"""Which JobFlow syncs go first, and how often a status that changes on its way may be written.

Upstream's queue is FIFO and every sync writes the status it computed: with a few hundred JobFlows
in flight, the sync that would create a dependent right after its target Completed waits behind
every sync queued before it, and each Job goes through Pending, Running and Completed with a
status write for each phase a sync happens to see. Most of those writes say what the next one says
again. So requests carry a priority (the queue's lanes, workqueue/priority.py):

* `REACT`: something that may create or delete a Job, or finish the JobFlow: a Job reached any
  phase but Pending or Running (Completed makes dependents due, Failed fails the flow), a Job was
  deleted, a retry's backoff or a probe's poll is over;
* `DEFAULT`: a JobFlow added or its spec changed, a JobTemplate added or changed, the resync, a
  failed sync's retry: the queue's default (controller-runtime's 0);
* `STATUS`: a sync whose only job is to write a status that changed on the way: a Job turned
  Pending or Running (of a JobFlow without probes; a probe may pass on a Running Job's pods), or
  another sync's status change that was not written at once.

Strict lanes would starve `DEFAULT` for as long as `REACT` stays busy: in a burst of JobFlows
created at once, each one's first Job waited behind every due dependent (p99 25 s at the default
client QPS). So `DEFAULT` has a share (`LANE_SHARES`): while it holds requests, at least one pop in
`DEFAULT_LANE_SHARE` is one of them. `STATUS` has none: its syncs only write what the next sync of
the same JobFlow would write anyway.

Within a lane the namespaces take turns (`tenant_of`, docs/fairness.md) by start-time fair
queuing on the worker time their syncs took (workqueue/fair_share.py): a namespace with a hundred
JobFlows due gets no more of the workers than one with a single JobFlow, and a namespace that was
idle or uses less than its share goes first: a tenant's sync waits for the syncs under way, never
behind another tenant's backlog.

How the `STATUS` syncs are paced is the status writer's business (status_writer.py).
"""

from __future__ import annotations

from collections.abc import Hashable

from workqueue import DEFAULT_PRIORITY

REACT = 10
DEFAULT = DEFAULT_PRIORITY
STATUS = -10

#: One pop in this many goes to the `DEFAULT` lane while it holds requests (workqueue/priority.py).
DEFAULT_LANE_SHARE = 2
LANE_SHARES = {DEFAULT: DEFAULT_LANE_SHARE}

#: What a sync is assumed to cost when handed out (seconds of a worker), until its real duration
#: is charged: about a small JobFlow's sync.
SYNC_COST_ESTIMATE = 0.02


def tenant_of(req: Hashable) -> Hashable:
    """The tenant a queued request belongs to: its namespace (a `FlowRequest`'s; None for another key)."""
    return getattr(req, "namespace", None)
