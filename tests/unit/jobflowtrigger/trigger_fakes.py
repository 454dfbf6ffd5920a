"""Fakes and builders for the trigger controller's unit tests: a recording API, a recorder, objects."""

from __future__ import annotations

import copy
import datetime
from typing import Any

from informers.errors import NotFoundError
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError

NOW = datetime.datetime(2026, 12, 6, 8, 0, tzinfo=datetime.UTC)
NS = "team"
UID = "trigger-uid"


class FakeClient:
    def __init__(self, api: FakeApi, kind: str) -> None:
        self.api, self.kind = api, kind

    def get(self, name: str) -> dict[str, Any]:
        try:
            return copy.deepcopy(self.api.objects[self.kind][name])
        except KeyError:
            raise NotFoundError(f"{name} not found") from None

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        if self.api.refuse is not None:
            raise self.api.refuse
        if name in self.api.objects[self.kind] or self.api.taken > 0:
            self.api.taken -= 1
            raise AlreadyExistsError(409, "AlreadyExists", f"{name} exists")
        created = copy.deepcopy(obj)
        created["metadata"] |= {
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "creationTimestamp": "2026-12-06T08:00:00Z",
        }
        self.api.objects[self.kind][name] = created
        self.api.calls.append(("create", name))
        return copy.deepcopy(created)

    def delete(self, name: str, *, propagation_policy: str | None = None, uid: str | None = None) -> None:
        self.api.calls.append(("delete", name, propagation_policy, uid))
        self.api.objects[self.kind].pop(name, None)

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        if self.api.conflicts > 0:
            self.api.conflicts -= 1
            raise ConflictError(409, "Conflict", "the object has been modified")
        self.api.objects[self.kind][obj["metadata"]["name"]] = copy.deepcopy(obj)
        self.api.calls.append(("status", obj["metadata"]["name"]))
        return obj


class FakeApi:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {"triggers": {}, "flows": {}, "templates": {}}
        self.calls: list[tuple[Any, ...]] = []
        self.taken = 0
        self.conflicts = 0
        #: Raised by every create (the API server refusing or failing the run).
        self.refuse: Exception | None = None

    def job_flow_triggers(self, namespace: str) -> FakeClient:
        return FakeClient(self, "triggers")

    def job_flows(self, namespace: str) -> FakeClient:
        return FakeClient(self, "flows")

    def job_flow_templates(self, namespace: str) -> FakeClient:
        return FakeClient(self, "templates")


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


def trigger(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlowTrigger",
        "metadata": {"name": "etl", "namespace": NS, "uid": UID, "resourceVersion": "1"},
        "spec": {"jobFlowTemplateRef": {"name": "tpl"}, "http": {}, **spec},
        "status": {},
    }


def child(name: str, phase: str, created: str = "2026-12-06T07:00:00Z") -> dict[str, Any]:
    owner = {"kind": "JobFlowTrigger", "name": "etl", "uid": UID, "controller": True}
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "creationTimestamp": created,
            "ownerReferences": [owner],
        },
        "status": {"state": {"phase": phase}},
    }
