"""Where the JobFlow controller reads JobFlowTemplates (ours, docs/templates.md), and what their events resume.

The JobFlowTemplate CRD is ours and optional: a cluster upgraded without it must go on running
JobFlows. So the template informer is created only once discovery shows the CRD served (looked at
again every `CRD_POLL_INTERVAL`), and until its cache has synced `ready` is False: a run waits
(requeued) rather than being told its template is missing. Nothing is created, and no cache
sync is held back, for a cluster that never installs the CRD.

A template added, or its spec changed, resumes the unfinished runs of its namespace that name it
and were not resolved yet (missing template, or one that refused their params): upstream's way for
a JobFlow waiting for a JobTemplate. A resolved run never looks at its template again. The cache only says
when to look: a run is resolved from the API server's copy (template_ref.py), never from the cache's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import structlog

from informers import ResourceEventHandlerDetailedFuncs, SharedIndexInformer
from jobflow_controller.apis import FINISHED_PHASES, meta
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.jobflowtemplate import is_resolved, template_ref_name
from jobflow_controller.kube.informers import JobFlowLister, VolcanoInformerFactory

if TYPE_CHECKING:
    from jobflow_controller.jobflow.controller import JobFlowQueue

log = structlog.get_logger(__name__)

#: How often discovery is asked again while the CRD is missing.
CRD_POLL_INTERVAL: Final = 10.0
MESSAGE_WAITING: Final = (
    "the JobFlowTemplate CRD (jobflowtemplates.flow.volcano.sh) is not installed; runs from a template wait for it"
)


class TemplateSource:
    """The JobFlowTemplate cache, started once its CRD is served; `get` reads it."""

    def __init__(
        self,
        informer_factory: VolcanoInformerFactory,
        served: Callable[[], bool],
        job_flow_lister: JobFlowLister,
        queue: JobFlowQueue,
    ) -> None:
        self._factory = informer_factory
        self._served = served
        self._job_flow_lister = job_flow_lister
        self._queue = queue
        self._informer: SharedIndexInformer | None = None
        self._lock = threading.Lock()

    def ready(self) -> bool:
        """Whether templates can be told apart from missing ones yet (CRD served, cache synced)."""
        with self._lock:
            informer = self._informer
        return informer is not None and informer.has_synced()

    def start(self, stop: threading.Event) -> None:
        """Wait (in a thread of its own) for the CRD, then start the informer; returns at once."""
        threading.Thread(target=self._wait_and_start, args=(stop,), name="jobflowtemplate-crd", daemon=True).start()

    def start_now(self, stop: threading.Event) -> None:
        """Create and start the informer (the CRD is served)."""
        templates = self._factory.job_flow_templates()
        informer = templates.informer()
        informer.add_event_handler(
            ResourceEventHandlerDetailedFuncs(add_func=self.add_template, update_func=self.update_template)
        )
        with self._lock:
            self._informer = informer
        self._factory.start(stop)

    def _wait_and_start(self, stop: threading.Event) -> None:
        logged = False
        while not stop.is_set():
            try:
                if self._served():
                    self.start_now(stop)
                    return
            except Exception as err:  # noqa: BLE001 - discovery failing is "not yet", asked again
                log.debug("discovery failed", error=str(err))
            if not logged:
                log.info(MESSAGE_WAITING)
                logged = True
            # Real time, not the injected clock: discovery is asked of a real server, and a test's fake
            # clock must not count this loop among its waiters.
            if stop.wait(CRD_POLL_INTERVAL):
                return

    # -- event handlers ---------------------------------------------------------------------------
    def add_template(self, obj: Any, is_in_initial_list: bool = False) -> None:
        """A template came: the runs waiting for it go on (those of the initial list too: a run synced
        before the cache was ready was put back, and one more sync of a waiting run costs nothing)."""
        if isinstance(obj, Mapping):
            self._resume(meta.namespace(obj), meta.name(obj))

    def update_template(self, old: Any, new: Any) -> None:
        """A template's spec changed: the runs it refused may be fine now. Resolved runs are not touched."""
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            return
        if meta.metadata(new).get("generation") != meta.metadata(old).get("generation"):
            self._resume(meta.namespace(new), meta.name(new))

    def _resume(self, namespace: str, name: str) -> None:
        for job_flow in self._job_flow_lister.job_flows(namespace).list():
            if jf.phase(job_flow) in FINISHED_PHASES or is_resolved(job_flow):
                continue
            if template_ref_name(job_flow) == name:
                self._queue.react(namespace, meta.name(job_flow))
