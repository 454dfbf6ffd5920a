"""``cron_job_flow_problems``: what the webhook refuses in a CronJobFlow (docs/cron.md, "Admission").

In order, each message naming its field:

1. ``metadata.name``: at most ``MAX_NAME_LENGTH`` (52) characters, CronJob's limit (a run's name
   adds ``-`` and the minutes since the epoch, 8 digits until the year 2160);
2. ``spec.schedule``: ``TZ=``/``CRON_TZ=`` refused (as CronJob's validation does: the zone is
   ``spec.timeZone``), then whatever the controller's parser (``apis.cron_schedule``) says of it;
3. ``spec.timeZone``: a zone this process's IANA database knows;
4. ``spec.concurrencyPolicy``: Allow, Forbid or Replace;
5. ``spec.startingDeadlineSeconds`` and the two history limits: integers, not negative; the
   deadline at most ``MAX_STARTING_DEADLINE_SECONDS`` (one year: more only overflows date
   arithmetic, and behaves as no deadline anyway);
6. ``spec.jobFlowTemplate.spec``: every rule a JobFlow must pass (``job_flow_admission_problems``,
   the same function the JobFlow webhook calls), on the JobFlow a run would be: named
   ``<name>-<minutes>``, in the CronJobFlow's namespace, with the template's annotations. So a name
   with which a run's Job ``<name>-<minutes>-<flow>`` would break the Job name rules is refused
   here, with the JobFlow rule's message.

On UPDATE only a changed ``spec`` is checked (metadata changes always pass), as the JobFlow webhook
ratchets. Pure: reads the object's JSON, never mutates it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from jobflow_controller.apis.cron_schedule import (
    DESCRIPTORS,
    ScheduleError,
    TimeZoneError,
    load_time_zone,
    parse_schedule,
)
from jobflow_controller.apis.cronjobflow import MAX_STARTING_DEADLINE_SECONDS
from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.validation.admission import job_flow_admission_problems

__all__ = [
    "CONCURRENCY_POLICIES",
    "DESCRIPTOR_NAMES",
    "MAX_NAME_LENGTH",
    "MAX_SCHEDULE_LENGTH",
    "MAX_STARTING_DEADLINE_SECONDS",
    "MAX_TIME_ZONE_LENGTH",
    "RUN_SUFFIX_LENGTH",
    "cron_job_flow_problems",
]

#: CronJob's limit on its name: 63 minus the 11 characters of `-<minutes>` a Job's name may add.
MAX_NAME_LENGTH: Final = 52
#: Digits of the minutes since the epoch in a run's name (8 from 1989 until 2160).
RUN_SUFFIX_LENGTH: Final = 9
#: What a run's name is checked as: the largest minute count of 8 digits.
_RUN_MINUTES: Final = "99999999"
#: The bounds the CRD gives the two strings (the CEL rules' cost needs them).
MAX_SCHEDULE_LENGTH: Final = 256
MAX_TIME_ZONE_LENGTH: Final = 64
CONCURRENCY_POLICIES: Final = ("Allow", "Forbid", "Replace")
DESCRIPTOR_NAMES: Final = tuple(DESCRIPTORS)
_LIMITS: Final = ("startingDeadlineSeconds", "successfulJobFlowsHistoryLimit", "failedJobFlowsHistoryLimit")


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, (dict, Mapping)) else {}


def _schedule_problems(spec: Mapping[str, Any]) -> list[str]:
    schedule = spec.get("schedule")
    if not isinstance(schedule, str) or not schedule.strip():
        return ['spec.schedule: required, a cron schedule such as "0 2 * * *" or @daily']
    if "TZ" in schedule:
        quoted = json.dumps(schedule)
        return [f"spec.schedule: cannot use TZ or CRON_TZ in schedule {quoted}, use spec.timeZone instead"]
    try:
        parse_schedule(schedule, None)
    except ScheduleError as err:
        return [f"spec.schedule: invalid schedule {json.dumps(schedule)}: {err}"]
    return []


def _time_zone_problems(spec: Mapping[str, Any]) -> list[str]:
    zone = spec.get("timeZone")
    if zone is None:
        return []
    if not isinstance(zone, str):
        return [f"spec.timeZone: must be a string, got {json.dumps(zone)}"]
    try:
        load_time_zone(zone)
    except TimeZoneError:
        quoted = json.dumps(zone)
        return [f"spec.timeZone: unknown time zone {quoted}: not an IANA time zone name such as Europe/Berlin"]
    return []


def _number(value: int) -> str:
    """A number as a message quotes it: whole up to 20 digits, else by its size."""
    text = str(value)
    return text if len(text) <= 20 else f"a {len(text)}-digit number"


def _value_problems(spec: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    policy = spec.get("concurrencyPolicy")
    if policy is not None and policy not in CONCURRENCY_POLICIES:
        problems.append(
            f"spec.concurrencyPolicy: must be one of {', '.join(CONCURRENCY_POLICIES)}, got {json.dumps(policy)}"
        )
    for key in _LIMITS:
        value = spec.get(key)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            problems.append(f"spec.{key}: must be an integer, got {json.dumps(value)}")
        elif value < 0:
            problems.append(f"spec.{key}: must not be negative, got {_number(value)}")
        elif key == "startingDeadlineSeconds" and value > MAX_STARTING_DEADLINE_SECONDS:
            problems.append(
                f"spec.{key}: must be at most {MAX_STARTING_DEADLINE_SECONDS} (one year), got {_number(value)}"
            )
    return problems


def _template_problems(cron_job_flow: Mapping[str, Any], patch_fields: PatchFields | None) -> list[str]:
    """The JobFlow rules on the JobFlow a run would be, messages prefixed with the template's path."""
    metadata = _mapping(cron_job_flow.get("metadata"))
    name = str(metadata.get("name") or "")
    template = _mapping(_mapping(cron_job_flow.get("spec")).get("jobFlowTemplate"))
    run: dict[str, Any] = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {
            "name": f"{name}-{_RUN_MINUTES}" if name else "",
            "namespace": str(metadata.get("namespace") or ""),
            "annotations": dict(_mapping(_mapping(template.get("metadata")).get("annotations"))),
        },
        "spec": template.get("spec") or {},
    }
    problems = job_flow_admission_problems(run, None, patch_fields)
    shown = [p.replace(f"{name}-{_RUN_MINUTES}", f"{name}-<minutes>") if name else p for p in problems]
    return [f"spec.jobFlowTemplate.spec: {p}" for p in shown]


def cron_job_flow_problems(
    cron_job_flow: Mapping[str, Any],
    old_cron_job_flow: Mapping[str, Any] | None = None,
    patch_fields: PatchFields | None = None,
) -> list[str]:
    """Every problem of a CREATE (``old_cron_job_flow`` None) or of an UPDATE; empty when it may go on."""
    spec = _mapping(cron_job_flow.get("spec"))
    if old_cron_job_flow is not None and spec == _mapping(old_cron_job_flow.get("spec")):
        return []
    problems: list[str] = []
    name = str(_mapping(cron_job_flow.get("metadata")).get("name") or "")
    if old_cron_job_flow is None and len(name) > MAX_NAME_LENGTH:
        quoted = json.dumps(name)
        problems.append(f"metadata.name: must be no more than {MAX_NAME_LENGTH} characters, {quoted} has {len(name)}")
    problems.extend(_schedule_problems(spec))
    problems.extend(_time_zone_problems(spec))
    problems.extend(_value_problems(spec))
    if not isinstance(spec.get("jobFlowTemplate"), (dict, Mapping)):
        problems.append("spec.jobFlowTemplate: required, the JobFlow each run is made from")
    else:
        problems.extend(_template_problems(cron_job_flow, patch_fields))
    return problems
