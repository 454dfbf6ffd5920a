"""The Pod informer `dependsOn.probe` uses: Volcano's pods only, indexed by their Job, each kept slim."""

from __future__ import annotations

from concurrent.futures import Executor, Future
from typing import Any

import orjson
import pytest

from jobflow_controller.apis import meta
from jobflow_controller.apis.probe import parse_probe
from jobflow_controller.jobflow.probes import ProbeCache, ProbeGate, ProbeResult
from jobflow_controller.jobflow.probes.judge import _probe_view
from jobflow_controller.kube.informers import (
    POD_JOB_NAME_LABEL,
    POD_LABEL_SELECTOR,
    POD_TASK_SPEC_LABEL,
    VolcanoInformerFactory,
    volcano_job_index_func,
)
from jobflow_controller.kube.resources import PODS, Resource
from workqueue import FakeClock


class _Client:
    def __init__(self, selectors: list[tuple[str, str | None]], resource: Resource) -> None:
        self.selectors, self.resource = selectors, resource

    def lister_watcher(self, label_selector: str | None = None) -> Any:
        self.selectors.append((self.resource.plural, label_selector))
        return None


class _Clientset:
    def __init__(self) -> None:
        self.selectors: list[tuple[str, str | None]] = []

    def resource(self, resource: Resource, namespace: str | None = None) -> _Client:
        return _Client(self.selectors, resource)


def _pod(name: str, job: str, task: str, namespace: str = "ns") -> dict[str, Any]:
    labels = {"volcano.sh/job-name": job, "volcano.sh/task-spec": task}
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels}}


def test_the_pod_informer_lists_and_watches_only_pods_with_volcanos_job_and_task_labels() -> None:
    clientset = _Clientset()
    VolcanoInformerFactory(clientset).pods().informer()  # type: ignore[arg-type]
    assert clientset.selectors == [(PODS.plural, "volcano.sh/job-name,volcano.sh/task-spec")]
    assert POD_LABEL_SELECTOR == "volcano.sh/job-name,volcano.sh/task-spec"


def test_the_pod_lister_finds_a_jobs_pods_by_namespace_and_job_name() -> None:
    pods = VolcanoInformerFactory(_Clientset()).pods()  # type: ignore[arg-type]
    indexer = pods.informer().get_indexer()
    for pod in (
        _pod("a-ps-0", "a", "ps"),
        _pod("a-w-0", "a", "w"),
        _pod("b-ps-0", "b", "ps"),
        _pod("x", "a", "ps", "other"),
    ):
        indexer.add(pod)
    assert sorted(p["metadata"]["name"] for p in pods.lister().job_pods("ns", "a")) == ["a-ps-0", "a-w-0"]


def test_the_pod_informer_is_not_created_until_asked_for() -> None:
    clientset = _Clientset()
    factory = VolcanoInformerFactory(clientset)  # type: ignore[arg-type]
    factory.jobs().informer()
    assert [plural for plural, _ in clientset.selectors] == ["jobs"]


# -- the slim pod: only what probes read (docs/probe.md "Limits") ------------------------------------
def _volcano_pod(**changes: Any) -> dict[str, Any]:
    """A pod as Volcano's job controller makes it and the API server serves it (abridged only in
    the number of containers, env vars and conditions)."""
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "jf-a-ps-0",
            "namespace": "ns",
            "uid": "pod-uid",
            "resourceVersion": "4711",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "annotations": {"scheduling.k8s.io/group-name": "jf-a-x", "volcano.sh/job-version": "0"},
            "labels": {
                "volcano.sh/job-name": "jf-a",
                "volcano.sh/job-namespace": "ns",
                "volcano.sh/queue-name": "default",
                "volcano.sh/task-spec": "ps",
                "volcano.sh/task-index": "0",
                "app": "tenant-label",
            },
            "ownerReferences": [
                {
                    "apiVersion": "batch.volcano.sh/v1alpha1",
                    "kind": "Job",
                    "name": "jf-a",
                    "uid": "job-uid",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [{"manager": "vc-controller-manager", "operation": "Update", "fieldsV1": {}}],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/train:1.0",
                    "env": [{"name": f"VAR_{i}", "value": "x" * 40} for i in range(20)],
                    "resources": {"limits": {"cpu": "4", "memory": "8Gi"}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                }
            ],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
            "schedulerName": "volcano",
            "nodeName": "node-1",
        },
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.7",
            "podIPs": [{"ip": "10.0.0.7"}],
            "hostIP": "192.168.0.10",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0, "image": "x"}],
        },
    }
    for path, value in changes.items():
        section, key = path.split("__")
        pod[section][key] = value
    return pod


def _informer_transform() -> Any:
    return VolcanoInformerFactory(_Clientset()).pods().informer()._transform  # type: ignore[arg-type]


def test_a_cached_pod_keeps_exactly_what_probes_read() -> None:
    served = _volcano_pod()
    cached = _informer_transform()(served)
    assert cached == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "jf-a-ps-0",
            "namespace": "ns",
            "uid": "pod-uid",
            "resourceVersion": "4711",
            "labels": {"volcano.sh/job-name": "jf-a", "volcano.sh/task-spec": "ps"},
            "ownerReferences": served["metadata"]["ownerReferences"],
        },
        "spec": {},  # no hostNetwork
        "status": {"phase": "Running", "podIP": "10.0.0.7"},
    }
    assert len(orjson.dumps(cached)) * 5 < len(orjson.dumps(served))
    assert served["spec"]["containers"]  # the served object is left alone


def test_a_cached_pod_keeps_host_network_and_deletion_timestamp_when_set() -> None:
    served = _volcano_pod(spec__hostNetwork=True, metadata__deletionTimestamp="2026-01-01T00:01:00Z")
    cached = _informer_transform()(served)
    assert cached["spec"] == {"hostNetwork": True}
    assert cached["metadata"]["deletionTimestamp"] == "2026-01-01T00:01:00Z"


def test_other_resources_keep_their_spec() -> None:
    factory = VolcanoInformerFactory(_Clientset())  # type: ignore[arg-type]
    job = {"metadata": {"name": "j", "namespace": "ns"}, "spec": {"tasks": []}}
    assert factory.jobs().informer()._transform(job)["spec"] == {"tasks": []}


POD_VARIANTS = {
    "running": {},
    "pending": {"status__phase": "Pending"},
    "no ip": {"status__podIP": ""},
    "deleting": {"metadata__deletionTimestamp": "2026-01-01T00:01:00Z"},
    "host network": {"spec__hostNetwork": True},
    "link-local": {"status__podIP": "169.254.3.4"},
    "other owner": {"metadata__ownerReferences": [{"kind": "Job", "name": "x", "uid": "other", "controller": True}]},
}


@pytest.mark.parametrize("variant", sorted(POD_VARIANTS))
def test_probe_decisions_on_a_cached_pod_are_those_on_the_served_pod(variant: str) -> None:
    served = _volcano_pod(**POD_VARIANTS[variant])
    cached = _informer_transform()(served)
    assert _decisions(cached) == _decisions(served)


def _decisions(pod: dict[str, Any]) -> tuple[Any, ...]:
    """Everything the probe code decides from one pod: the gate's verdict, what it checked and
    warned about, the judge's change detection, the index, the task filter."""
    calls: list[str] = []
    warnings: list[str] = []

    class Runner:
        def tcp_socket(self, host: str, check: Any, timeout: float) -> ProbeResult:
            calls.append(host)
            return ProbeResult(True)

        http_get = tcp_socket

    class Pods:
        def task_pods(self, namespace: str, job_name: str, task: str) -> list[Any]:
            return [pod] if meta.labels(pod).get(POD_TASK_SPEC_LABEL) == task else []

    class Outlet:
        def react(self, namespace: str, name: str, delay: float = 0.0) -> None:
            return None

        def warn_invalid_probe(self, job_flow: Any, message: str, *args: Any) -> None:
            warnings.append(message % args)

    gate = ProbeGate(
        ProbeCache(FakeClock(), executor=_Inline()),
        Runner(),  # type: ignore[arg-type]
        Pods(),
        Outlet(),
    )
    job = {"metadata": {"name": "jf-a", "namespace": "ns", "uid": "job-uid"}, "spec": {"tasks": [{"name": "ps"}]}}
    job_flow = {"metadata": {"name": "jf", "namespace": "ns", "uid": "jf-uid"}}
    met = gate.target_met(job_flow, "b", parse_probe({"tcpSocketList": [{"taskName": "ps", "port": 1}]}), job)
    return met, calls, warnings, _probe_view(pod), volcano_job_index_func(pod), meta.labels(pod).get(POD_JOB_NAME_LABEL)


class _Inline(Executor):
    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future
