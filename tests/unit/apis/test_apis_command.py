"""A Volcano Command for a Job, as vcctl builds one, and the filter Volcano's job controller applies."""

from __future__ import annotations

from jobflow_controller.apis.command import (
    command_issued_message,
    job_command,
    job_reference,
    target_name,
    targets_a_job,
)

JOB = {"metadata": {"name": "pipe-train", "namespace": "ml", "uid": "u-1"}}


def test_a_terminate_command_targets_and_is_owned_by_its_job() -> None:
    command = job_command(JOB, "TerminateJob")
    reference = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": "pipe-train",
        "uid": "u-1",
        "controller": True,
    }
    assert command == {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"generateName": "pipe-train-terminatejob-", "namespace": "ml", "ownerReferences": [reference]},
        "action": "TerminateJob",
        "target": reference,
    }
    assert job_reference(JOB) == reference


def test_reason_and_message_are_set_only_when_given() -> None:
    command = job_command(JOB, "TerminateJob", reason="DeadlineExceeded", message="past 60s")
    assert (command["reason"], command["message"]) == ("DeadlineExceeded", "past 60s")


def test_only_commands_aimed_at_a_volcano_job_are_taken() -> None:
    assert targets_a_job(job_command(JOB, "AbortJob"))
    assert not targets_a_job({"target": {"apiVersion": "batch/v1", "kind": "Job", "name": "x"}})
    assert not targets_a_job({"target": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue"}})
    assert not targets_a_job({"action": "AbortJob"})
    assert target_name(job_command(JOB, "AbortJob")) == "pipe-train"


def test_the_command_issued_message_is_volcanos() -> None:
    assert command_issued_message("TerminateJob") == (
        "Start to execute command TerminateJob, and clean it up to make sure executed not more than once."
    )
