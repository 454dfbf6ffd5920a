"""The CronJobFlow controller's event reasons and messages: Kubernetes' CronJob controller's, with
JobFlow in place of Job (docs/cron.md lists them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

NORMAL: Final = "Normal"
WARNING: Final = "Warning"

SUCCESSFUL_CREATE: Final = "SuccessfulCreate"
SAW_COMPLETED_JOB: Final = "SawCompletedJob"
SUCCESSFUL_DELETE: Final = "SuccessfulDelete"
FAILED_DELETE: Final = "FailedDelete"
FAILED_GET: Final = "FailedGet"
MISSING_JOB: Final = "MissingJob"
UNEXPECTED_JOB: Final = "UnexpectedJob"
FAILED_CREATE: Final = "FailedCreate"
INVALID_SCHEDULE: Final = "InvalidSchedule"
UNKNOWN_TIME_ZONE: Final = "UnknownTimeZone"
TOO_MANY_MISSED_TIMES: Final = "TooManyMissedTimes"
MISS_SCHEDULE: Final = "MissSchedule"
JOB_ALREADY_ACTIVE: Final = "JobAlreadyActive"
#: Ours: a stored value the sync cannot use as written (admission may not have run); it goes on with
#: a safe one, the message says which.
INVALID_CRON_JOB_FLOW: Final = "InvalidCronJobFlow"

MESSAGE_CREATED: Final = "Created jobflow %s"
MESSAGE_SAW_COMPLETED: Final = "Saw completed jobflow: %s, condition: %s"
MESSAGE_DELETED: Final = "Deleted jobflow %s"
MESSAGE_FAILED_DELETE: Final = "Deleted jobflow: %s"
MESSAGE_FAILED_GET: Final = "Get jobflow: %s"
MESSAGE_MISSING: Final = "Active jobflow went missing: %s"
MESSAGE_UNEXPECTED: Final = "Saw a jobflow that the controller did not create or forgot: %s"
MESSAGE_FAILED_CREATE: Final = "Error creating jobflow: %s"
MESSAGE_INVALID_SCHEDULE: Final = "invalid schedule: %s : %s"
MESSAGE_UNKNOWN_TIME_ZONE: Final = "invalid timeZone: %s: %s"
MESSAGE_TOO_MANY_MISSED: Final = (
    "too many missed start times: %d. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
)
MESSAGE_MISS_SCHEDULE: Final = "Missed scheduled time to start a jobflow: %s"
MESSAGE_ALREADY_ACTIVE: Final = (
    "Not starting jobflow because prior execution is running and concurrency policy is Forbid"
)

MESSAGE_DEADLINE_TOO_LARGE: Final = (
    "spec.startingDeadlineSeconds: %s is above the limit of %d seconds (one year); taken as %d"
)
MESSAGE_LAST_SCHEDULE_IGNORED: Final = (
    "status.lastScheduleTime: %s is %s; ignored, the schedule counts from the creation time"
)


@dataclass(frozen=True)
class Event:
    """One event to record on the CronJobFlow."""

    type: str
    reason: str
    message: str


def normal(reason: str, message: str) -> Event:
    return Event(NORMAL, reason, message)


def warning(reason: str, message: str) -> Event:
    return Event(WARNING, reason, message)
