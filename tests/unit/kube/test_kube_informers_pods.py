"""The Pod informer `dependsOn.probe` uses: Volcano's pods only, indexed by their Job."""

from __future__ import annotations

from typing import Any

from jobflow_controller.kube.informers import POD_LABEL_SELECTOR, VolcanoInformerFactory
from jobflow_controller.kube.resources import PODS, Resource


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
