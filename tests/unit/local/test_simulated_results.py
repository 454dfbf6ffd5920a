"""The simulator's termination messages (docs/results.md): from the task's annotation, on pod 0, per attempt."""

from __future__ import annotations

from typing import Any

from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION
from jobflow_controller.local.simulated_pods import (
    RESULTS_ANNOTATION,
    finished_status,
    pod_tasks,
    task_pods,
)


def job(attempt: int = 0) -> dict[str, Any]:
    annotations = {RESULTS_ANNOTATION: '{"acc": "0.9"}', f"{RESULTS_ANNOTATION}-retry-1": '{"acc": "0.95"}'}
    template = {"metadata": {"annotations": annotations}, "spec": {"containers": [{"name": "main", "image": "b"}]}}
    meta: dict[str, Any] = {"name": "j", "namespace": "ns", "uid": "u", "annotations": {}}
    if attempt:
        meta["annotations"][ATTEMPT_ANNOTATION] = str(attempt)
    return {"metadata": meta, "spec": {"tasks": [{"name": "t", "replicas": 2, "template": template}]}}


def message(j: dict[str, Any], index: int, phase: str = "Succeeded") -> object:
    (task,) = pod_tasks(j)
    pod = task_pods(j, task)[index]
    status = finished_status(j, task, pod, {"phase": phase})
    return status["containerStatuses"][0]["state"]["terminated"].get("message")


def test_a_task_with_results_gets_pods_and_pod_zero_ends_with_the_message() -> None:
    assert message(job(), 0) == '{"acc": "0.9"}'
    assert message(job(), 1) is None
    assert message(job(), 0, "Failed") == '{"acc": "0.9"}'


def test_a_job_created_again_uses_its_attempts_message() -> None:
    assert message(job(attempt=1), 0) == '{"acc": "0.95"}'
    assert message(job(attempt=2), 0) == '{"acc": "0.9"}'


def test_a_running_pod_has_no_container_statuses() -> None:
    j = job()
    (task,) = pod_tasks(j)
    assert finished_status(j, task, task_pods(j, task)[0], {"phase": "Running"}) == {"phase": "Running"}
