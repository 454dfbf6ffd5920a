"""The simulator's task pods: made only for tasks that ask, as Volcano makes them, reported as a kubelet would.

No kubelet runs locally, so `dependsOn.probe` HTTP and TCP checks need the simulator to create the
pods of a Running Job's task (`sim.jobflow.volcano.sh/pods: "true"` on its pod template) and to
write their status through pods/status: Running on 127.0.0.1. Other Jobs get no pods, as before.
"""

from __future__ import annotations

import datetime
from typing import Any

from jobflow_controller.kube.errors import from_status
from jobflow_controller.local.simulated_pods import PODS_ANNOTATION, pod_status, pod_tasks, task_pods
from jobflow_controller.local.simulator import JobSimulator

NOW = datetime.datetime(2026, 1, 1, 0, 1, 30, tzinfo=datetime.UTC)


def _job(*, pods_for: tuple[str, ...] = ("ps",)) -> dict[str, Any]:
    def task(name: str, replicas: int) -> dict[str, Any]:
        annotations = {PODS_ANNOTATION: "true"} if name in pods_for else {}
        return {
            "name": name,
            "replicas": replicas,
            "template": {
                "metadata": {"annotations": annotations, "labels": {"app": "x"}},
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            },
        }

    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "jf-a", "namespace": "ns", "uid": "job-uid"},
        "spec": {"tasks": [task("ps", 2), task("worker", 1)]},
    }


def test_only_the_tasks_whose_template_asks_get_pods() -> None:
    assert [t["name"] for t in pod_tasks(_job())] == ["ps"]
    assert pod_tasks(_job(pods_for=())) == []


def test_a_tasks_pods_are_named_labelled_and_owned_as_volcano_makes_them() -> None:
    job = _job()
    pods = task_pods(job, pod_tasks(job)[0])
    assert [p["metadata"]["name"] for p in pods] == ["jf-a-ps-0", "jf-a-ps-1"]
    assert pods[1]["metadata"]["labels"] == {
        "app": "x",
        "volcano.sh/job-name": "jf-a",
        "volcano.sh/task-spec": "ps",
        "volcano.sh/job-namespace": "ns",
        "volcano.sh/task-index": "1",
    }
    assert pods[0]["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "jf-a",
            "uid": "job-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert pods[0]["spec"]["containers"] == [{"name": "main", "image": "busybox"}]
    assert pods[0]["spec"]["nodeName"] == "volcano-sim-node"


def test_a_running_jobs_pods_run_on_127_0_0_1() -> None:
    status = pod_status("Running", NOW)
    assert status is not None
    assert (status["phase"], status["podIP"], status["podIPs"]) == ("Running", "127.0.0.1", [{"ip": "127.0.0.1"}])


def test_a_finished_jobs_pods_succeed_or_fail_with_it() -> None:
    assert pod_status("Completed", NOW) == {"phase": "Succeeded", "conditions": [{"type": "Ready", "status": "False"}]}
    assert (pod_status("Failed", NOW) or {})["phase"] == "Failed"
    assert pod_status("Pending", NOW) is None


class _Pods:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.existing: set[str] = set()
        #: The owner uid of each existing pod not made by the Job under test (an earlier Job's).
        self.foreign: dict[str, str] = {}

    def get(self, name: str) -> dict[str, Any]:
        uid = self.foreign.get(name)
        owner = {"uid": uid} if uid is not None else {"uid": "job-uid"}
        return {"metadata": {"name": name, "ownerReferences": [owner]}}

    def delete(self, name: str) -> None:
        self.calls.append(("delete", name, None))
        self.existing.discard(name)
        self.foreign.pop(name, None)

    def create(self, pod: dict[str, Any]) -> dict[str, Any]:
        name = pod["metadata"]["name"]
        self.calls.append(("create", name, None))
        if name in self.existing:
            raise from_status(409, "AlreadyExists", f'pods "{name}" already exists')
        self.existing.add(name)
        return pod

    def patch_status(self, name: str, patch: Any, content_type: str = "application/merge-patch+json") -> dict[str, Any]:
        self.calls.append(("patch_status", name, patch["status"]["phase"]))
        if name not in self.existing:
            raise from_status(404, "NotFound", f'pods "{name}" not found')
        return {}


class _Clientset:
    def __init__(self) -> None:
        self.pod_client = _Pods()

    def pods(self, namespace: str | None = None) -> _Pods:
        return self.pod_client

    def jobs(self, namespace: str | None = None) -> Any:
        return self

    def commands(self, namespace: str | None = None) -> Any:
        return self

    def lister_watcher(self) -> Any:
        return None


def _simulator() -> tuple[JobSimulator, _Pods]:
    clientset = _Clientset()
    return JobSimulator(clientset), clientset.pod_client  # type: ignore[arg-type]


def test_entering_running_creates_the_pods_then_reports_them_running() -> None:
    sim, pods = _simulator()
    sim._sync_pods(_job(), "Running", NOW)
    assert pods.calls == [
        ("create", "jf-a-ps-0", None),
        ("patch_status", "jf-a-ps-0", "Running"),
        ("create", "jf-a-ps-1", None),
        ("patch_status", "jf-a-ps-1", "Running"),
    ]


def test_a_pod_left_by_an_earlier_simulator_is_reported_running_again() -> None:
    sim, pods = _simulator()
    pods.existing.add("jf-a-ps-0")
    sim._sync_pods(_job(), "Running", NOW)
    assert ("patch_status", "jf-a-ps-0", "Running") in pods.calls


def test_a_pod_an_earlier_job_of_the_name_left_is_replaced() -> None:
    sim, pods = _simulator()
    pods.existing.add("jf-a-ps-0")
    pods.foreign["jf-a-ps-0"] = "an-earlier-job"
    sim._sync_pods(_job(), "Running", NOW)
    assert pods.calls[:3] == [
        ("create", "jf-a-ps-0", None),
        ("delete", "jf-a-ps-0", None),
        ("create", "jf-a-ps-0", None),
    ]


def test_finishing_reports_the_pods_succeeded_and_creates_none() -> None:
    sim, pods = _simulator()
    pods.existing.update({"jf-a-ps-0", "jf-a-ps-1"})
    sim._sync_pods(_job(), "Completed", NOW)
    assert pods.calls == [("patch_status", "jf-a-ps-0", "Succeeded"), ("patch_status", "jf-a-ps-1", "Succeeded")]


def test_a_job_whose_tasks_ask_for_no_pods_gets_none() -> None:
    sim, pods = _simulator()
    sim._sync_pods(_job(pods_for=()), "Running", NOW)
    assert pods.calls == []
