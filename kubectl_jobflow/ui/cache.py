"""What the UI knows of the cluster: informers of JobFlows, of their Jobs and of the events the
pages show, shared by every browser tab, and a change log the tabs' event streams wait on.

One watch per informer whatever the number of tabs: a tab never makes the API server work, it
reads these caches. A change to a Job or an event is filed under the JobFlow it belongs to, so a
JobFlow's page is pushed again when anything it shows changes, and only then.

The caches hold what the pages can show and nothing else (issue 33: with `-A` they held every Job
and every Event of the cluster): the Jobs carrying the `volcano.sh/createdByJobFlow` label (a
JobFlow's Jobs always do: the controller sets it, and a JobFlow whose label value would be invalid
cannot create Jobs), the events about JobFlows, and the events about Volcano Jobs; the API server
filters them (label and field selectors), so the rest never reaches the plugin.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from informers import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    IndexFunc,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    SharedInformerFactory,
    meta_namespace_index_func,
)
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import CREATED_BY_JOB_FLOW, JOB_FLOW_KIND, JOB_KIND
from jobflow_controller.apis.jobflowtemplate import effective_job_flow
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import BY_CREATED_BY_JOB_FLOW, default_transform, label_index_func
from jobflow_controller.kube.listwatch import ResourceListerWatcher
from jobflow_controller.kube.resources import EVENTS, JOB_FLOWS, JOBS, Resource

#: Events indexed by the object they are about: "<namespace>/<kind>/<name>".
BY_INVOLVED_OBJECT = "byInvolvedObject"
#: The Jobs cached: those a JobFlow created (the label exists; its value names the JobFlow).
JOB_LABEL_SELECTOR = CREATED_BY_JOB_FLOW
#: The events cached: about a JobFlow (the page's events), about a Volcano Job (a flow's panel).
JOB_FLOW_EVENTS_SELECTOR = f"involvedObject.kind={JOB_FLOW_KIND}"
JOB_EVENTS_SELECTOR = f"involvedObject.kind={JOB_KIND},involvedObject.apiVersion=batch.volcano.sh/v1alpha1"


def involved_object_index_func(obj: Any) -> list[str]:
    involved = obj.get("involvedObject") if isinstance(obj, Mapping) else None
    if not isinstance(involved, Mapping) or not involved.get("name"):
        return []
    namespace = involved.get("namespace") or meta.namespace(obj)
    return [f"{namespace}/{involved.get('kind') or ''}/{involved['name']}"]


#: How many keys, and for how long, the change log remembers; a stream further behind than that
#: (stalled on a slow client) is sent everything again rather than the keys changed.
CHANGE_LOG_KEYS = 10_000
CHANGE_LOG_SECONDS = 300.0


class ChangeLog:
    """A version number that grows with every change, and the version at which each key last
    changed; readers remember the version they have shown and ask what changed since.

    Bounded: a key is forgotten once `max_keys` others changed after it or `max_age` seconds
    passed, and `changed_since` answers None ("everything, maybe") for a version older than the
    newest forgotten change.
    """

    def __init__(
        self,
        max_keys: int = CHANGE_LOG_KEYS,
        max_age: float = CHANGE_LOG_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._cond = threading.Condition()
        self._version = 0
        self._max_keys = max_keys
        self._max_age = max_age
        self._clock = clock
        #: key -> (version, when), oldest change first.
        self._changed: OrderedDict[str, tuple[int, float]] = OrderedDict()
        #: The newest version forgotten: what changed at or before it is no longer known.
        self._forgotten = 0

    @property
    def version(self) -> int:
        with self._cond:
            return self._version

    def __len__(self) -> int:
        with self._cond:
            return len(self._changed)

    def touch(self, keys: Iterable[str]) -> None:
        with self._cond:
            self._version += 1
            now = self._clock()
            for key in keys:
                self._changed[key] = (self._version, now)
                self._changed.move_to_end(key)
            self._prune(now)
            self._cond.notify_all()

    def _prune(self, now: float) -> None:
        while self._changed:
            key, (version, when) = next(iter(self._changed.items()))
            if len(self._changed) <= self._max_keys and now - when <= self._max_age:
                return
            del self._changed[key]
            self._forgotten = max(self._forgotten, version)

    def wait(self, since: int, timeout: float) -> int:
        """Block until a change after `since` (or `timeout`); the current version."""
        with self._cond:
            self._cond.wait_for(lambda: self._version > since, timeout)
            return self._version

    def changed_since(self, since: int) -> set[str] | None:
        """The keys changed after version `since`, or None when some of those are forgotten."""
        with self._cond:
            self._prune(self._clock())
            if since < self._forgotten:
                return None
            found: set[str] = set()
            for key, (version, _) in reversed(self._changed.items()):
                if version <= since:
                    break  # ordered by version: the rest are older
                found.add(key)
            return found


def _unwrap(obj: Any) -> Any:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


class LiveCache:
    """The three informers, over the user's own client, for one namespace or all (None)."""

    def __init__(self, clientset: Clientset, namespace: str | None) -> None:
        self.namespace = namespace
        self.changes = ChangeLog()
        self._clientset = clientset
        self._factory = SharedInformerFactory(0.0, transform=default_transform())
        self.flows = self._informer("jobflows", JOB_FLOWS)
        self.jobs = self._informer(
            "jobs", JOBS, {BY_CREATED_BY_JOB_FLOW: label_index_func(CREATED_BY_JOB_FLOW)}, label=JOB_LABEL_SELECTOR
        )
        by_object = {BY_INVOLVED_OBJECT: involved_object_index_func}
        self.flow_events = self._informer("jobflow-events", EVENTS, by_object, field=JOB_FLOW_EVENTS_SELECTOR)
        self.job_events = self._informer("job-events", EVENTS, by_object, field=JOB_EVENTS_SELECTOR)
        self._handle(self.flows, lambda obj: [f"{meta.namespace(obj)}/{meta.name(obj)}"])
        self._handle(self.jobs, self._job_owner_keys)
        self._handle(self.flow_events, self._event_keys)
        self._handle(self.job_events, self._event_keys)

    def _informer(
        self,
        key: str,
        resource: Resource,
        indexers: Mapping[str, IndexFunc] | None = None,
        *,
        label: str | None = None,
        field: str | None = None,
    ) -> SharedIndexInformer:
        lw = ResourceListerWatcher(
            self._clientset.rest, resource, self.namespace, label_selector=label, field_selector=field
        )
        every = {NAMESPACE_INDEX: meta_namespace_index_func, **(indexers or {})}
        return self._factory.informer_for(
            key, lambda resync: SharedIndexInformer(lw, resync, indexers=every, name=f"ui-{key}")
        )

    def _handle(self, informer: SharedIndexInformer, keys_of: Any) -> None:
        def changed(*objs: Any) -> None:
            if len(objs) == 2 and meta.resource_version(objs[0]) == meta.resource_version(objs[1]):
                return  # a resync replay: nothing to show
            self.changes.touch(k for obj in objs for k in keys_of(_unwrap(obj)))

        informer.add_event_handler(
            ResourceEventHandlerFuncs(add_func=changed, update_func=changed, delete_func=changed)
        )

    @staticmethod
    def _job_owner_keys(job: Any) -> list[str]:
        owner = meta.get_controller_of(job)
        if owner is None or owner.get("kind") != JOB_FLOW_KIND:
            return []
        return [f"{meta.namespace(job)}/{owner.get('name')}"]

    def _event_keys(self, event: Any) -> list[str]:
        involved = event.get("involvedObject") or {}
        namespace = involved.get("namespace") or meta.namespace(event)
        if involved.get("kind") == JOB_FLOW_KIND:
            return [f"{namespace}/{involved.get('name')}"]
        if involved.get("kind") == "Job":
            job, exists = self.jobs.get_store().get_by_key(f"{namespace}/{involved.get('name')}")
            return self._job_owner_keys(job) if exists else []
        return []

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, stop: threading.Event) -> None:
        self._factory.start(stop)

    def shutdown(self) -> None:
        self._factory.shutdown()

    # -- reads ----------------------------------------------------------------------------------
    def job_flows(self) -> list[Any]:
        """Every JobFlow; a run from a template with the spec it was fixed to (docs/templates.md)."""
        return [effective_job_flow(f) for f in self.flows.get_store().list()]

    def job_flow(self, key: str) -> Any | None:
        obj, exists = self.flows.get_store().get_by_key(key)
        return effective_job_flow(obj) if exists else None

    def jobs_of(self, job_flow: Mapping[str, Any]) -> list[Any]:
        """The Jobs the JobFlow controls, by the createdBy label index (the view checks ownership)."""
        value = meta.generate_object_string(meta.namespace(job_flow), meta.name(job_flow))
        found = self.jobs.get_indexer().by_index(BY_CREATED_BY_JOB_FLOW, value)
        return [j for j in found if meta.namespace(j) == meta.namespace(job_flow)]

    def events_about(self, kind: str, namespace: str, name: str) -> list[Any]:
        informer = self.flow_events if kind == JOB_FLOW_KIND else self.job_events
        return informer.get_indexer().by_index(BY_INVOLVED_OBJECT, f"{namespace}/{kind}/{name}")
