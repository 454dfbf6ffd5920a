"""Fakes and builders for the CronJobFlow controller's unit tests: a recording client, objects."""

from __future__ import annotations

import copy
import datetime
from dataclasses import dataclass, field
from typing import Any

from informers.errors import NotFoundError
from jobflow_controller.apis.meta import format_time
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError

UTC = datetime.UTC
NS = "default"
CJF_UID = "cjf-uid"


def at(text: str) -> datetime.datetime:
    """A UTC time from "2026-12-05T02:00:30" (seconds optional)."""
    return datetime.datetime.fromisoformat(text).replace(tzinfo=UTC)


def cron_job_flow(
    name: str = "nightly",
    *,
    schedule: str = "* * * * *",
    created: str = "2026-12-05T00:00:00Z",
    uid: str = CJF_UID,
    status: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "CronJobFlow",
        "metadata": {"name": name, "namespace": NS, "uid": uid, "creationTimestamp": created, "resourceVersion": "1"},
        "spec": {
            "schedule": schedule,
            "jobFlowTemplate": {
                "metadata": {"labels": {"team": "data"}, "annotations": {"a": "b"}},
                "spec": {"flows": [{"name": "extract"}]},
            },
            **spec,
        },
        "status": status or {},
    }


def run(
    name: str,
    *,
    phase: str = "Running",
    created: str = "2026-12-05T00:00:00Z",
    owner_uid: str = CJF_UID,
    uid: str | None = None,
    owner_kind: str = "CronJobFlow",
    finished_at: str | None = None,
) -> dict[str, Any]:
    """A JobFlow run, controlled by the CronJobFlow of uid `owner_uid` (None: no owner)."""
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": NS,
        "uid": uid or f"uid-{name}",
        "creationTimestamp": created,
        "resourceVersion": "5",
    }
    if owner_uid:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": owner_kind,
                "name": "nightly",
                "uid": owner_uid,
                "controller": True,
            }
        ]
    status: dict[str, Any] = {"state": {"phase": phase}}
    if finished_at:
        status["finishedAt"] = finished_at
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": metadata,
        "spec": {},
        "status": status,
    }


def ref(job_flow: dict[str, Any]) -> dict[str, Any]:
    md = job_flow["metadata"]
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "name": md["name"],
        "namespace": md["namespace"],
        "resourceVersion": md["resourceVersion"],
        "uid": md["uid"],
    }


@dataclass
class Call:
    verb: str
    resource: str
    name: str
    body: Any = None
    options: dict[str, Any] = field(default_factory=dict)


class FakeServer:
    """Objects by (plural, name), the calls made, and one-shot errors to raise."""

    def __init__(self, created_at: datetime.datetime | None = None) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.calls: list[Call] = []
        self.conflicts: int = 0
        self.create_error: Exception | None = None
        #: The next DELETE fails its uid precondition (409), as when the name was re-created meanwhile.
        self.delete_conflict = False
        self.created_at = created_at or at("2026-12-05T00:00:01")
        self._uid = 0

    def put(self, plural: str, obj: dict[str, Any]) -> None:
        self.objects[(plural, obj["metadata"]["name"])] = copy.deepcopy(obj)

    def verbs(self) -> list[tuple[str, str, str]]:
        return [(c.verb, c.resource, c.name) for c in self.calls]


class FakeResource:
    def __init__(self, server: FakeServer, plural: str) -> None:
        self.server, self.plural = server, plural

    def get(self, name: str) -> dict[str, Any]:
        self.server.calls.append(Call("get", self.plural, name))
        obj = self.server.objects.get((self.plural, name))
        if obj is None:
            raise NotFoundError(f'{self.plural}.flow.volcano.sh "{name}" not found')
        return copy.deepcopy(obj)

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        self.server.calls.append(Call("create", self.plural, name, copy.deepcopy(obj)))
        if self.server.create_error is not None:
            err, self.server.create_error = self.server.create_error, None
            raise err
        if (self.plural, name) in self.server.objects:
            raise AlreadyExistsError(409, "AlreadyExists", f'{self.plural}.flow.volcano.sh "{name}" already exists')
        self.server._uid += 1
        stored = copy.deepcopy(obj)
        stored["metadata"].update(
            uid=f"new-uid-{self.server._uid}",
            resourceVersion="10",
            creationTimestamp=format_time(self.server.created_at),
        )
        self.server.put(self.plural, stored)
        return copy.deepcopy(stored)

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        self.server.calls.append(Call("update_status", self.plural, name, copy.deepcopy(obj)))
        if self.server.conflicts > 0:
            self.server.conflicts -= 1
            raise ConflictError(409, "Conflict", "the object has been modified")
        self.server.put(self.plural, obj)
        return copy.deepcopy(obj)

    def delete(self, name: str, *, propagation_policy: str | None = None, uid: str | None = None) -> None:
        self.server.calls.append(
            Call("delete", self.plural, name, options={"propagation": propagation_policy, "uid": uid})
        )
        if self.server.delete_conflict:
            self.server.delete_conflict = False
            raise ConflictError(409, "Conflict", "Precondition failed: UID in precondition: " + str(uid))
        if self.server.objects.pop((self.plural, name), None) is None:
            raise NotFoundError("not found")


class FakeClientset:
    def __init__(self, server: FakeServer | None = None, *, serves: bool = True) -> None:
        self.server = server or FakeServer()
        self._serves = serves

    def job_flows(self, namespace: str | None = None) -> FakeResource:
        return FakeResource(self.server, "jobflows")

    def cron_job_flows(self, namespace: str | None = None) -> FakeResource:
        return FakeResource(self.server, "cronjobflows")

    def serves(self, resource: Any) -> bool:
        return self._serves


class _NoWatch:
    def __iter__(self) -> Any:
        return iter(())

    def stop(self) -> None:
        pass


class EmptyListerWatcher:
    """Informers are never started in these tests: objects go into their indexers directly."""

    def list(self, options: Any) -> Any:
        raise AssertionError("the informers are not started in unit tests")

    def watch(self, options: Any) -> _NoWatch:
        return _NoWatch()


class FakeResourceWithWatch(FakeResource):
    def lister_watcher(self, label_selector: str | None = None) -> EmptyListerWatcher:
        return EmptyListerWatcher()


def _resource(self: FakeClientset, resource: Any, namespace: str | None = None) -> FakeResourceWithWatch:
    return FakeResourceWithWatch(self.server, resource.plural)


FakeClientset.resource = _resource  # type: ignore[attr-defined]
