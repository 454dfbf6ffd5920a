"""Between the HTTP server and the cluster: the documents the pages show, built from the cache,
and the actions, sent to the API server as the user.

Layouts are kept per DAG shape (a 500-flow layout is computed once, not at every phase change, and
by one thread at a time: the tabs asking for a shape being laid out wait for it, not redo it);
RBAC answers per namespace for `ACCESS_TTL` seconds (a page pushed ten times a second must not
send ten access reviews a second).
"""

from __future__ import annotations

import datetime
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from informers.errors import ApiStatusError
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.resources import Resource
from kubectl_jobflow.ui import actions, detail, results_view
from kubectl_jobflow.ui.cache import LiveCache
from kubectl_jobflow.ui.cron import CronList
from kubectl_jobflow.ui.layout import Layout, layout
from kubectl_jobflow.ui.rows import list_row, list_rows
from kubectl_jobflow.ui.templates import TemplateList
from kubectl_jobflow.ui.triggers_view import TriggerList

SELF_SUBJECT_ACCESS_REVIEWS = Resource(
    "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", namespaced=False
)
ACCESS_TTL = 30.0
#: Layouts kept (least recently used dropped first).
LAYOUT_CACHE = 64


@dataclass(frozen=True)
class Outcome:
    """An action's answer to the page: an HTTP status and one sentence."""

    code: int
    message: str


class Backend:
    def __init__(
        self,
        cache: LiveCache,
        clientset: Clientset,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self.cache = cache
        self.clientset = clientset
        self._clock = clock
        self._now = now
        self._lock = threading.Lock()
        #: Held while a layout is computed: one at a time, and never twice for one shape.
        self._laying_out = threading.Lock()
        self._layouts: OrderedDict[detail.Shape, Layout] = OrderedDict()
        self._access: dict[str, tuple[float, str | None]] = {}
        self._cron = CronList(clientset, cache.namespace, lambda: self.cache.job_flows(), clock, now)
        #: The JobFlowTemplates section (docs/templates.md): each with its params and its runs.
        self.templates = TemplateList(clientset, cache.namespace, lambda: self.cache.job_flows(), clock)
        self._triggers = TriggerList(clientset, cache.namespace, lambda: self.cache.job_flows(), clock)

    # -- the list ---------------------------------------------------------------------------
    def list_snapshot(self) -> dict[str, Any]:
        rows = list_rows(self.cache.job_flows())
        return {"scope": self.cache.namespace or "", "rows": rows}

    def list_changes(self, keys: Iterable[str]) -> dict[str, Any]:
        """The rows of the JobFlows among `keys` that exist, and the keys of those that are gone."""
        rows, removed = [], []
        for key in sorted(keys):
            job_flow = self.cache.job_flow(key)
            if job_flow is None:
                removed.append(key)
            else:
                rows.append(list_row(job_flow))
        return {"rows": rows, "removed": removed}

    def cron_snapshot(self) -> dict[str, Any]:
        """The CronJobFlows section (docs/cron.md): each with its next run and its JobFlows."""
        return self._cron.snapshot()

    def trigger_snapshot(self) -> dict[str, Any]:
        """The JobFlowTriggers section (docs/triggers.md): each with what it fired."""
        return self._triggers.snapshot()

    # -- one JobFlow ------------------------------------------------------------------------
    def _cached_layout(self, shape: detail.Shape) -> Layout | None:
        with self._lock:
            found = self._layouts.get(shape)
            if found is not None:
                self._layouts.move_to_end(shape)
            return found

    def layout_of(self, shape: detail.Shape) -> Layout:
        found = self._cached_layout(shape)
        if found is not None:
            return found
        with self._laying_out:
            found = self._cached_layout(shape)  # laid out while this thread waited
            if found is not None:
                return found
            geometry = results_view.geometry(shape.results)
            computed = layout(shape.flows, dict(shape.targets), shape.finally_flows, geometry)
            with self._lock:
                self._layouts[shape] = computed
                while len(self._layouts) > LAYOUT_CACHE:
                    self._layouts.popitem(last=False)
            return computed

    def page(self, key: str) -> dict[str, Any] | None:
        job_flow = self.cache.job_flow(key)
        if job_flow is None:
            return None
        namespace = str(job_flow["metadata"].get("namespace") or "")
        drawing = detail.layout_json(self.layout_of(detail.shape(job_flow)), job_flow)
        return detail.page(
            job_flow,
            self.cache.jobs_of(job_flow),
            self.cache.events_about,
            drawing,
            actions.availability(job_flow, self.denied(namespace)),
            self._now(),
        )

    def denied(self, namespace: str) -> str | None:
        """Why the user may not patch jobflows in `namespace` (None: may), from a cached review.
        A review that cannot be made leaves the buttons on: the API server still judges the patch."""
        with self._lock:
            cached = self._access.get(namespace)
        if cached is not None and self._clock() - cached[0] < ACCESS_TTL:
            return cached[1]
        try:
            review = self.clientset.resource(SELF_SUBJECT_ACCESS_REVIEWS).create(actions.access_review(namespace))
            answer = actions.denied_reason(review, namespace)
        except (ApiStatusError, ConnectionError, OSError):
            answer = None
        with self._lock:
            self._access[namespace] = (self._clock(), answer)
        return answer

    # -- actions ----------------------------------------------------------------------------
    def act(self, key: str, action: str, flows: Sequence[str] = ()) -> Outcome:
        job_flow = self.cache.job_flow(key)
        if action not in actions.ACTIONS:
            return Outcome(400, f"unknown action {action!r}")
        if job_flow is None:
            return Outcome(404, f"JobFlow {key} not found")
        namespace, name = key.split("/", 1)
        known = set(detail.shape(job_flow).flows)
        unknown = [f for f in flows if f not in known]
        if unknown or (flows and action != actions.RETRY):
            return Outcome(400, f"flows apply to retry only, and must be flows of {name}: {unknown or list(flows)}")
        reason = actions.availability(job_flow, self.denied(namespace))[action]["reason"]
        if reason:
            return Outcome(409, f"{action}: {reason}")
        patch = actions.patch_for(action, flows)
        try:
            self.clientset.job_flows(namespace).patch(name, patch)
        except ApiStatusError as err:
            return Outcome(err.code if 400 <= err.code < 600 else 502, f"{action}: {err.message}")
        except (ConnectionError, OSError) as err:
            return Outcome(502, f"{action}: cannot reach the API server: {err}")
        return Outcome(200, f"{action} sent to {key}")
