"""Volcano Commands on a real API server: the simulator takes them as Volcano's job controller does.

A Command (``bus.volcano.sh/v1alpha1``, the CRD installed from hack/local-crds) created through the API
is deleted by the simulator, a Normal ``CommandIssued`` event is recorded on its Job, and the action
runs: ``TerminateJob`` ends a running Job Terminated, ``AbortJob`` Aborted, and ``ResumeJob`` runs an
aborted Job again through Restarting and Pending, one more in ``retryCount``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from e2e_helpers import EventLog, wait_for
from jobflows import SIM

from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis.command import command_issued_message, job_command
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.simulator import JobSimulator

LONG_RUN = "Pending:0.2s,Running:60s,Completed"


def _job(name: str, namespace: str, script: str) -> dict[str, Any]:
    template = {"metadata": {"annotations": {SIM: script}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minAvailable": 1, "tasks": [{"name": "worker", "replicas": 1, "template": template}]},
    }


@pytest.fixture
def job_log(clientset: Clientset, namespace: str) -> Iterator[EventLog]:
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    yield log
    log.close()


def phases_seen(log: EventLog) -> list[str]:
    phases: list[str] = []
    for _, job in log.snapshot():
        phase = vcjob.phase(job)
        if phase and (not phases or phases[-1] != phase):
            phases.append(phase)
    return phases


def running_job(clientset: Clientset, namespace: str, name: str, script: str = LONG_RUN) -> dict[str, Any]:
    clientset.jobs(namespace).create(_job(name, namespace, script))
    return wait_for(  # type: ignore[no-any-return]
        lambda: (job := clientset.jobs(namespace).get(name)) and vcjob.phase(job) == "Running" and job,
        30,
        what=f"{name} to run",
    )


def issue(clientset: Clientset, job: dict[str, Any], action: str) -> str:
    created = clientset.commands(job["metadata"]["namespace"]).create(job_command(job, action))
    return str(created["metadata"]["name"])


def command_events(clientset: Clientset, namespace: str, job: str) -> list[tuple[str, str, str]]:
    return [
        (e["type"], e["reason"], e["message"])
        for e in clientset.events(namespace).list()
        if e["involvedObject"].get("name") == job and e["involvedObject"].get("kind") == "Job"
    ]


def test_terminate_job_ends_a_running_job_terminated_and_the_command_is_deleted(
    simulator: JobSimulator, clientset: Clientset, namespace: str, job_log: EventLog
) -> None:
    job = running_job(clientset, namespace, "train")
    name = issue(clientset, job, "TerminateJob")
    assert name.startswith("train-terminatejob-") and len(name) == len("train-terminatejob-") + 5

    wait_for(lambda: phases_seen(job_log)[-1:] == ["Terminated"], 30, what="train to be Terminated")
    assert phases_seen(job_log) == ["Pending", "Running", "Terminating", "Terminated"]
    wait_for(lambda: clientset.commands(namespace).list() == [], 10, what="the Command to be deleted")
    issued = ("Normal", "CommandIssued", command_issued_message("TerminateJob"))
    wait_for(lambda: issued in command_events(clientset, namespace, "train"), 10, what="the CommandIssued event")
    status = clientset.jobs(namespace).get("train")["status"]
    assert status["runningDuration"].endswith("s") and status["retryCount"] == 0


def test_abort_then_resume_runs_the_job_again_to_the_end_of_its_script(
    simulator: JobSimulator, clientset: Clientset, namespace: str, job_log: EventLog
) -> None:
    job = running_job(clientset, namespace, "etl", script="Pending:0.2s,Running:3s,Completed")
    issue(clientset, job, "AbortJob")
    wait_for(lambda: phases_seen(job_log)[-1:] == ["Aborted"], 30, what="etl to be Aborted")
    issue(clientset, job, "ResumeJob")

    wait_for(lambda: phases_seen(job_log)[-1:] == ["Completed"], 30, what="etl to complete after its resume")
    assert phases_seen(job_log) == [
        "Pending",
        "Running",
        "Aborting",
        "Aborted",
        "Restarting",
        "Pending",
        "Running",
        "Completed",
    ]
    assert clientset.jobs(namespace).get("etl")["status"]["retryCount"] == 1
    assert clientset.commands(namespace).list() == []


def test_a_command_a_finished_job_cannot_take_is_deleted_and_changes_nothing(
    simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    clientset.jobs(namespace).create(_job("done", namespace, "Pending:0.1s,Running:0.1s,Completed"))
    job = wait_for(
        lambda: (j := clientset.jobs(namespace).get("done")) and vcjob.phase(j) == "Completed" and j,
        30,
        what="done to complete",
    )
    issue(clientset, job, "TerminateJob")
    issued = ("Normal", "CommandIssued", command_issued_message("TerminateJob"))
    wait_for(lambda: issued in command_events(clientset, namespace, "done"), 10, what="the CommandIssued event")
    assert clientset.commands(namespace).list() == []
    assert vcjob.phase(clientset.jobs(namespace).get("done")) == "Completed"
