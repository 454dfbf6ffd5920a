"""A trigger's runs (jobflowtrigger/runs.py): a firing under each concurrencyPolicy, the history
limits, a taken name, a status conflict; against a recording fake of the API."""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pytest

from informers.errors import NotFoundError
from jobflow_controller.jobflowtrigger.runs import FireError, TriggerRuns
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
        self.objects: dict[str, dict[str, Any]] = {"triggers": {}, "flows": {}}
        self.calls: list[tuple[Any, ...]] = []
        self.taken = 0
        self.conflicts = 0

    def job_flow_triggers(self, namespace: str) -> FakeClient:
        return FakeClient(self, "triggers")

    def job_flows(self, namespace: str) -> FakeClient:
        return FakeClient(self, "flows")


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


def setup(obj: dict[str, Any], children: list[dict[str, Any]] = ()) -> tuple[TriggerRuns, FakeApi, Recorder]:  # type: ignore[assignment]
    api, recorder = FakeApi(), Recorder()
    api.objects["triggers"]["etl"] = obj
    for c in children:
        api.objects["flows"][c["metadata"]["name"]] = c
    runs = TriggerRuns(api, recorder, lambda t: list(api.objects["flows"].values()))  # type: ignore[arg-type]
    return runs, api, recorder


def active_ref(name: str) -> dict[str, str]:
    return {"name": name, "uid": f"uid-{name}", "kind": "JobFlow"}


def test_a_firing_creates_the_run_and_counts_it() -> None:
    runs, api, recorder = setup(trigger())
    name = runs.fire(NS, "etl", [{"name": "d", "value": "x"}], NOW)
    assert name.startswith("etl-") and len(name) == 9 and name[4:].isalpha() and name[4:].islower()
    status = api.objects["triggers"]["etl"]["status"]
    assert (status["triggeredCount"], status["lastTriggerTime"]) == (1, "2026-12-06T08:00:00Z")
    assert [r["name"] for r in status["active"]] == [name]
    assert api.objects["flows"][name]["spec"]["params"] == [{"name": "d", "value": "x"}]
    assert recorder.events == [("Normal", "Triggered", f"Created jobflow {name} (http)")]


@pytest.mark.parametrize(
    ("policy", "fires", "deleted"),
    [
        ("Allow", True, []),
        ("Forbid", False, []),
        ("Replace", True, [("delete", "etl-old", "Foreground", "uid-etl-old")]),
    ],
)
def test_a_firing_with_a_run_active_follows_the_concurrency_policy(
    policy: str, fires: bool, deleted: list[tuple[Any, ...]]
) -> None:
    obj = trigger(concurrencyPolicy=policy)
    obj["status"] = {"active": [active_ref("etl-old")], "triggeredCount": 4}
    runs, api, _ = setup(obj, [child("etl-old", "Running")])
    if fires:
        runs.fire(NS, "etl", [], NOW)
        assert api.objects["triggers"]["etl"]["status"]["triggeredCount"] == 5
    else:
        with pytest.raises(FireError) as err:
            runs.fire(NS, "etl", [], NOW)
        assert err.value.status == 409 and "etl-old is still running" in str(err.value)
    assert [c for c in api.calls if c[0] == "delete"] == deleted
    assert any(c[0] == "create" for c in api.calls) is fires


def test_a_finished_run_no_longer_blocks_forbid() -> None:
    obj = trigger(concurrencyPolicy="Forbid")
    obj["status"] = {"active": [active_ref("etl-old")]}
    runs, api, _ = setup(obj, [child("etl-old", "Succeed")])
    runs.fire(NS, "etl", [], NOW)
    assert [r["name"] for r in api.objects["triggers"]["etl"]["status"]["active"]] != ["etl-old"]


def test_finished_runs_beyond_the_history_limits_are_deleted_oldest_first() -> None:
    obj = trigger(successfulJobFlowsHistoryLimit=1, failedJobFlowsHistoryLimit=0)
    children = [
        child("etl-a", "Succeed", "2026-12-06T01:00:00Z"),
        child("etl-b", "Succeed", "2026-12-06T02:00:00Z"),
        child("etl-c", "Failed", "2026-12-06T03:00:00Z"),
        child("etl-d", "Running", "2026-12-06T04:00:00Z"),
    ]
    runs, api, _ = setup(obj, children)
    runs.sync(NS, "etl", NOW)
    assert [c[1:] for c in api.calls if c[0] == "delete"] == [
        ("etl-a", "Background", "uid-etl-a"),
        ("etl-c", "Background", "uid-etl-c"),
    ]


def test_a_taken_name_is_retried_with_another_suffix() -> None:
    runs, api, _ = setup(trigger())
    api.taken = 2
    name = runs.fire(NS, "etl", [], NOW)
    assert name in api.objects["flows"]


def test_three_taken_names_fail_the_firing() -> None:
    runs, api, _ = setup(trigger())
    api.taken = 3
    with pytest.raises(FireError, match="no free run name"):
        runs.fire(NS, "etl", [], NOW)


def test_a_status_conflict_counts_from_the_fresh_object() -> None:
    runs, api, _ = setup(trigger())
    api.conflicts = 1
    runs.fire(NS, "etl", [], NOW)
    assert api.objects["triggers"]["etl"]["status"]["triggeredCount"] == 1


def test_a_trigger_that_is_gone_fires_nothing() -> None:
    runs, api, _ = setup(trigger())
    del api.objects["triggers"]["etl"]
    with pytest.raises(FireError) as err:
        runs.fire(NS, "etl", [], NOW)
    assert err.value.status == 404 and api.calls == []
