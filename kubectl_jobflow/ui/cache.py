"""What the UI knows of the cluster: one informer per resource (JobFlows, Jobs, Events), shared by
every browser tab, and a change log the tabs' event streams wait on.

One watch per resource whatever the number of tabs: a tab never makes the API server work, it
reads these caches. A change to a Job or an event is filed under the JobFlow it belongs to, so a
JobFlow's page is pushed again when anything it shows changes, and only then.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedIndexInformer
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import JOB_FLOW_KIND
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import BY_CREATED_BY_JOB_FLOW, VolcanoInformerFactory
from jobflow_controller.kube.resources import EVENTS

#: Events indexed by the object they are about: "<namespace>/<kind>/<name>".
BY_INVOLVED_OBJECT = "byInvolvedObject"


def involved_object_index_func(obj: Any) -> list[str]:
    involved = obj.get("involvedObject") if isinstance(obj, Mapping) else None
    if not isinstance(involved, Mapping) or not involved.get("name"):
        return []
    namespace = involved.get("namespace") or meta.namespace(obj)
    return [f"{namespace}/{involved.get('kind') or ''}/{involved['name']}"]


class ChangeLog:
    """A version number that grows with every change, and the version at which each key last
    changed; readers remember the version they have shown and ask what changed since."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._version = 0
        self._changed: dict[str, int] = {}

    @property
    def version(self) -> int:
        with self._cond:
            return self._version

    def touch(self, keys: Iterable[str]) -> None:
        with self._cond:
            self._version += 1
            for key in keys:
                self._changed[key] = self._version
            self._cond.notify_all()

    def wait(self, since: int, timeout: float) -> int:
        """Block until a change after `since` (or `timeout`); the current version."""
        with self._cond:
            self._cond.wait_for(lambda: self._version > since, timeout)
            return self._version

    def changed_since(self, since: int) -> set[str]:
        with self._cond:
            return {k for k, v in self._changed.items() if v > since}


def _unwrap(obj: Any) -> Any:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


class LiveCache:
    """The three informers, over the user's own client, for one namespace or all (None)."""

    def __init__(self, clientset: Clientset, namespace: str | None) -> None:
        self.namespace = namespace
        self.changes = ChangeLog()
        self._factory = VolcanoInformerFactory(clientset, namespace=namespace)
        self.flows: SharedIndexInformer = self._factory.job_flows().informer()
        self.jobs: SharedIndexInformer = self._factory.jobs().informer()
        self.events: SharedIndexInformer = self._factory.informer_for_resource(EVENTS)
        self.events.add_indexers({BY_INVOLVED_OBJECT: involved_object_index_func})
        self._handle(self.flows, lambda obj: [f"{meta.namespace(obj)}/{meta.name(obj)}"])
        self._handle(self.jobs, self._job_owner_keys)
        self._handle(self.events, self._event_keys)

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

    def wait_for_sync(self, stop: threading.Event) -> bool:
        return all(self._factory.wait_for_cache_sync(stop).values())

    def shutdown(self) -> None:
        self._factory.shutdown()

    # -- reads ----------------------------------------------------------------------------------
    def job_flows(self) -> list[Any]:
        return self.flows.get_store().list()

    def job_flow(self, key: str) -> Any | None:
        obj, exists = self.flows.get_store().get_by_key(key)
        return obj if exists else None

    def jobs_of(self, job_flow: Mapping[str, Any]) -> list[Any]:
        """The Jobs the JobFlow controls, by the createdBy label index (the view checks ownership)."""
        value = meta.generate_object_string(meta.namespace(job_flow), meta.name(job_flow))
        found = self.jobs.get_indexer().by_index(BY_CREATED_BY_JOB_FLOW, value)
        if found or len(value) <= 63:
            return [j for j in found if meta.namespace(j) == meta.namespace(job_flow)]
        # Too long for a label value: the controller could not set it; look at the namespace.
        return [j for j in self.jobs.get_store().list() if meta.namespace(j) == meta.namespace(job_flow)]

    def events_about(self, kind: str, namespace: str, name: str) -> list[Any]:
        return self.events.get_indexer().by_index(BY_INVOLVED_OBJECT, f"{namespace}/{kind}/{name}")
