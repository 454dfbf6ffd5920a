"""Test doubles for the controllers: a clientset that records calls, and objects as upstream's tests build them.

Like upstream's `newFakeController()`, the controller gets real informers whose indexers the test
fills directly; only the API is fake: creates, status updates and deletes are recorded and answered.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from informers import ListOptions, ListResult, WatchEvent
from jobflow_controller.apis import CREATED_BY_JOB_FLOW, CREATED_BY_JOB_TEMPLATE
from jobflow_controller.apis.jobflow import Flow
from jobflow_controller.apis.status import JobFlowStatus
from jobflow_controller.framework import ControllerOption
from jobflow_controller.jobflow import JobFlowController, JobFlowOptions, action
from jobflow_controller.jobflow.policies import choose_policy
from jobflow_controller.jobflow.world import FlowJob, JobCreate
from jobflow_controller.jobtemplate import JobTemplateController
from jobflow_controller.kube.errors import from_status
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.kube.resources import Resource
from jobflow_controller.record import FakeRecorder
from workqueue import FakeClock


class _NoWatch:
    def __iter__(self) -> Iterator[WatchEvent]:
        return iter(())

    def stop(self) -> None:
        return None


class EmptyListerWatcher:
    """Never used to fill caches in these tests (objects go straight into the indexers)."""

    def list(self, options: ListOptions) -> ListResult:
        return ListResult(items=[], resource_version="1")

    def watch(self, options: ListOptions) -> _NoWatch:
        return _NoWatch()


@dataclass
class Action:
    verb: str
    resource: str
    namespace: str | None
    name: str
    body: Any = None


@dataclass
class FakeApi:
    """The server side: stored objects by (plural, ns, name), every request recorded."""

    objects: dict[tuple[str, str | None, str], dict[str, Any]] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=list)
    #: (verb, name) -> the error every such request gets, or a list of errors the next ones get in turn.
    fail: dict[tuple[str, str], Exception | list[Exception]] = field(default_factory=dict)
    _rv: Iterator[int] = field(default_factory=lambda: itertools.count(100))

    def verbs(self, resource: str | None = None) -> list[tuple[str, str]]:
        return [(a.verb, a.name) for a in self.actions if resource is None or a.resource == resource]


class FakeResourceClient:
    def __init__(self, api: FakeApi, resource: Resource, namespace: str | None) -> None:
        self.api, self.resource, self.namespace = api, resource, namespace

    def _record(self, verb: str, name: str, body: Any = None) -> None:
        self.api.actions.append(Action(verb, self.resource.plural, self.namespace, name, copy.deepcopy(body)))
        err = self.api.fail.get((verb, name))
        if isinstance(err, list):
            err = err.pop(0) if err else None
        if err is not None:
            raise err

    def get(self, name: str) -> dict[str, Any]:
        self._record("get", name)
        stored = self.api.objects.get(self._key(name))
        if stored is None:
            raise from_status(404, "NotFound", f'{self.resource.group_resource} "{name}" not found')
        return copy.deepcopy(stored)

    def _key(self, name: str) -> tuple[str, str | None, str]:
        return (self.resource.plural, self.namespace, name)

    def list(self, label_selector: str | None = None, field_selector: str | None = None) -> list[dict[str, Any]]:
        """The namespace's objects; a `metadata.name=NAME` field selector (the one the controller
        uses) selects by name, and is recorded as that name."""
        name = (field_selector or "").removeprefix("metadata.name=")
        self._record("list", name)
        found = [
            copy.deepcopy(o) for (plural, ns, n), o in self.api.objects.items() if (plural, ns) == self._key("")[:2]
        ]
        return [o for o in found if not name or o["metadata"]["name"] == name]

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        self._record("create", name, obj)
        if self._key(name) in self.api.objects:
            raise from_status(409, "AlreadyExists", f'{self.resource.group_resource} "{name}" already exists')
        stored = copy.deepcopy(obj)
        stored["metadata"]["resourceVersion"] = str(next(self.api._rv))
        self.api.objects[self._key(name)] = stored
        return stored

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        self._record("update_status", name, obj)
        current = self.api.objects.get(self._key(name))
        sent_rv = (obj.get("metadata") or {}).get("resourceVersion")
        if current is not None and sent_rv and sent_rv != current["metadata"].get("resourceVersion"):
            # What the API server does with a stale resourceVersion (optimistic concurrency).
            raise from_status(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {self.resource.group_resource} "{name}": the object has been '
                "modified; please apply your changes to the latest version and try again",
            )
        stored = copy.deepcopy(obj)
        stored["metadata"] = {**stored["metadata"], "resourceVersion": str(next(self.api._rv))}
        self.api.objects[self._key(name)] = stored
        return stored

    def delete(self, name: str, *, propagation_policy: str | None = None, uid: str | None = None) -> None:
        self._record("delete", name, {"preconditions": {"uid": uid}} if uid else None)
        stored = self.api.objects.get(self._key(name))
        if stored is not None and uid and stored["metadata"].get("uid") not in (None, "", uid):
            raise from_status(409, "Conflict", f"Precondition failed: UID in precondition: {uid}")
        if self.api.objects.pop(self._key(name), None) is None:
            raise from_status(404, "NotFound", f'{self.resource.group_resource} "{name}" not found')

    def lister_watcher(self, label_selector: str | None = None) -> EmptyListerWatcher:
        return EmptyListerWatcher()


class FakeClientset:
    def __init__(self) -> None:
        self.api = FakeApi()
        #: What `backlog` answers: seconds a request would wait for the client's QPS limiter.
        self.client_backlog = 0.0

    def backlog(self) -> float:
        return self.client_backlog

    def resource(self, resource: Resource, namespace: str | None = None) -> FakeResourceClient:
        return FakeResourceClient(self.api, resource, namespace)

    def job_flows(self, namespace: str | None = None) -> FakeResourceClient:
        from jobflow_controller.kube.resources import JOB_FLOWS

        return self.resource(JOB_FLOWS, namespace)

    def job_templates(self, namespace: str | None = None) -> FakeResourceClient:
        from jobflow_controller.kube.resources import JOB_TEMPLATES

        return self.resource(JOB_TEMPLATES, namespace)

    def jobs(self, namespace: str | None = None) -> FakeResourceClient:
        from jobflow_controller.kube.resources import JOBS

        return self.resource(JOBS, namespace)


def new_fake_controller(
    max_requeue_num: int = 15, clientset: FakeClientset | None = None
) -> tuple[JobFlowController, FakeClientset, FakeRecorder]:
    """A controller on an empty cache; `clientset` is the API it talks to (a new one by default)."""
    clientset = clientset or FakeClientset()
    recorder = FakeRecorder()
    factory = VolcanoInformerFactory(clientset)  # type: ignore[arg-type]
    controller = JobFlowController(
        clientset,  # type: ignore[arg-type]
        factory,
        recorder,
        JobFlowOptions(max_requeue_num=max_requeue_num),
        clock=FakeClock(),
    )
    return controller, clientset, recorder


def new_fake_job_template_controller() -> tuple[JobTemplateController, FakeClientset, FakeRecorder]:
    clientset = FakeClientset()
    recorder = FakeRecorder()
    factory = VolcanoInformerFactory(clientset)  # type: ignore[arg-type]
    controller = JobTemplateController(ControllerOption(clientset, factory, recorder, clock=FakeClock()))  # type: ignore[arg-type]
    return controller, clientset, recorder


# -- objects, as upstream's tests build them ------------------------------------------------------
def job_flow(
    name: str,
    namespace: str = "default",
    flows: list[dict[str, Any]] | None = None,
    retain: str = "retain",
    phase: str = "",
    status: dict[str, Any] | None = None,
    rv: str = "1",
    uid: str = "",
    generation: int = 1,
) -> dict[str, Any]:
    st = dict(status or {})
    if phase:
        st["state"] = {"phase": phase}
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": rv, "uid": uid, "generation": generation},
        "spec": {"flows": flows if flows is not None else [], "jobRetainPolicy": retain},
        "status": st,
    }


def job_template(name: str, namespace: str = "default", spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"},
        "spec": spec if spec is not None else {},
    }


def job(
    name: str,
    namespace: str = "default",
    *,
    flow: str | None = None,
    template: str | None = None,
    phase: str = "",
    created: str | None = None,
    retry_count: int = 0,
    running_duration: str | None = None,
    owner: str | None = None,
    rv: str = "1",
    controller: bool = True,
    owned: bool = True,
    owner_uid: str = "",
) -> dict[str, Any]:
    """A Job as the controller makes it: a Job of `flow` is controlled by it (uid `owner_uid`) unless
    `owned=False` (a Job someone else made with the right labels)."""
    if owner is None and flow is not None and owned:
        owner = flow
    labels: dict[str, str] = {}
    if flow is not None:
        labels[CREATED_BY_JOB_FLOW] = f"{namespace}.{flow}"
    if template is not None:
        labels[CREATED_BY_JOB_TEMPLATE] = f"{namespace}.{template}"
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "resourceVersion": rv,
        "labels": labels,
        "annotations": dict(labels),
    }
    if created:
        metadata["creationTimestamp"] = created
    if owner is not None:
        ref: dict[str, Any] = {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "name": owner,
            "uid": owner_uid,
        }
        if controller:
            ref.update(controller=True, blockOwnerDeletion=True)
        metadata["ownerReferences"] = [ref]
    status: dict[str, Any] = {"retryCount": retry_count}
    if phase:
        status["state"] = {"phase": phase}
    if running_duration:
        status["runningDuration"] = running_duration
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {},
        "status": status,
    }


def strip_history_starts(status: dict[str, Any]) -> dict[str, Any]:
    """Upstream's tests zero RunningHistories[].StartTimestamp before comparing; so do we."""
    out = copy.deepcopy(status)
    for entry in out.get("jobStatusList", []):
        for history in entry.get("runningHistories", []):
            history.pop("startTimestamp", None)
    return out


# -- the sync's steps one at a time, as upstream's tests call them on the controller -------------
def deploy_job(controller: JobFlowController, flow: dict[str, Any]) -> None:
    """`deploy_job` decided from the caches and carried out (its creates and Warnings), nothing else."""
    world = controller.sync.observe(flow)[0]
    err = controller.sync.deploy(flow, action.deploy_job(world, choose_policy(world)))
    if err is not None:
        raise err


def get_all_job_status(controller: JobFlowController, flow: dict[str, Any]) -> JobFlowStatus:
    world = controller.sync.observe(flow)[0]
    return action.get_all_job_status(world, choose_policy(world))


def load_job_template_and_set_job(
    controller: JobFlowController, flow: dict[str, Any], flow_name: str, job_name: str
) -> dict[str, Any]:
    """The Job body `deploy_job` would create for `flow_name`; raises the create's error if it has one."""
    world = controller.sync.observe(flow)[0]
    spec_flow = next((f for f in world.spec.flows if f.name == flow_name), Flow(flow_name, None))
    assert world.job_name(flow_name) == job_name
    step = action.load_job_template_and_set_job(world, FlowJob(spec_flow, job_name))
    assert isinstance(step, JobCreate), step
    if step.error is not None:
        raise step.error
    assert step.body is not None
    return step.body


def delete_all_jobs_created_by_job_flow(controller: JobFlowController, flow: dict[str, Any]) -> None:
    jobs = action.delete_all_jobs_created_by_job_flow(controller.sync.observe(flow)[0])
    controller.sync.delete_all_jobs_created_by_job_flow(flow, jobs)
