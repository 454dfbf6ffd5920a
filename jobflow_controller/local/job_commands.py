"""What a Volcano Command does to a Job, as Volcano's job state machine has it; the simulator plays it.

Volcano's job controller runs a Command's action through the state of the Job's current phase
(``pkg/controllers/job/state``): Pending and Running take ``TerminateJob`` (Terminating, then
Terminated once the pods are gone), ``AbortJob`` (Aborting, then Aborted), ``CompleteJob``
(Completing, then Completed) and the restarts (Restarting, ``retryCount`` + 1); Aborting and Aborted
take ``ResumeJob`` (Restarting, ``retryCount`` + 1). Every other pair changes nothing: a finished
Job stays finished, a Job already Terminating or Completing finishes as it was going to, a
Restarting Job goes on restarting. From Restarting the Job is Failed once ``retryCount`` has reached
``spec.maxRetry``, and otherwise Pending again, after which its pods run once more: here, its phase
script replayed from the start.

Pure functions over phases and scripts: the simulator does the I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from jobflow_controller.apis.command import CommandAction
from jobflow_controller.local.phase_script import Step

#: How long the simulator holds a phase a Command put the Job in (Volcano: until the pods are gone).
COMMAND_STEP_SECONDS: Final = 0.2
#: ``spec.maxRetry`` when the Job has none (the CRD's default).
DEFAULT_MAX_RETRY: Final = 3

#: Phases whose state takes the kill actions; "" is a Job Volcano has not seen yet (Pending to it).
_ACTIVE: Final = frozenset({"", "Pending", "Running"})
#: The end of each phase a kill action starts (Volcano's killJob finishing).
ENDS_IN: Final[Mapping[str, str]] = {"Terminating": "Terminated", "Aborting": "Aborted", "Completing": "Completed"}
_KILLS: Final[Mapping[str, str]] = {
    CommandAction.TERMINATE_JOB: "Terminating",
    CommandAction.ABORT_JOB: "Aborting",
    CommandAction.COMPLETE_JOB: "Completing",
}
_RESTARTS: Final = frozenset(
    {
        CommandAction.RESTART_JOB,
        CommandAction.RESTART_TASK,
        CommandAction.RESTART_POD,
        CommandAction.RESTART_PARTITION,
    }
)


def max_retry(job: Mapping[str, Any]) -> int:
    value = (job.get("spec") or {}).get("maxRetry")
    return value if isinstance(value, int) and not isinstance(value, bool) else DEFAULT_MAX_RETRY


def command_steps(phase: str, action: str, retry_count: int, retry_limit: int, script: list[Step]) -> list[Step] | None:
    """The steps a Job in ``phase`` follows after a Command ``action``, the first one at once; None: no change.

    ``retry_count`` is the Job's ``status.retryCount`` before the action, ``retry_limit`` its
    ``spec.maxRetry``, ``script`` its phase script (replayed after a restart).
    """
    if phase in _ACTIVE:
        if action in _KILLS:
            killing = _KILLS[action]
            return [Step(killing, COMMAND_STEP_SECONDS), Step(ENDS_IN[killing], 0.0)]
        if action in _RESTARTS:
            return restart_steps(retry_count, retry_limit, script)
        return None
    if phase in ("Aborting", "Aborted") and action == CommandAction.RESUME_JOB:
        return restart_steps(retry_count, retry_limit, script)
    return None


def restart_steps(retry_count: int, retry_limit: int, script: list[Step]) -> list[Step]:
    """Restarting (``retryCount`` + 1), then Failed if that reaches ``retry_limit``, else the script again.

    The replay starts in Pending, as Volcano's Restarting state leaves a Job: the script's own
    Pending step when it starts with one.
    """
    restarting = Step("Restarting", COMMAND_STEP_SECONDS)
    if retry_count + 1 >= retry_limit:
        return [restarting, Step("Failed", 0.0)]
    if script and script[0].phase == "Pending":
        return [restarting, *script]
    return [restarting, Step("Pending", COMMAND_STEP_SECONDS), *script]


def resume_point(phase: str, script: list[Step]) -> tuple[list[Step], int]:
    """Where a (re)started simulator carries on with a Job it finds in ``phase``: the steps, and the next index.

    After that phase in the script when the script has it; a Job a Command left Terminating,
    Aborting or Completing finishes so; otherwise the script from its start.
    """
    index = next((i + 1 for i, step in enumerate(script) if step.phase == phase), 0)
    if index == 0 and phase in ENDS_IN:
        return [Step(phase, COMMAND_STEP_SECONDS), Step(ENDS_IN[phase], 0.0)], 1
    return script, index
