"""The simulator's phase scripts and the status it writes for each phase, as Volcano would."""

from __future__ import annotations

import datetime

import pytest

from jobflow_controller.local.phase_script import DEFAULT_SCRIPT, ScriptError, Step, job_status, parse_script, script_of
from jobflow_controller.local.simulator import expires_in

NOW = datetime.datetime(2026, 1, 1, 0, 1, 30, tzinfo=datetime.UTC)


def _job(annotation: str | None = None) -> dict:  # type: ignore[type-arg]
    meta = {"annotations": {"sim.jobflow.volcano.sh/phases": annotation}} if annotation else {}
    return {
        "metadata": {"name": "j", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "minAvailable": 3,
            "tasks": [{"name": "a", "replicas": 2, "template": {"metadata": meta}}, {"name": "b", "replicas": 1}],
        },
    }


def test_a_script_is_parsed_into_steps() -> None:
    assert parse_script("Pending:0.5s,Running:2s,Completed") == [
        Step("Pending", 0.5),
        Step("Running", 2.0),
        Step("Completed", 0.0),
    ]


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("", "empty phase script"),
        ("Pending:1s,Running:1s", "must end in one of"),
        ("Pending:1s,Completed:1s", "the last phase 'Completed' takes no duration"),
        ("Pending,Completed", "needs a duration"),
        ("Sleeping:1s,Completed", "'Sleeping' at position 1 is not one of"),
        ("Pending:soon,Completed", "bad duration 'soon' for Pending"),
    ],
)
def test_a_malformed_script_says_what_is_wrong(script: str, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        parse_script(script)


def test_the_script_comes_from_the_first_tasks_pod_template() -> None:
    assert script_of(_job("Running:1s,Failed")) == "Running:1s,Failed"
    assert script_of(_job()) == DEFAULT_SCRIPT


def test_a_retried_job_follows_the_script_for_its_attempt_when_there_is_one() -> None:
    job = _job("Running:1s,Failed")
    job["spec"]["tasks"][0]["template"]["metadata"]["annotations"]["sim.jobflow.volcano.sh/phases-retry-2"] = (
        "Running:1s,Completed"
    )
    assert script_of(job) == "Running:1s,Failed"  # the first Job
    job["metadata"]["annotations"] = {"flow.volcano.sh/retry-attempt": "1"}
    assert script_of(job) == "Running:1s,Failed"  # no script for attempt 1: the task's own
    job["metadata"]["annotations"] = {"flow.volcano.sh/retry-attempt": "2"}
    assert script_of(job) == "Running:1s,Completed"


def test_a_running_job_counts_its_pods_per_task() -> None:
    status = job_status(_job(), "Running", NOW, 0)
    assert status["state"] == {"phase": "Running", "lastTransitionTime": "2026-01-01T00:01:30Z"}
    assert status["taskStatusCount"] == {"a": {"phase": {"Running": 2}}, "b": {"phase": {"Running": 1}}}
    assert (status["running"], status["pending"], status["minAvailable"]) == (3, 0, 3)
    assert "runningDuration" not in status


def test_a_finished_job_records_how_long_it_ran() -> None:
    status = job_status(_job(), "Completed", NOW, 1)
    assert status["runningDuration"] == "1m30s"
    assert (status["succeeded"], status["retryCount"]) == (3, 1)


def test_a_terminated_job_has_no_pods_left() -> None:
    status = job_status(_job(), "Terminated", NOW, 0)
    assert "taskStatusCount" not in status
    assert status["running"] == status["succeeded"] == 0


def _finished(phase: str, ttl: int | None, **metadata: str) -> dict:  # type: ignore[type-arg]
    job = _job()
    job["metadata"].update(metadata)
    if ttl is not None:
        job["spec"]["ttlSecondsAfterFinished"] = ttl
    job["status"] = job_status(job, phase, NOW, 0)
    return job


@pytest.mark.parametrize("phase", ["Completed", "Failed", "Terminated"])
def test_a_finished_job_with_a_ttl_expires_that_long_after_its_last_transition(phase: str) -> None:
    job = _finished(phase, 5)
    assert expires_in(job, NOW) == 5.0
    assert expires_in(job, NOW + datetime.timedelta(seconds=7)) == -2.0


def test_a_ttl_of_zero_expires_at_once() -> None:
    assert expires_in(_finished("Completed", 0), NOW) == 0.0


@pytest.mark.parametrize(
    "job",
    [
        _finished("Completed", None),  # no TTL: kept for ever
        _finished("Running", 5),  # not finished
        _finished("Aborted", 5),  # Volcano's garbage collector does not count Aborted as finished
        _finished("Completed", 5, deletionTimestamp="2026-01-01T00:02:00Z"),  # being deleted already
    ],
)
def test_volcanos_garbage_collector_leaves_these_jobs_alone(job: dict) -> None:  # type: ignore[type-arg]
    assert expires_in(job, NOW) is None
