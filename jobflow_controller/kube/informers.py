"""The informer factory and typed listers for the three Volcano resources.

Shaped like a generated clientset's informers: `factory.job_flows().informer()` and
`.lister().job_flows(ns).get(name)`, so the controllers read like upstream's Go. One informer per
resource is shared by every controller of the process (the factory keys them), every cached
object has `metadata.managedFields` stripped (it is a third of a Job's bytes and nothing reads
it), a cached pod keeps only what probes read, and a namespace index backs the namespaced listers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import orjson

from informers import (
    NAMESPACE_INDEX,
    GenericLister,
    GenericNamespaceLister,
    GroupResource,
    Interner,
    ListerWatcher,
    Selector,
    SharedIndexInformer,
    SharedInformerFactory,
    TransformFunc,
    chain_transforms,
    keep_fields,
    meta_namespace_index_func,
    strip_managed_fields,
)
from jobflow_controller.apis import constants
from jobflow_controller.kube import resources
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.resources import Resource


class _NamespacedLister:
    """A typed lister: `list(selector)` over every namespace, `<plural>(ns)` for one namespace."""

    def __init__(self, informer: SharedIndexInformer, group_resource: GroupResource) -> None:
        self._lister = GenericLister(informer.get_indexer(), group_resource)

    def list(self, selector: Selector | None = None) -> list[Any]:
        return self._lister.list(selector)

    def _namespace(self, namespace: str) -> GenericNamespaceLister:
        return self._lister.by_namespace(namespace)


class JobFlowLister(_NamespacedLister):
    def job_flows(self, namespace: str) -> GenericNamespaceLister:
        return self._namespace(namespace)


class CronJobFlowLister(_NamespacedLister):
    def cron_job_flows(self, namespace: str) -> GenericNamespaceLister:
        return self._namespace(namespace)


class JobFlowTemplateLister(_NamespacedLister):
    def job_flow_templates(self, namespace: str) -> GenericNamespaceLister:
        return self._namespace(namespace)


class JobFlowTriggerLister(_NamespacedLister):
    def job_flow_triggers(self, namespace: str) -> GenericNamespaceLister:
        return self._namespace(namespace)


class JobTemplateLister(_NamespacedLister):
    def job_templates(self, namespace: str) -> GenericNamespaceLister:
        return self._namespace(namespace)


#: The labels Volcano's job controller puts on every pod of a Job (batch/v1alpha1 `JobNameKey`,
#: `TaskSpecKey`). The Pod informer lists and watches only pods that carry both.
POD_JOB_NAME_LABEL = "volcano.sh/job-name"
POD_TASK_SPEC_LABEL = "volcano.sh/task-spec"
POD_LABEL_SELECTOR = f"{POD_JOB_NAME_LABEL},{POD_TASK_SPEC_LABEL}"
#: Pod index by "<namespace>/<Job name>".
BY_VOLCANO_JOB = "byVolcanoJob"
#: All a cached pod keeps: what `dependsOn.probe` reads (jobflow/probes/gate.py, probes/net.py,
#: probes/judge.py) and what the informer needs. A Volcano pod's spec (containers, volumes, env) and
#: most of its status are most of its bytes; none of it is read.
POD_KEPT_FIELDS: tuple[tuple[str, ...], ...] = (
    ("apiVersion",),
    ("kind",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "uid"),
    ("metadata", "resourceVersion"),
    ("metadata", "deletionTimestamp"),
    ("metadata", "ownerReferences"),
    ("metadata", "labels", POD_JOB_NAME_LABEL),
    ("metadata", "labels", POD_TASK_SPEC_LABEL),
    ("spec", "hostNetwork"),
    ("status", "phase"),
    ("status", "podIP"),
)
slim_pod = keep_fields(*POD_KEPT_FIELDS)


def volcano_job_index_func(obj: Any) -> list[str]:
    """Index a pod by "<namespace>/<its Job's name>" (from the `volcano.sh/job-name` label)."""
    metadata = (obj.get("metadata") or {}) if isinstance(obj, Mapping) else {}
    value = (metadata.get("labels") or {}).get(POD_JOB_NAME_LABEL)
    return [f"{metadata.get('namespace') or ''}/{value}"] if value else []


#: Job indexes by the value of the label that says which JobFlow / JobTemplate made the Job.
BY_CREATED_BY_JOB_FLOW = "byCreatedByJobFlow"
BY_CREATED_BY_JOB_TEMPLATE = "byCreatedByJobTemplate"


def label_index_func(key: str) -> Callable[[Any], list[str]]:
    """An index function keyed by one label's value (objects without the label are not indexed)."""

    def index(obj: Any) -> list[str]:
        labels = ((obj.get("metadata") or {}).get("labels") or {}) if isinstance(obj, Mapping) else {}
        value = labels.get(key)
        return [str(value)] if value else []

    return index


class JobLister(_NamespacedLister):
    def __init__(self, informer: SharedIndexInformer, group_resource: GroupResource) -> None:
        super().__init__(informer, group_resource)
        self._indexer = informer.get_indexer()

    def jobs(self, namespace: str) -> GenericNamespaceLister:
        return self._namespace(namespace)

    def by_label_index(self, index_name: str, value: str, namespace: str) -> list[Any]:
        """The Jobs of `namespace` whose indexed label equals `value`, without a namespace scan.

        Upstream lists the namespace with the selector `<label> in (<value>)`; the result is the
        same set, found in O(matches) rather than O(Jobs in the namespace).
        """
        return [
            j
            for j in self._indexer.by_index(index_name, value)
            if (j.get("metadata") or {}).get("namespace") == namespace
        ]


class PodLister(_NamespacedLister):
    """The Volcano pods of the cache (those with the job-name and task-spec labels)."""

    def __init__(self, informer: SharedIndexInformer, group_resource: GroupResource) -> None:
        super().__init__(informer, group_resource)
        self._indexer = informer.get_indexer()

    def pods(self, namespace: str) -> GenericNamespaceLister:
        return self._namespace(namespace)

    def job_pods(self, namespace: str, job_name: str) -> list[Any]:
        """The pods of one Volcano Job, by the `volcano.sh/job-name` index."""
        return list(self._indexer.by_index(BY_VOLCANO_JOB, f"{namespace}/{job_name}"))


class _ResourceInformer:
    def __init__(
        self, factory: VolcanoInformerFactory, resource: Resource, lister_cls: type[_NamespacedLister], kind: str
    ) -> None:
        self._factory = factory
        self._resource = resource
        self._lister_cls = lister_cls
        # Listers name the resource by the lowercase singular kind, as generated listers do:
        # `jobtemplate.flow.volcano.sh "x" not found`.
        self._group_resource = GroupResource(resource.group, kind.lower())

    def informer(self) -> SharedIndexInformer:
        return self._factory.informer_for_resource(self._resource)

    def lister(self) -> Any:
        return self._lister_cls(self.informer(), self._group_resource)


def default_transform() -> TransformFunc:
    """What every cached object goes through: managedFields dropped, then shared parts interned.

    The interner's fingerprint is orjson's encoder, eight times faster than the standard one;
    its output is exact for what orjson and the API server produce (it writes NaN as null, but
    JSON from the API server has no NaN and orjson refuses to decode one).
    """
    return chain_transforms(strip_managed_fields, Interner(fingerprint=orjson.dumps))


class VolcanoInformerFactory:
    """The shared informers of one process, over one Clientset, all namespaces.

    Resync is 0 as upstream's factories have it, unless `custom_resync` gives one resource a period
    of its own (client-go's `WithCustomResyncConfig`): the manager gives JobFlows `--resync-period`
    so that an unfinished JobFlow whose request was dropped is synced again.
    """

    def __init__(
        self,
        clientset: Clientset,
        resync_period: float = 0.0,
        namespace: str | None = None,
        *,
        custom_resync: Mapping[Hashable, float] | None = None,
        wrap_lister_watcher: Callable[[ListerWatcher], ListerWatcher] | None = None,
        transform_objects: bool = True,
    ) -> None:
        """`wrap_lister_watcher`, if given, wraps (or replaces) every informer's ListerWatcher (a shard
        unit's view of the replica's shared informers); `transform_objects=False` caches objects as
        they come, for informers fed from another informer's cache (transformed there already)."""
        self.clientset = clientset
        self.namespace = namespace
        self._wrap_lister_watcher = wrap_lister_watcher
        self._transform_objects = transform_objects
        self._factory = SharedInformerFactory(resync_period, custom_resync=custom_resync)
        self._transform = default_transform()
        # Pods keep only what probes read, then share the one interner with the other resources.
        self._pod_transform = chain_transforms(slim_pod, self._transform)

    def informer_for_resource(self, resource: Resource) -> SharedIndexInformer:
        def new(resync: float) -> SharedIndexInformer:
            # Pods: only Volcano's, so the cache holds the pods of Volcano Jobs and nothing else.
            selector = POD_LABEL_SELECTOR if resource == resources.PODS else None
            lw: ListerWatcher = self.clientset.resource(resource, self.namespace).lister_watcher(
                label_selector=selector
            )
            if self._wrap_lister_watcher is not None:
                lw = self._wrap_lister_watcher(lw)
            indexers: dict[str, Callable[[Any], list[str]]] = {NAMESPACE_INDEX: meta_namespace_index_func}
            if resource == resources.PODS:
                indexers[BY_VOLCANO_JOB] = volcano_job_index_func
            if resource == resources.JOBS:
                indexers[BY_CREATED_BY_JOB_FLOW] = label_index_func(constants.CREATED_BY_JOB_FLOW)
                indexers[BY_CREATED_BY_JOB_TEMPLATE] = label_index_func(constants.CREATED_BY_JOB_TEMPLATE)
            transform: TransformFunc | None = self._pod_transform if resource == resources.PODS else self._transform
            if not self._transform_objects:
                transform = None
            return SharedIndexInformer(lw, resync, indexers=indexers, name=resource.group_resource, transform=transform)

        return self._factory.informer_for(resource, new)

    def job_flows(self) -> _ResourceInformer:
        return _ResourceInformer(self, resources.JOB_FLOWS, JobFlowLister, constants.JOB_FLOW_KIND)

    def job_templates(self) -> _ResourceInformer:
        return _ResourceInformer(self, resources.JOB_TEMPLATES, JobTemplateLister, constants.JOB_TEMPLATE_KIND)

    def cron_job_flows(self) -> _ResourceInformer:
        """Ours (docs/cron.md); created by the CronJobFlow controller only once its CRD is served."""
        return _ResourceInformer(self, resources.CRON_JOB_FLOWS, CronJobFlowLister, constants.CRON_JOB_FLOW_KIND)

    def job_flow_templates(self) -> _ResourceInformer:
        """Ours (docs/templates.md); created by the JobFlow controller only once its CRD is served."""
        return _ResourceInformer(
            self, resources.JOB_FLOW_TEMPLATES, JobFlowTemplateLister, constants.JOB_FLOW_TEMPLATE_KIND
        )

    def job_flow_triggers(self) -> _ResourceInformer:
        """Ours (docs/triggers.md); created by the trigger controller only once its CRD is served."""
        return _ResourceInformer(
            self, resources.JOB_FLOW_TRIGGERS, JobFlowTriggerLister, constants.JOB_FLOW_TRIGGER_KIND
        )

    def jobs(self) -> _ResourceInformer:
        return _ResourceInformer(self, resources.JOBS, JobLister, constants.JOB_KIND)

    def pods(self) -> _ResourceInformer:
        """Volcano's pods only (label selector), each slimmed to `POD_KEPT_FIELDS`; created on first use,
        by `dependsOn.probe` checks."""
        return _ResourceInformer(self, resources.PODS, PodLister, "Pod")

    def start(self, stop: threading.Event) -> None:
        """Start every informer created so far that is not running yet (idempotent, as client-go)."""
        self._factory.start(stop)

    def wait_for_cache_sync(self, stop: threading.Event) -> dict[Any, bool]:
        return self._factory.wait_for_cache_sync(stop)

    def has_synced(self) -> bool:
        return all(informer.has_synced() for informer in self._factory.informers().values())

    def shutdown(self) -> None:
        self._factory.shutdown()
