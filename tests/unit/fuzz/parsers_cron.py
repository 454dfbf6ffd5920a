"""The CronJobFlow's readers of tenant text and numbers (apis/cron_schedule.py, cronjobflow/), for the
fuzzer (issue 42): the schedule parser, the time zone, and the deadline and time arithmetic of a
sync on whatever a stored CronJobFlow holds. The arithmetic must never raise: a sync reports a bad
value with a Warning and goes on."""

from __future__ import annotations

import contextlib
import datetime
from typing import Any

from registry import Parser

from jobflow_controller.apis import cron_schedule
from jobflow_controller.cronjobflow import decide, stored

NOW = datetime.datetime(2026, 12, 5, 0, 1, 1, tzinfo=datetime.UTC)
METADATA = {"name": "nightly", "namespace": "default", "uid": "u", "creationTimestamp": "2026-12-05T00:00:00Z"}


def _cron(spec: Any, status: Any = None) -> dict[str, Any]:
    return {"metadata": METADATA, "spec": spec, "status": status if status is not None else {}}


def _every_minute(**fields: Any) -> dict[str, Any]:
    return _cron({"schedule": "* * * * *", **fields})


def _deadline_arithmetic(value: Any) -> object:
    """`most_recent_schedule_time` with a deadline of any size from any look-back."""
    schedule = cron_schedule.parse_schedule("* * * * *", None)
    deadline = value if isinstance(value, int) and not isinstance(value, bool) else None
    for earliest in (stored.EPOCH, datetime.datetime(1, 1, 1, tzinfo=datetime.UTC), NOW):
        cron_schedule.most_recent_schedule_time(schedule, NOW, earliest, deadline)
    return None


def _in_zone(text: Any) -> object:
    """A schedule evaluated in any zone, from both ends of datetime's range."""
    try:
        schedule = cron_schedule.parse_schedule("30 * * * *", text if isinstance(text, str) else None)
    except (cron_schedule.ScheduleError, cron_schedule.TimeZoneError):
        return None
    for t in (datetime.datetime(1, 1, 1, tzinfo=datetime.UTC), datetime.datetime.max.replace(tzinfo=datetime.UTC)):
        for ask in (schedule.next, schedule.latest_at_or_before):
            with contextlib.suppress(cron_schedule.NoScheduleTimeError):
                ask(t)
    return None


PARSERS: list[Parser] = [
    Parser(
        "jobflow_controller.apis.cron_schedule.parse_schedule",
        lambda t: cron_schedule.parse_schedule(t, None),
        "text",
        (cron_schedule.ScheduleError,),
    ),
    Parser(
        "jobflow_controller.apis.cron_schedule.five_fields",
        cron_schedule.five_fields,
        "text",
        (cron_schedule.ScheduleError,),
    ),
    Parser(
        "jobflow_controller.apis.cron_schedule.load_time_zone",
        cron_schedule.load_time_zone,
        "text",
        (cron_schedule.TimeZoneError,),
    ),
    Parser("jobflow_controller.apis.cron_schedule.Schedule.next", _in_zone, "text", ()),
    Parser("jobflow_controller.apis.cron_schedule.most_recent_schedule_time", _deadline_arithmetic, "json", ()),
    # A sync's decision never raises, whatever the stored spec, deadline, zone or status holds.
    Parser(
        "jobflow_controller.cronjobflow.decide.decide_schedule",
        lambda v: decide.decide_schedule(_cron(v), [], NOW),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.cronjobflow.stored.starting_deadline",
        lambda v: decide.decide_schedule(_every_minute(startingDeadlineSeconds=v), [], NOW),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.cronjobflow.stored.last_schedule_time",
        lambda t: decide.decide_schedule(_cron({"schedule": "* * * * *"}, {"lastScheduleTime": t}), [], NOW),
        "text",
        (),
    ),
    Parser(
        "jobflow_controller.cronjobflow.decide.decide_schedule[timeZone]",
        lambda t: decide.decide_schedule(_every_minute(timeZone=t), [], NOW),
        "text",
        (),
    ),
    Parser(
        "jobflow_controller.cronjobflow.decide.reconcile_children",
        lambda v: decide.reconcile_children(_cron({}, v), [], NOW),
        "json",
        (),
    ),
    Parser(
        "jobflow_controller.cronjobflow.decide.history_deletes",
        lambda v: decide.history_deletes(
            _every_minute(successfulJobFlowsHistoryLimit=v, failedJobFlowsHistoryLimit=v), []
        ),
        "json",
        (),
    ),
]
