"""Schedules and time zones (apis/cron_schedule.py): CronJob's parser and time math, on cronsim."""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import itertools

import pytest
from cron_fakes import at
from hypothesis import given, settings
from hypothesis import strategies as st

from jobflow_controller.apis.cron_schedule import (
    MAX_MISSED_TIMES,
    NEXT_SCHEDULE_DELTA,
    ScheduleError,
    TimeZoneError,
    five_fields,
    load_time_zone,
    most_recent_schedule_time,
    next_schedule_delay,
    parse_schedule,
)

BERLIN = "Europe/Berlin"


@pytest.mark.parametrize(
    ("schedule", "expression"),
    [
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * 0"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@hourly", "0 * * * *"),
        ("  */5 * * * *  ", "*/5 * * * *"),
        ("0 0 ? * ?", "0 0 * * *"),  # robfig/cron reads ? as * in the day fields
    ],
)
def test_schedules_cronjob_accepts_become_five_fields(schedule: str, expression: str) -> None:
    assert five_fields(schedule) == expression


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("TZ=Europe/Berlin 0 2 * * *", "CRON_TZ or TZ used in schedule is not supported, set spec.timeZone instead"),
        ("CRON_TZ=UTC 0 2 * * *", "CRON_TZ or TZ used in schedule is not supported, set spec.timeZone instead"),
        ("@every 5m", "unrecognized descriptor: @every 5m"),
        ("@sometimes", "unrecognized descriptor: @sometimes"),
        ("* * * *", "expected exactly 5 fields, found 4: ['*', '*', '*', '*']"),
        ("0 * * * * *", "expected exactly 5 fields, found 6: ['0', '*', '*', '*', '*', '*']"),
        ("", "expected exactly 5 fields, found 0: []"),
        ("60 * * * *", "Bad minute"),
        ("* 24 * * *", "Bad hour"),
        ("59 23 31 2 *", "Bad day-of-month"),  # never fires: CronJob's "invalid schedule"
        ("*/0 * * * *", "Bad minute"),
    ],
)
def test_invalid_schedules_say_why(schedule: str, message: str) -> None:
    with pytest.raises(ScheduleError) as err:
        parse_schedule(schedule, None)
    assert str(err.value) == message


@pytest.mark.parametrize("name", ["Mars/Olympus", "Local", "local", "", " Europe/Berlin", "../etc/passwd", "Europe/"])
def test_unknown_time_zones_are_refused_with_gos_message(name: str) -> None:
    with pytest.raises(TimeZoneError) as err:
        load_time_zone(name)
    assert str(err.value) == f"unknown time zone {name}"


def test_no_time_zone_is_the_controllers_utc() -> None:
    assert load_time_zone(None) is datetime.UTC


def test_next_is_strictly_after() -> None:
    every_minute = parse_schedule("* * * * *", None)
    assert every_minute.next(at("2026-12-05T12:00:00")) == at("2026-12-05T12:01:00")
    assert every_minute.next(at("2026-12-05T12:00:59.9")) == at("2026-12-05T12:01:00")


def test_a_time_zone_moves_the_schedule() -> None:
    berlin = parse_schedule("0 2 * * *", BERLIN)
    assert berlin.next(at("2026-12-04T12:00:00")) == at("2026-12-05T01:00:00")  # CET, UTC+1
    assert berlin.next(at("2026-07-04T12:00:00")) == at("2026-07-05T00:00:00")  # CEST, UTC+2


# --- daylight saving in Europe/Berlin: 2026-03-29 02:00 -> 03:00, 2026-10-25 03:00 -> 02:00 ---------


def test_spring_forward_a_time_in_the_skipped_hour_runs_at_the_first_minute_after_it() -> None:
    nightly = parse_schedule("30 2 * * *", BERLIN)
    assert nightly.next(at("2026-03-28T12:00:00")) == at("2026-03-29T01:00:00")  # 03:00 CEST
    assert nightly.next(at("2026-03-29T01:00:00")) == at("2026-03-30T00:30:00")  # 02:30 CEST


def test_spring_forward_an_hourly_schedule_has_one_run_less() -> None:
    hourly = parse_schedule("30 * * * *", BERLIN)
    runs = [t for t, _ in zip(hourly.times_after(at("2026-03-28T23:45:00")), range(4), strict=False)]
    # 01:30 CET, then 03:30 CEST (02:30 does not exist), 04:30, 05:30.
    assert runs == [
        at("2026-03-29T00:30:00"),
        at("2026-03-29T01:30:00"),
        at("2026-03-29T02:30:00"),
        at("2026-03-29T03:30:00"),
    ]


def test_fall_back_a_fixed_time_in_the_repeated_hour_runs_once() -> None:
    nightly = parse_schedule("30 2 * * *", BERLIN)
    first = nightly.next(at("2026-10-24T12:00:00"))
    assert first == at("2026-10-25T00:30:00")  # 02:30 CEST, the first of the two
    assert nightly.next(first) == at("2026-10-26T01:30:00")  # the next night, 02:30 CET


def test_fall_back_an_hourly_schedule_runs_in_both_repeated_hours() -> None:
    hourly = parse_schedule("30 * * * *", BERLIN)
    runs = [t for t, _ in zip(hourly.times_after(at("2026-10-24T23:45:00")), range(3), strict=False)]
    assert runs == [at("2026-10-25T00:30:00"), at("2026-10-25T01:30:00"), at("2026-10-25T02:30:00")]


def test_every_minute_across_both_changes_is_every_real_minute() -> None:
    minutely = parse_schedule("* * * * *", BERLIN)
    for start in (at("2026-03-29T00:58:00"), at("2026-10-25T00:58:00")):
        runs = [t for t, _ in zip(minutely.times_after(start), range(4), strict=False)]
        assert [(b - a).total_seconds() for a, b in itertools.pairwise(runs)] == [60.0, 60.0, 60.0]


# --- mostRecentScheduleTime and nextScheduleTimeDuration --------------------------------------------


def test_nothing_is_due_before_the_first_time() -> None:
    recent = most_recent_schedule_time(
        parse_schedule("0 * * * *", None), at("2026-12-05T00:59:00"), at("2026-12-05T00:00:00")
    )
    assert (recent.time, recent.missed) == (None, 0)


@pytest.mark.parametrize(
    ("now", "latest", "missed"), [("01:00:00", "01:00", 1), ("01:59:59", "01:00", 1), ("03:30:00", "03:00", 3)]
)
def test_the_latest_unmet_time_and_how_many_passed(now: str, latest: str, missed: int) -> None:
    hourly = parse_schedule("0 * * * *", None)
    recent = most_recent_schedule_time(hourly, at(f"2026-12-05T{now}"), at("2026-12-05T00:00:00"))
    assert (recent.time, recent.missed) == (at(f"2026-12-05T{latest}:00"), missed)


def test_a_deadline_counts_only_the_times_within_it() -> None:
    hourly = parse_schedule("0 * * * *", None)
    recent = most_recent_schedule_time(hourly, at("2026-12-05T05:30:00"), at("2026-12-05T00:00:00"), 3600)
    assert (recent.time, recent.missed) == (at("2026-12-05T05:00:00"), 1)
    recent = most_recent_schedule_time(hourly, at("2026-12-05T05:30:00"), at("2026-12-05T00:00:00"), 60)
    assert (recent.time, recent.missed) == (None, 0)


def test_over_a_hundred_missed_times_are_estimated_and_the_latest_found_backwards() -> None:
    every_minute = parse_schedule("* * * * *", None)
    recent = most_recent_schedule_time(every_minute, at("2026-12-06T00:00:30"), at("2026-12-05T00:00:00"))
    assert recent.missed == 24 * 60  # exact for a regular schedule
    assert recent.missed > MAX_MISSED_TIMES
    assert recent.time == at("2026-12-06T00:00:00")


@settings(max_examples=60, deadline=None)
@given(minutes=st.integers(min_value=0, max_value=MAX_MISSED_TIMES + 40), seconds=st.integers(0, 59))
def test_missed_count_matches_counting_every_minute(minutes: int, seconds: int) -> None:
    """Property: for `* * * * *` the count is the number of whole minutes passed, the latest the last one."""
    start = at("2026-12-05T00:00:00")
    now = start + datetime.timedelta(minutes=minutes, seconds=seconds)
    recent = most_recent_schedule_time(parse_schedule("* * * * *", None), now, start)
    assert recent.missed == minutes
    assert recent.time == (None if minutes == 0 else start + datetime.timedelta(minutes=minutes))


def test_the_requeue_lands_just_after_the_next_time() -> None:
    every_minute = parse_schedule("* * * * *", None)
    delay = next_schedule_delay(every_minute, at("2026-12-05T12:00:30"), at("2026-12-05T12:00:00"))
    assert delay == pytest.approx(30 + NEXT_SCHEDULE_DELTA)


def test_the_requeue_waits_for_an_earliest_time_still_ahead() -> None:
    # lastScheduleTime ahead of the controller's clock (the API server's is ahead): wait past it.
    hourly = parse_schedule("0 * * * *", None)
    delay = next_schedule_delay(hourly, at("2026-12-05T12:00:30"), at("2026-12-05T13:00:00"))
    assert delay == pytest.approx(3600 * 2 - 30 + NEXT_SCHEDULE_DELTA)
