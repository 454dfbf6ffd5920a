"""Retry of failed Jobs (`spec.flows[].retry`, docs/retry.md) against a real API server.

The simulator stands in for Volcano: a task template's `sim.jobflow.volcano.sh/phases` script makes
a Job fail, and `sim.jobflow.volcano.sh/phases-retry-N` is the script of the Job a retry re-creates
as attempt N (`flow.volcano.sh/retry-attempt`), so "fails once, then succeeds" is scriptable.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import EventLog, RunningManager, wait_for
from jobflows import FAST, create_all, events_of, failing_template, flow, job_names, phase_of, template
from prometheus_client import generate_latest

from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis.meta import parse_time
from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ApiStatusError
from jobflow_controller.local.simulator import JobSimulator


@pytest.fixture
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=3)
    yield running
    running.stop()


def entry(clientset: Clientset, namespace: str, job_flow: str, job: str) -> dict[str, Any]:
    status = clientset.job_flows(namespace).get(job_flow).get("status") or {}
    (found,) = [e for e in status.get("jobStatusList") or [] if e["name"] == job]
    return dict(found)


def retry_events(clientset: Clientset, namespace: str, name: str) -> list[str]:
    return sorted(m for t, r, m, _ in events_of(clientset, namespace, name) if (t, r) == ("Normal", "RetryJob"))


def adds_of(log: EventLog, name: str) -> list[dict[str, Any]]:
    return [j for kind, j in log.snapshot() if kind == "ADDED" and j["metadata"]["name"] == name]


def test_a_flow_whose_job_fails_once_succeeds_on_its_retry_and_only_then_its_dependent_starts(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    try:
        create_all(clientset, [failing_template("a", namespace, then=FAST), template("b", namespace)])
        flows = [
            {"name": "a", "retry": {"maxRetries": 2, "backoff": "2s"}},
            {"name": "b", "dependsOn": {"targets": ["a"]}},
        ]
        create_all(clientset, [flow("f", namespace, flows)])
        wait_for(lambda: phase_of(clientset, namespace, "f") == "Succeed", 60, what="f Succeed")

        assert entry(clientset, namespace, "f", "f-a")["restartCount"] == 1
        assert "restartCount" not in entry(clientset, namespace, "f", "f-b")  # 0, omitted as upstream omits it
        # The re-created Job may first be seen before it has a phase: a history without a state (omitted),
        # as upstream records a re-created Job.
        histories = entry(clientset, namespace, "f", "f-a")["runningHistories"]
        assert [h.get("state") for h in histories if h.get("state") in ("Failed", "Retrying", "Completed")] == [
            "Failed",
            "Retrying",
            "Completed",
        ]
        assert retry_events(clientset, namespace, "f") == [
            "Job f-a ended Failed: deleting it to create it again in 2s (retry 1 of 2)"
        ]
        wait_for(lambda: len(adds_of(log, "f-b")) == 1, 10, what="our watch to see f-b")
        first, second = adds_of(log, "f-a")
        assert ATTEMPT_ANNOTATION not in (first["metadata"].get("annotations") or {})
        assert second["metadata"]["annotations"][ATTEMPT_ANNOTATION] == "1"
        # The backoff: the re-created Job is no older than 2 s after the retry was recorded.
        retrying = next(h for h in histories if h.get("state") == "Retrying")
        waited = parse_time(second["metadata"]["creationTimestamp"]) - parse_time(retrying["startTimestamp"])
        assert waited.total_seconds() >= 2
        # b was created only after the re-created a Completed, never after the first a failed.
        events = log.snapshot()
        b_added = next(i for i, (k, j) in enumerate(events) if k == "ADDED" and j["metadata"]["name"] == "f-b")
        a_completed = next(
            i for i, (_, j) in enumerate(events) if j["metadata"]["name"] == "f-a" and vcjob.phase(j) == "Completed"
        )
        assert a_completed < b_added
        assert len(adds_of(log, "f-b")) == 1
        metrics = controller.manager.controllers[0].metrics
        assert metrics.retry_count(namespace) == 1
        assert metrics.failed_count(namespace) == 0
        exposed = generate_latest(controller.manager.registry).decode()
        assert f'volcano_jobflow_job_retry_count{{jobflow_namespace="{namespace}"}} 1.0' in exposed
    finally:
        log.close()


def test_a_flow_exhausting_its_retries_fails_the_job_flow_with_restart_count_max_retries(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    try:
        create_all(clientset, [failing_template("a", namespace), template("b", namespace)])
        flows = [{"name": "a", "retry": {"maxRetries": 2}}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
        create_all(clientset, [flow("f", namespace, flows)])
        wait_for(lambda: phase_of(clientset, namespace, "f") == "Failed", 60, what="f Failed")

        assert entry(clientset, namespace, "f", "f-a")["restartCount"] == 2
        status = clientset.job_flows(namespace).get("f")["status"]
        assert status["failedJobs"] == ["f-a"]
        assert retry_events(clientset, namespace, "f") == [
            # No backoff given: the 1 s floor, doubled for the second retry (retry.py retry_delay).
            "Job f-a ended Failed: deleting it to create it again in 1s (retry 1 of 2)",
            "Job f-a ended Failed: deleting it to create it again in 2s (retry 2 of 2)",
        ]
        # The last attempt's Job stays, Failed, as upstream leaves a failed Job; b never started.
        assert job_names(clientset, namespace) == ["f-a"]
        last = clientset.jobs(namespace).get("f-a")
        assert (vcjob.phase(last), last["metadata"]["annotations"][ATTEMPT_ANNOTATION]) == ("Failed", "2")
        wait_for(lambda: len(adds_of(log, "f-a")) == 3, 10, what="our watch to see three f-a")
        assert adds_of(log, "f-b") == []
        metrics = controller.manager.controllers[0].metrics
        assert (metrics.retry_count(namespace), metrics.failed_count(namespace)) == (2, 1)
    finally:
        log.close()


def test_without_a_retry_policy_a_failed_job_fails_the_job_flow_as_upstream(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [failing_template("a", namespace, then=FAST)])
    create_all(clientset, [flow("f", namespace, [{"name": "a"}])])
    wait_for(lambda: phase_of(clientset, namespace, "f") == "Failed", 60, what="f Failed")
    assert "restartCount" not in entry(clientset, namespace, "f", "f-a")  # 0, omitted
    job = clientset.jobs(namespace).get("f-a")
    assert ATTEMPT_ANNOTATION not in job["metadata"]["annotations"]
    assert vcjob.phase(job) == "Failed"
    assert retry_events(clientset, namespace, "f") == []
    assert controller.manager.controllers[0].metrics.retry_count(namespace) == 0


def test_retries_done_survive_a_controller_restart(
    kubeconfig: Path, simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    try:
        create_all(clientset, [failing_template("a", namespace, then=FAST)])
        create_all(clientset, [flow("f", namespace, [{"name": "a", "retry": {"maxRetries": 1, "backoff": "4s"}}])])
        first = RunningManager(str(kubeconfig), worker_threads=2)
        try:
            wait_for(lambda: retry_events(clientset, namespace, "f"), 30, what="the retry")
        finally:
            first.stop()
        # Stopped inside the backoff: the retry is recorded only in the status (and the old Job
        # deleted, or deleted by the next controller, which reads the retry from the status).
        second = RunningManager(str(kubeconfig), worker_threads=2)
        try:
            wait_for(lambda: phase_of(clientset, namespace, "f") == "Succeed", 60, what="f Succeed")
            assert second.manager.controllers[0].metrics.retry_count(namespace) == 0  # counted by the first
        finally:
            second.stop()
        assert entry(clientset, namespace, "f", "f-a")["restartCount"] == 1
        wait_for(lambda: len(adds_of(log, "f-a")) == 2, 10, what="our watch to see the second f-a")
        assert [j["metadata"]["annotations"].get(ATTEMPT_ANNOTATION) for j in adds_of(log, "f-a")] == [None, "1"]
    finally:
        log.close()


def test_the_crd_keeps_the_retry_field_and_defaults_its_backoff(clientset: Clientset, namespace: str) -> None:
    created = clientset.job_flows(namespace).create(flow("f", namespace, [{"name": "a", "retry": {"maxRetries": 1}}]))
    assert created["spec"]["flows"][0]["retry"] == {"maxRetries": 1, "backoff": "0s"}


def test_the_crd_refuses_a_negative_max_retries(clientset: Clientset, namespace: str) -> None:
    bad = flow("f", namespace, [{"name": "a", "retry": {"maxRetries": -1}}])
    with pytest.raises(ApiStatusError) as refused:
        clientset.job_flows(namespace).create(bad)
    assert "spec.flows[0].retry.maxRetries: Invalid value: -1" in refused.value.message


def test_a_bad_policy_that_slipped_past_admission_gets_a_warning_and_no_retries(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    # No webhook in this namespace: the schema takes a backoff that is no Go duration.
    create_all(clientset, [failing_template("a", namespace, then=FAST)])
    create_all(clientset, [flow("f", namespace, [{"name": "a", "retry": {"maxRetries": 2, "backoff": "soon"}}])])
    wait_for(lambda: phase_of(clientset, namespace, "f") == "Failed", 60, what="f Failed")

    def warnings() -> list[str]:
        return [m for t, r, m, _ in events_of(clientset, namespace, "f") if (t, r) == ("Warning", "InvalidRetryPolicy")]

    assert wait_for(warnings, 10, what="the InvalidRetryPolicy event") == [
        'No retries for these flows: jobflow Flow "a": retry.backoff: invalid duration "soon" '
        '(a Go duration such as "30s", "1m30s")'
    ]
    assert retry_events(clientset, namespace, "f") == []
    assert job_names(clientset, namespace) == ["f-a"]
