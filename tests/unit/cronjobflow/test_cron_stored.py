"""Stored values a sync cannot use as written (cronjobflow/stored.py, issue 42 item 4): each is
replaced by a safe one with the Warning `InvalidCronJobFlow`, and no exception leaves the decision."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest
from cron_fakes import at, cron_job_flow

from jobflow_controller.apis.cron_schedule import NoScheduleTimeError, parse_schedule
from jobflow_controller.cronjobflow.decide import ScheduleOutcome, decide_schedule
from jobflow_controller.cronjobflow.stored import earliest_time, last_schedule_time, starting_deadline

NOW = at("2026-12-05T00:01:01")


def reasons(decision: Any) -> list[str]:
    return [f"{e.type} {e.reason}" for e in decision.events]


@pytest.mark.parametrize(
    ("stored", "taken", "warned"),
    [
        (None, None, False),
        (-5, 0, False),
        (0, 0, False),
        (31_536_000, 31_536_000, False),
        (31_536_001, 31_536_000, True),
        (10**11, 31_536_000, True),
        (2**63 - 1, 31_536_000, True),
        (10**400, 31_536_000, True),
    ],
)
def test_a_deadline_above_one_year_is_taken_as_one_year_with_a_warning(
    stored: int | None, taken: int | None, warned: bool
) -> None:
    spec = {} if stored is None else {"startingDeadlineSeconds": stored}
    deadline, events = starting_deadline(cron_job_flow(**spec))
    assert deadline == taken
    assert [e.reason for e in events] == (["InvalidCronJobFlow"] if warned else [])


def test_the_deadline_warning_names_the_field_the_limit_and_the_value() -> None:
    (event,) = starting_deadline(cron_job_flow(startingDeadlineSeconds=10**11))[1]
    assert event.message == (
        "spec.startingDeadlineSeconds: 100000000000 is above the limit of 31536000 seconds (one year);"
        " taken as 31536000"
    )
    (huge,) = starting_deadline(cron_job_flow(startingDeadlineSeconds=10**400))[1]
    assert "a 401-digit number" in huge.message


@pytest.mark.parametrize("deadline", [10**11, 2**63 - 1, 10**400])
def test_a_huge_deadline_decides_as_no_deadline_and_creates_the_run(deadline: int) -> None:
    # Issue 42: 10^11 raised OverflowError ("date value out of range") at every sync, 2^63-1 "int too large".
    decision = decide_schedule(cron_job_flow(startingDeadlineSeconds=deadline), [], NOW)
    assert (decision.outcome, decision.scheduled_time) == (ScheduleOutcome.CREATE, at("2026-12-05T00:01:00"))
    assert reasons(decision) == ["Warning InvalidCronJobFlow"]
    assert decision.requeue_after == pytest.approx(59.1)


@pytest.mark.parametrize(
    ("stored", "usable"),
    [
        ("2026-12-05T00:00:00Z", True),
        ("2026-12-06T00:01:01Z", True),  # a day ahead: clock skew, waited for as CronJob does
        ("2026-12-06T00:01:02Z", False),
        ("9999-12-31T23:59:59Z", False),
        ("1969-12-31T23:59:59Z", False),
        ("0001-01-01T00:00:00Z", False),
    ],
)
def test_a_last_schedule_time_before_1970_or_over_a_day_ahead_is_ignored_with_a_warning(
    stored: str, usable: bool
) -> None:
    last, events = last_schedule_time(cron_job_flow(status={"lastScheduleTime": stored}), NOW)
    assert (last is not None) is usable
    assert [e.reason for e in events] == ([] if usable else ["InvalidCronJobFlow"])


def test_an_ignored_last_schedule_time_counts_from_the_creation_time() -> None:
    obj = cron_job_flow(status={"lastScheduleTime": "9999-12-31T23:59:59Z"}, created="2026-12-05T00:00:30Z")
    assert earliest_time(obj, NOW) == at("2026-12-05T00:00:30")
    (event,) = last_schedule_time(obj, NOW)[1]
    assert event.message == (
        'status.lastScheduleTime: "9999-12-31T23:59:59Z" is more than 86400 seconds after the controller\'s'
        " clock (2026-12-05T00:01:01Z); ignored, the schedule counts from the creation time"
    )


@pytest.mark.parametrize("stored", ["9999-12-31T23:59:59Z", "9999-12-31T23:00:00Z", "0001-01-01T00:00:00Z"])
@pytest.mark.parametrize("zone", [None, "America/New_York", "Asia/Tokyo", "Etc/GMT+12", "Pacific/Kiritimati"])
def test_a_last_schedule_time_at_datetimes_limits_never_raises(stored: str, zone: str | None) -> None:
    spec = {} if zone is None else {"timeZone": zone}
    decision = decide_schedule(cron_job_flow(status={"lastScheduleTime": stored}, **spec), [], NOW)
    assert decision.outcome is ScheduleOutcome.CREATE
    assert reasons(decision) == ["Warning InvalidCronJobFlow"]


def test_a_schedule_with_no_time_left_before_the_year_10000_is_invalid_schedule_without_requeue() -> None:
    obj = cron_job_flow(schedule="0 0 * 2 1#5", created="9990-01-01T00:00:00Z")
    decision = decide_schedule(obj, [], at("9990-03-01T00:00:00"))
    assert (decision.outcome, decision.requeue_after) == (ScheduleOutcome.NOTHING, None)
    assert reasons(decision) == ["Warning InvalidSchedule"]
    assert "before the year 10000" in decision.events[0].message


@pytest.mark.parametrize("limit", [10**18, 2**63 - 1, 10**400, -(10**400)])
def test_huge_history_limits_delete_nothing_and_decide_as_usual(limit: int) -> None:
    from cron_fakes import run

    from jobflow_controller.cronjobflow.decide import history_deletes

    obj = cron_job_flow(successfulJobFlowsHistoryLimit=limit, failedJobFlowsHistoryLimit=limit)
    done = [run(f"r{i}", phase="Succeed") for i in range(3)]
    assert len(history_deletes(obj, done)) == (3 if limit < 0 else 0)
    assert decide_schedule(obj, [], NOW).outcome is ScheduleOutcome.CREATE


@pytest.mark.parametrize(
    ("method", "t"),
    [("next", "9999-12-31T23:59:00"), ("latest_at_or_before", "0001-01-01T00:00:00")],
)
@pytest.mark.parametrize("zone", [None, "America/New_York", "Pacific/Kiritimati"])
def test_schedule_arithmetic_past_datetimes_range_is_no_schedule_time(method: str, t: str, zone: str | None) -> None:
    schedule = parse_schedule("30 * * * *", zone)
    with pytest.raises(NoScheduleTimeError):
        getattr(schedule, method)(at(t))
