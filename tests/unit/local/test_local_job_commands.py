"""What a Volcano Command does to a Job in each phase, as Volcano's job state machine has it.

`command_steps(phase, action, retryCount, maxRetry, script)` is the simulator's copy of
`pkg/controllers/job/state/*.go`: the phases the Job goes through from now on, or None when the
action changes nothing (the Command is still deleted and its event still recorded).
"""

from __future__ import annotations

import pytest

from jobflow_controller.apis.command import CommandAction
from jobflow_controller.local.job_commands import (
    COMMAND_STEP_SECONDS,
    DEFAULT_MAX_RETRY,
    command_steps,
    max_retry,
    restart_steps,
    resume_point,
)
from jobflow_controller.local.phase_script import Step, parse_script

SCRIPT = parse_script("Pending:0.5s,Running:2s,Completed")
D = COMMAND_STEP_SECONDS
ALL_PHASES = [
    "",
    "Pending",
    "Aborting",
    "Aborted",
    "Running",
    "Restarting",
    "Completing",
    "Completed",
    "Terminating",
    "Terminated",
    "Failed",
]


def phases(steps: list[Step] | None) -> list[str] | None:
    return None if steps is None else [s.phase for s in steps]


# (phase, action) -> the phases that follow; every pair not listed changes nothing.
TRANSITIONS: dict[tuple[str, str], list[str]] = {
    **{(p, "TerminateJob"): ["Terminating", "Terminated"] for p in ("", "Pending", "Running")},
    **{(p, "AbortJob"): ["Aborting", "Aborted"] for p in ("", "Pending", "Running")},
    **{(p, "CompleteJob"): ["Completing", "Completed"] for p in ("", "Pending", "Running")},
    **{
        (p, a): ["Restarting", "Pending", "Running", "Completed"]
        for p in ("", "Pending", "Running")
        for a in ("RestartJob", "RestartTask", "RestartPod", "RestartPartition")
    },
    ("Aborting", "ResumeJob"): ["Restarting", "Pending", "Running", "Completed"],
    ("Aborted", "ResumeJob"): ["Restarting", "Pending", "Running", "Completed"],
}


@pytest.mark.parametrize("action", [a.value for a in CommandAction])
@pytest.mark.parametrize("phase", ALL_PHASES)
def test_each_phase_takes_the_actions_volcanos_state_for_it_takes(phase: str, action: str) -> None:
    assert phases(command_steps(phase, action, 0, 3, SCRIPT)) == TRANSITIONS.get((phase, action))


def test_an_unknown_action_changes_nothing() -> None:
    assert command_steps("Running", "Explode", 0, 3, SCRIPT) is None


def test_the_kill_phases_last_a_moment_and_the_end_phase_is_final() -> None:
    assert command_steps("Running", "TerminateJob", 0, 3, SCRIPT) == [Step("Terminating", D), Step("Terminated", 0.0)]


def test_a_resume_replays_the_script_from_pending() -> None:
    assert restart_steps(0, 3, SCRIPT) == [Step("Restarting", D), *SCRIPT]
    running_first = parse_script("Running:1s,Failed")
    assert restart_steps(0, 3, running_first) == [Step("Restarting", D), Step("Pending", D), *running_first]


@pytest.mark.parametrize(
    ("retry_count", "max_retries", "ends_in"),
    [(0, 3, "Completed"), (1, 3, "Completed"), (2, 3, "Failed"), (5, 3, "Failed"), (0, 1, "Failed")],
)
def test_a_restart_that_reaches_max_retry_fails_the_job(retry_count: int, max_retries: int, ends_in: str) -> None:
    # Restarting adds one to retryCount, then fails the Job once retryCount >= maxRetry.
    assert phases(command_steps("Aborted", "ResumeJob", retry_count, max_retries, SCRIPT))[-1] == ends_in  # type: ignore[index]


def test_max_retry_is_the_jobs_or_the_crds_default() -> None:
    assert max_retry({"spec": {"maxRetry": 5}}) == 5
    assert max_retry({"spec": {}}) == DEFAULT_MAX_RETRY == 3


@pytest.mark.parametrize(
    ("phase", "expected", "index"),
    [
        ("Running", SCRIPT, 2),
        ("", SCRIPT, 0),
        ("Terminating", [Step("Terminating", D), Step("Terminated", 0.0)], 1),
        ("Aborting", [Step("Aborting", D), Step("Aborted", 0.0)], 1),
        ("Completing", [Step("Completing", D), Step("Completed", 0.0)], 1),
    ],
)
def test_a_restarted_simulator_finishes_what_a_command_started(phase: str, expected: list[Step], index: int) -> None:
    assert resume_point(phase, SCRIPT) == (expected, index)
