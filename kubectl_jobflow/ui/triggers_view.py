"""The JobFlowTriggers section of `kubectl jobflow ui` (docs/triggers.md): each trigger, its source,
how often it fired, and links to the runs it has now.

As the CronJobFlows section (`cron.py`): triggers are few and not watched; `TriggerList` lists them
at most every `LIST_TTL` seconds when a page asks, the runs come from the UI's JobFlow cache, and a
cluster without the CRD, or a user who may not list them, gets an empty section with a note. The
rows are `kubectl jobflow triggers`' (`kubectl_jobflow.triggers.rows`), so both show the same.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.kube.clientset import Clientset
from kubectl_jobflow.triggers import rows

LIST_TTL = 5.0


class TriggerList:
    """The JobFlowTriggers of the UI's scope, listed through the user's client at most every `LIST_TTL`."""

    def __init__(
        self,
        clientset: Clientset,
        namespace: str | None,
        job_flows: Callable[[], list[Any]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clientset, self._namespace = clientset, namespace
        self._job_flows = job_flows
        self._clock = clock
        self._lock = threading.Lock()
        self._listed: tuple[float, list[Any], str] | None = None

    def _list(self) -> tuple[list[Any], str]:
        with self._lock:
            if self._listed is not None and self._clock() - self._listed[0] < LIST_TTL:
                return self._listed[1], self._listed[2]
        try:
            items, note = self._clientset.job_flow_triggers(self._namespace).list(), ""
        except NotFoundError:
            items, note = [], "the JobFlowTrigger CRD is not installed"
        except ApiStatusError as err:
            items, note = [], f"cannot list JobFlowTriggers: {err.message}"
        except (ConnectionError, OSError) as err:
            items, note = [], f"cannot reach the API server: {err}"
        with self._lock:
            self._listed = (self._clock(), items, note)
        return items, note

    def snapshot(self) -> dict[str, Any]:
        items, note = self._list()
        return {"rows": rows(items, self._job_flows()), "note": note}
