"""The JobFlowTriggers section of `kubectl jobflow ui` (docs/triggers.md): each trigger, its source,
how often it fired, and links to the runs it has now.

As the CronJobFlows section (`cron.py`): triggers are few and not watched; `TriggerList` lists them
at most every `LIST_TTL` seconds when a page asks, the runs come from the UI's JobFlow cache, and a
cluster without the CRD, or a user who may not list them, gets an empty section with a note. The
rows are `kubectl jobflow triggers`' (`kubectl_jobflow.triggers.rows`), so both show the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from jobflow_controller.kube.clientset import Clientset
from kubectl_jobflow.triggers import rows
from kubectl_jobflow.ui.listed import TimedList


class TriggerList:
    """The JobFlowTriggers of the UI's scope, listed through the user's client at most every `LIST_TTL`."""

    def __init__(
        self,
        clientset: Clientset,
        namespace: str | None,
        job_flows: Callable[[], list[Any]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._job_flows = job_flows
        self._listed = TimedList(lambda: clientset.job_flow_triggers(namespace).list(), "JobFlowTrigger", clock)

    def _list(self) -> tuple[list[Any], str]:
        return self._listed.items()

    def snapshot(self) -> dict[str, Any]:
        items, note = self._list()
        return {"rows": rows(items, self._job_flows()), "note": note}
