"""Volcano's ``bus.volcano.sh/v1alpha1`` Command: how anyone asks Volcano's job controller to act on a Job.

A Command names its Job in ``target`` (an owner reference) and an ``action``; Volcano's job
controller deletes it, records a ``CommandIssued`` event on the Job and runs the action through the
Job's state machine (``pkg/controllers/job/state``). ``vcctl job suspend|resume`` create them, and so
does the JobFlow controller to terminate a Job (``spec.shutdown: Terminate``, deadlines;
docs/lifecycle.md). Pure builders and readers over JSON dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import BATCH_GROUP_VERSION, BUS_GROUP_VERSION, COMMAND_KIND, JOB_KIND
from jobflow_controller.apis.meta import Obj

#: The reason of the Normal event Volcano's job controller records on a Job for each Command it takes.
REASON_COMMAND_ISSUED: Final = "CommandIssued"


class CommandAction(StrEnum):
    """The actions a user's Command may carry (``bus/v1alpha1`` Action; the internal ones left out)."""

    ABORT_JOB = "AbortJob"
    RESTART_JOB = "RestartJob"
    RESTART_TASK = "RestartTask"
    RESTART_POD = "RestartPod"
    RESTART_PARTITION = "RestartPartition"
    TERMINATE_JOB = "TerminateJob"
    COMPLETE_JOB = "CompleteJob"
    RESUME_JOB = "ResumeJob"


def command_issued_message(action: str) -> str:
    """The message of Volcano's ``CommandIssued`` event (``processNextCommand``), word for word."""
    return f"Start to execute command {action}, and clean it up to make sure executed not more than once."


def job_reference(job: Obj) -> dict[str, Any]:
    """The Job as a controlling owner reference: a Command's ``target`` and its owner.

    vcctl's ``metav1.NewControllerRef`` also sets ``blockOwnerDeletion``; left out here, because with
    the OwnerReferencesPermissionEnforcement admission plugin it would need ``update`` on
    ``jobs/finalizers`` beyond ``create`` on ``commands``. It only makes a foreground deletion of the
    Job wait for its Commands, which Volcano deletes at once anyway.
    """
    return {
        "apiVersion": BATCH_GROUP_VERSION,
        "kind": JOB_KIND,
        "name": meta.name(job),
        "uid": meta.uid(job),
        "controller": True,
    }


def job_command(job: Obj, action: str, reason: str = "", message: str = "") -> dict[str, Any]:
    """A Command asking Volcano to run ``action`` on ``job``, named as vcctl names one.

    ``generateName`` ``<job>-<action in lower case>-``: the API server appends five random
    characters (``train-terminatejob-x7k2q``), so two requests never collide. The Job owns it, so a
    Command Volcano never took goes with its Job.
    """
    command: dict[str, Any] = {
        "apiVersion": BUS_GROUP_VERSION,
        "kind": COMMAND_KIND,
        "metadata": {
            "generateName": f"{meta.name(job)}-{action.lower()}-",
            "namespace": meta.namespace(job),
            "ownerReferences": [job_reference(job)],
        },
        "action": action,
        "target": job_reference(job),
    }
    if reason:
        command["reason"] = reason
    if message:
        command["message"] = message
    return command


def command_action(command: Obj) -> str:
    return str(command.get("action") or "")


def targets_a_job(command: Obj) -> bool:
    """Volcano's filter on its Command informer: only Commands whose target is a ``batch.volcano.sh/v1alpha1`` Job."""
    target = command.get("target")
    if not isinstance(target, Mapping):
        return False
    return target.get("apiVersion") == BATCH_GROUP_VERSION and target.get("kind") == JOB_KIND


def target_name(command: Obj) -> str:
    target = command.get("target")
    return str(target.get("name") or "") if isinstance(target, Mapping) else ""
