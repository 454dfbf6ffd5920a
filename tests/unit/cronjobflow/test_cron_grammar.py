"""The cron grammar against robfig/cron v3's standard parser, which CronJob uses (issue 42, item 5):
steps bounded by their field, `L`/`LW`/`#` as our documented extension, and the day fields read as
robfig reads them (docs/cron.md, "Differences from Kubernetes' CronJob")."""

from __future__ import annotations

import datetime
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest
from cron_fakes import at

from jobflow_controller.apis.cron_schedule import ScheduleError, five_fields, parse_schedule


def times(schedule: str, start: str, count: int) -> list[datetime.datetime]:
    return list(itertools.islice(parse_schedule(schedule, None).times_after(at(start)), count))


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        (
            "*/99999999999999999999 * * * *",
            "minute field: step 99999999999999999999 is larger than the field's 60 values (0-59);"
            " it would fire only at the start of each range",
        ),
        ("*/" + "9" * 300 + " * * * *", "minute field: step a 300-digit number is larger than the field's 60 values"),
        ("*/61 * * * *", "minute field: step 61 is larger than the field's 60 values (0-59)"),
        ("5-10/90 * * * *", "minute field: step 90 is larger than the field's 60 values (0-59)"),
        ("0 */25 * * *", "hour field: step 25 is larger than the field's 24 values (0-23)"),
        ("0 0 */32 * *", "day-of-month field: step 32 is larger than the field's 31 values (1-31)"),
        ("0 0 1 */13 *", "month field: step 13 is larger than the field's 12 values (1-12)"),
        ("0 0 * * */8", "day-of-week field: step 8 is larger than the field's 7 values (0-6)"),
        ("0 0 L/2 * *", "day-of-month field: L takes no step: L/2"),
        ("0 0 LW/5 * *", "day-of-month field: LW takes no step: LW/5"),
        ("*/0 * * * *", "Bad minute"),  # robfig: "step of range should be a positive number"
    ],
)
def test_a_step_beyond_its_field_is_refused(schedule: str, message: str) -> None:
    with pytest.raises(ScheduleError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_schedule(schedule, None)


@pytest.mark.parametrize("schedule", ["*/60 * * * *", "0 */24 * * *", "0 0 */31 * *", "0 0 1 */12 *", "0 0 * * */7"])
def test_a_step_of_the_whole_field_is_every_that_many_from_the_start(schedule: str) -> None:
    parse_schedule(schedule, None)


def test_the_huge_step_no_longer_fires_hourly() -> None:
    # Before: parsed as minute 0 and fired every hour, with no warning.
    with pytest.raises(ScheduleError):
        times("*/99999999999999999999 * * * *", "2026-12-05T00:00:00", 2)


@pytest.mark.parametrize(
    ("schedule", "start", "expected"),
    [
        ("0 0 L 2 *", "2027-01-01T00:00:00", ["2027-02-28T00:00:00", "2028-02-29T00:00:00"]),
        ("0 0 LW * *", "2026-01-01T00:00:00", ["2026-01-30T00:00:00", "2026-02-27T00:00:00"]),  # Fri, Fri
        ("0 0 * * 5#5", "2026-01-01T00:00:00", ["2026-01-30T00:00:00", "2026-05-29T00:00:00"]),  # fifth Fridays
    ],
)
def test_the_l_w_and_hash_extension_fires_exactly_as_written(schedule: str, start: str, expected: list[str]) -> None:
    assert times(schedule, start, 2) == [at(t) for t in expected]


def test_a_step_in_day_of_month_ors_the_day_fields_as_robfig() -> None:
    # robfig clears `*`'s star bit when a step follows, so day-of-month and day-of-week are OR-ed:
    # odd days, and Mondays. cronsim alone AND-ed them (odd Mondays only).
    assert five_fields("0 0 */2 * 1") == "0 0 1-31/2 * 1"
    assert times("0 0 */2 * 1", "2026-12-01T00:00:00", 4) == [
        at("2026-12-03T00:00:00"),
        at("2026-12-05T00:00:00"),
        at("2026-12-07T00:00:00"),  # a Monday, and odd
        at("2026-12-09T00:00:00"),
    ]
    assert at("2026-12-14T00:00:00") in times("0 0 */2 * 1", "2026-12-01T00:00:00", 10)  # an even Monday


@pytest.mark.parametrize(
    ("schedule", "expression"),
    [
        ("0 0 * * 1/3", "0 0 * * 1-6/3"),  # Monday, Thursday: robfig ends at Saturday, not Sunday (7)
        ("0 0 * * MON/2", "0 0 * * MON-6/2"),
        ("0 0 1,* * 1", "0 0 * * 1"),  # any star term makes the field a star
        ("0 0 */1 * 1", "0 0 * * 1"),
        ("0 0 ? * */2", "0 0 * * 0-6/2"),
        ("*/15 */2 * * *", "*/15 */2 * * *"),  # minute and hour are read alike by both
    ],
)
def test_the_day_fields_are_rewritten_to_robfigs_meaning(schedule: str, expression: str) -> None:
    assert five_fields(schedule) == expression


def test_day_of_week_steps_never_fire_on_a_sunday_robfig_would_not() -> None:
    fired = times("0 0 * * 1/3", "2026-12-06T00:00:00", 6)  # from a Sunday
    assert {t.strftime("%a") for t in fired} == {"Mon", "Thu"}
