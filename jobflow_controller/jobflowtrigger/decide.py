"""What a firing decides, as a pure function: may a run start now, and which active runs go first.

The policy is CronJobFlow's (`spec.concurrencyPolicy`, read by the same accessor): `Allow` starts a
run whatever is running, `Forbid` starts none while one is active (the firing fails, with the
active run named), `Replace` deletes the active runs first (foreground, with their recorded uid,
as the CronJobFlow's `Replace`). Which runs are active, and the history limits, are the CronJobFlow
controller's own decisions (`cronjobflow.decide.reconcile_children` and `history_deletes`), called
as they are on a trigger, whose `status.active` and history limits have the CronJobFlow's shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobflow_controller.apis import cronjobflow as cjf


@dataclass(frozen=True)
class FireDecision:
    """`start`: create a run (after deleting `replace`); else `blocked_by` names the active run."""

    start: bool
    replace: list[dict[str, Any]] = field(default_factory=list)
    blocked_by: str = ""


def decide_fire(trigger: Mapping[str, Any], active: Sequence[Mapping[str, Any]]) -> FireDecision:
    """Whether `trigger` may start a run while `active` (its `status.active` entries, finished ones
    dropped) are running."""
    policy = cjf.concurrency_policy(trigger)
    if policy == cjf.ConcurrencyPolicy.FORBID and active:
        return FireDecision(False, blocked_by=str(active[0].get("name") or ""))
    if policy == cjf.ConcurrencyPolicy.REPLACE:
        return FireDecision(True, replace=[dict(ref) for ref in active])
    return FireDecision(True)
