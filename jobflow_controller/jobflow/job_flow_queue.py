"""`JobFlowQueue`: the controller's work queue as the JobFlow controller's parts use it.

Every trigger of a JobFlow builds the same key (`request_for`), so triggers for one JobFlow
collapse. What differs is the lane (urgency.py) and when: `add` (the default lane, now), `react`
(the `REACT` lane, now or after a delay: a check finished, a backoff or a poll or a deadline is
due), `add_after` (a lane and a delay, the status pacing's). The parts get this object, not the
controller's functions, so none of them needs a callback to put a JobFlow back.
"""

from __future__ import annotations

from collections.abc import Hashable

from jobflow_controller.apis import Action, Event, FlowRequest
from jobflow_controller.framework import QueueController
from jobflow_controller.jobflow import urgency
from workqueue import Clock, RateLimitingQueue


def request_for(namespace: str, name: str) -> FlowRequest:
    """The one key of a JobFlow's syncs, whatever the trigger."""
    return FlowRequest(namespace, name, action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)


class JobFlowQueue:
    """One request per JobFlow, in a lane, now or later; and whether the controller is stopping."""

    def __init__(self, workers: QueueController) -> None:
        self._workers = workers
        self.queue: RateLimitingQueue[Hashable] = workers.queue
        self.clock: Clock = workers.clock

    def add(self, namespace: str, name: str) -> None:
        """Sync the JobFlow in the default lane."""
        self.queue.add(request_for(namespace, name))

    def add_request(self, req: Hashable) -> None:
        self.queue.add(req)

    def react(self, namespace: str, name: str, delay: float = 0.0) -> None:
        """Sync the JobFlow in the `REACT` lane, after `delay` seconds (0: now)."""
        self.add_after(request_for(namespace, name), delay, urgency.REACT)

    def add_after(self, req: Hashable, delay: float, lane: int) -> None:
        """`req` in `lane`, after `delay` seconds (at most 0: now)."""
        if delay > 0:
            self.queue.add_after(req, delay, priority=lane)
        else:
            self.queue.add_with_priority(req, lane)

    def added_while_processing(self, req: Hashable) -> bool:
        """Whether `req` was queued again while a worker holds it (its next sync comes anyway)."""
        return self.queue.added_while_processing(req)

    def others_waiting(self) -> bool:
        """Whether any sync waits ready in the queue (not counting those held for later)."""
        return len(self.queue) > 0

    def stopping(self) -> bool:
        """The queue shuts down, or the stop is hard: nothing is left for later any more."""
        return self.queue.shutting_down() or self._workers.must_stop_now()
