"""What a sync takes from a stored CronJobFlow's numbers and times, and the Warnings for bad ones.

The CRD's schema may be the only admission (the default install has no webhook), and a status can be
written by hand, so the controller never trusts `spec.startingDeadlineSeconds` or
`status.lastScheduleTime`: a value the date arithmetic could not represent (a deadline of 10^11 s
is before year 1; a last schedule in year 9999 has no next minute) is replaced by a safe one and
reported with the Warning `InvalidCronJobFlow`, and the sync goes on as for a sane object. Pure.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from typing import Any, Final

from jobflow_controller.apis import cronjobflow as cjf
from jobflow_controller.apis import meta
from jobflow_controller.apis.meta import format_time, parse_time
from jobflow_controller.cronjobflow import events as ev

Obj = Mapping[str, Any]
EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
#: How far ahead of the controller's clock a `status.lastScheduleTime` is still waited for (clock
#: skew between two controllers, as CronJob waits); further ahead it is ignored with a Warning.
MAX_LAST_SCHEDULE_AHEAD_SECONDS: Final = 86_400
#: Digits of a number quoted whole in a message; a longer one is named by its size.
_QUOTED_DIGITS: Final = 20


def _time(value: object) -> datetime.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except (ValueError, OverflowError):
        return None


def _number(value: int) -> str:
    text = str(value)
    return text if len(text) <= _QUOTED_DIGITS else f"a {len(text)}-digit number"


def starting_deadline(cron_job_flow: Obj) -> tuple[int | None, list[ev.Event]]:
    """`spec.startingDeadlineSeconds` as the sync uses it: None when unset, a negative value as 0 (the
    schema refuses it), above `MAX_STARTING_DEADLINE_SECONDS` as that limit with a Warning."""
    deadline = cjf.starting_deadline_seconds(cron_job_flow)
    if deadline is None:
        return None, []
    limit = cjf.MAX_STARTING_DEADLINE_SECONDS
    if deadline > limit:
        message = ev.MESSAGE_DEADLINE_TOO_LARGE % (_number(deadline), limit, limit)
        return limit, [ev.warning(ev.INVALID_CRON_JOB_FLOW, message)]
    return max(0, deadline), []


def last_schedule_time(cron_job_flow: Obj, now: datetime.datetime) -> tuple[datetime.datetime | None, list[ev.Event]]:
    """`status.lastScheduleTime` as the sync uses it: None when unset or unusable. Before 1970, or more
    than `MAX_LAST_SCHEDULE_AHEAD_SECONDS` after `now`, it is ignored with a Warning (the schedule
    then counts from the creation time, and the next run's time replaces it)."""
    text = cjf.last_schedule_time(cron_job_flow)
    parsed = _time(text)
    if parsed is None:
        return None, []
    if parsed < EPOCH:
        why = "before 1970"
    elif (parsed - now).total_seconds() > MAX_LAST_SCHEDULE_AHEAD_SECONDS:
        why = f"more than {MAX_LAST_SCHEDULE_AHEAD_SECONDS} seconds after the controller's clock ({format_time(now)})"
    else:
        return parsed, []
    message = ev.MESSAGE_LAST_SCHEDULE_IGNORED % (json.dumps(text), why)
    return None, [ev.warning(ev.INVALID_CRON_JOB_FLOW, message)]


def earliest_time(cron_job_flow: Obj, now: datetime.datetime) -> datetime.datetime:
    """Where the schedule counts from: the usable `status.lastScheduleTime`, else the CronJobFlow's
    creation (the epoch if that does not parse or is before it)."""
    last, _ = last_schedule_time(cron_job_flow, now)
    if last is not None:
        return last
    created = _time(meta.creation_timestamp(cron_job_flow))
    return created if created is not None and created >= EPOCH else EPOCH
