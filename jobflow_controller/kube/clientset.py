"""Typed clients for the resources the controllers write, shaped like client-go's clientsets.

`clientset.jobs(ns).create(job)` reads like `vcClient.BatchV1alpha1().Jobs(ns).Create(...)`: one
`ResourceClient` per resource and namespace, all sharing the process's one `RestClient` (and so
its QPS/burst budget).
"""

from __future__ import annotations

from typing import Any

from informers.errors import NotFoundError
from jobflow_controller.kube import resources
from jobflow_controller.kube.listwatch import ResourceListerWatcher
from jobflow_controller.kube.resources import Resource
from jobflow_controller.kube.rest import RestClient

Obj = dict[str, Any]


class ResourceClient:
    """CRUD on one resource in one namespace (or cluster-wide for cluster-scoped resources)."""

    def __init__(self, rest: RestClient, resource: Resource, namespace: str | None) -> None:
        self.rest = rest
        self.resource = resource
        self.namespace = namespace

    def _path(self, name: str | None = None, subresource: str | None = None) -> str:
        return self.resource.path(self.namespace, name, subresource)

    def get(self, name: str) -> Obj:
        result: Obj = self.rest.request("GET", self._path(name))
        return result

    def list(self, label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        query = {"labelSelector": label_selector, "fieldSelector": field_selector}
        body = self.rest.request("GET", self._path(), query={k: v for k, v in query.items() if v is not None})
        return list(body.get("items") or [])

    def create(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        query = {"dryRun": "All"} if dry_run else None
        result: Obj = self.rest.request("POST", self._path(), query=query, body=obj)
        return result

    def update(self, obj: Obj) -> Obj:
        result: Obj = self.rest.request("PUT", self._path(obj["metadata"]["name"]), body=obj)
        return result

    def update_status(self, obj: Obj) -> Obj:
        """A full PUT of the status subresource, carrying the object's resourceVersion (as upstream)."""
        result: Obj = self.rest.request("PUT", self._path(obj["metadata"]["name"], "status"), body=obj)
        return result

    def patch(self, name: str, patch: Any, content_type: str = "application/merge-patch+json") -> Obj:
        result: Obj = self.rest.request("PATCH", self._path(name), body=patch, content_type=content_type)
        return result

    def patch_status(self, name: str, patch: Any, content_type: str = "application/merge-patch+json") -> Obj:
        result: Obj = self.rest.request("PATCH", self._path(name, "status"), body=patch, content_type=content_type)
        return result

    def delete(
        self,
        name: str,
        *,
        propagation_policy: str | None = None,
        uid: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> None:
        """DELETE with optional DeleteOptions: a propagation policy, a uid precondition (the
        server refuses with 409 Conflict if the object of that name has another uid), and a grace
        period (0: at once, for a pod no kubelet will ever confirm gone)."""
        body: dict[str, Any] = {}
        if propagation_policy:
            body["propagationPolicy"] = propagation_policy
        if uid:
            body["preconditions"] = {"uid": uid}
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        self.rest.request("DELETE", self._path(name), body=body or None)

    def lister_watcher(self, label_selector: str | None = None) -> ResourceListerWatcher:
        return ResourceListerWatcher(self.rest, self.resource, self.namespace, label_selector=label_selector)


class Clientset:
    """The kube and volcano clients of upstream's ControllerOption, over one RestClient."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest

    def resource(self, resource: Resource, namespace: str | None = None) -> ResourceClient:
        return ResourceClient(self.rest, resource, namespace)

    def serves(self, resource: Resource) -> bool:
        """Whether the API server serves `resource` now (discovery: its group version lists it).

        False while its CRD is not installed (the group version is unknown, or does not list it).
        """
        try:
            body = self.rest.request("GET", f"/apis/{resource.group_version}" if resource.group else "/api/v1")
        except NotFoundError:
            return False
        listed = body.get("resources") if isinstance(body, dict) else None
        return any(isinstance(r, dict) and r.get("name") == resource.plural for r in listed or [])

    def discover(self, api_version: str, kind: str) -> Resource | None:
        """The resource serving `kind` in `api_version` (discovery), None when the server has none.

        Subresources (`pods/status`) are skipped: only a top-level resource of that kind is watched.
        """
        group, _, version = api_version.rpartition("/")
        try:
            body = self.rest.request("GET", f"/apis/{group}/{version}" if group else f"/api/{version}")
        except NotFoundError:
            return None
        for entry in (body.get("resources") if isinstance(body, dict) else None) or []:
            if isinstance(entry, dict) and entry.get("kind") == kind and "/" not in str(entry.get("name") or "/"):
                return Resource(group, version, str(entry["name"]), kind, namespaced=bool(entry.get("namespaced")))
        return None

    def backlog(self) -> float:
        """Seconds a request made now would wait for the client-side QPS limiter (0: none)."""
        return self.rest.limiter.backlog()

    def job_flows(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.JOB_FLOWS, namespace)

    def job_templates(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.JOB_TEMPLATES, namespace)

    def cron_job_flows(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.CRON_JOB_FLOWS, namespace)

    def job_flow_templates(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.JOB_FLOW_TEMPLATES, namespace)

    def job_flow_triggers(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.JOB_FLOW_TRIGGERS, namespace)

    def jobs(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.JOBS, namespace)

    def commands(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.COMMANDS, namespace)

    def events(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.EVENTS, namespace)

    def leases(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.LEASES, namespace)

    def pods(self, namespace: str | None = None) -> ResourceClient:
        return self.resource(resources.PODS, namespace)
