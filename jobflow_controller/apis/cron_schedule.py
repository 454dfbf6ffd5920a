"""Schedules and time zones: CronJob's `formatSchedule`, `cron.ParseStandard` and `utils.go`'s time math.

Parsing and evaluation are cronsim's (docs/cron.md says why that library); what is ours is only what
CronJob's parser (robfig/cron's `ParseStandard`) accepts around it: exactly five fields, the
`@yearly`..`@hourly` descriptors as their five-field equivalents, `?` as `*` in the day fields, and no
`TZ=`/`CRON_TZ=` prefix (CronJob's validation refuses it; the zone is `spec.timeZone`). A schedule is
evaluated in its zone, so daylight-saving changes follow cronsim: a time in the hour skipped in
spring runs at the first minute after the gap, a fixed time in the hour repeated in autumn runs once,
and `* * * * *` or `30 * * * *` run in each real hour.

Everything here is a pure function of its arguments: `now` is always passed in (the controller's
injected clock), never read. The controller, the webhook's validation and the kubectl plugin's next
run all parse through `parse_schedule`, so they agree on what a schedule means.

Stored values are tenant text the controller cannot trust (admission may not have run), so the time
arithmetic never raises anything but `ScheduleError`: a schedule time past datetime's range (year 1
to 9999) or beyond cronsim's 50-year search is `NoScheduleTimeError`, and a deadline longer than the
look-back (`now - earliest`) is never turned into a date (it behaves as none).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

UTC: Final = datetime.UTC
#: robfig/cron's predefined schedules that CronJob documents, as five-field expressions (`@every` is
#: not among them: cronsim has no interval schedules, docs/cron.md).
DESCRIPTORS: Final = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
#: CronJob's limit: more missed times than this gives the `TooManyMissedTimes` Warning.
MAX_MISSED_TIMES: Final = 100
#: CronJob's `nextScheduleDelta`: a requeue lands this long after the schedule time, never before it.
NEXT_SCHEDULE_DELTA: Final = 0.1


class ScheduleError(ValueError):
    """`spec.schedule` does not parse; the message says why."""


class NoScheduleTimeError(ScheduleError):
    """No schedule time where one was asked for: none within cronsim's 50-year search, or the next
    one would be past datetime's range (a `status.lastScheduleTime` near year 1 or 9999)."""


class TimeZoneError(ValueError):
    """`spec.timeZone` names no zone; the message is Go's `unknown time zone <name>`."""


def load_time_zone(name: str | None) -> datetime.tzinfo:
    """`time.LoadLocation`, but `None` (unset) is UTC, the controller's zone, and `Local` is refused
    (CronJob's validation: the zone must be explicit)."""
    if name is None:
        return UTC
    if not isinstance(name, str):
        raise TimeZoneError(f"unknown time zone {str(name)[:64]}")
    if not name or name.lower() == "local" or name != name.strip():
        raise TimeZoneError(f"unknown time zone {name}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise TimeZoneError(f"unknown time zone {name}") from None


def five_fields(schedule: str) -> str:
    """The five-field expression `schedule` stands for, or `ScheduleError`."""
    if not isinstance(schedule, str):
        raise ScheduleError(f"a schedule is a string, not {type(schedule).__name__}")
    if "TZ" in schedule:
        raise ScheduleError("CRON_TZ or TZ used in schedule is not supported, set spec.timeZone instead")
    text = schedule.strip()
    if text.startswith("@"):
        expression = DESCRIPTORS.get(text.lower())
        if expression is None:
            raise ScheduleError(f"unrecognized descriptor: {text}")
        return expression
    fields = text.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: {fields}")
    # robfig/cron reads `?` in the day-of-month and day-of-week fields as `*`.
    fields[2:5:2] = ["*" if f == "?" else f for f in fields[2:5:2]]
    return " ".join(_as_robfig(index, text) for index, text in enumerate(fields))


@dataclass(frozen=True)
class _Bounds:
    name: str
    low: int
    high: int


#: robfig/cron's bounds of the five fields (day-of-week 0-6; cronsim also takes 7 for Sunday).
_FIELDS: Final = (
    _Bounds("minute", 0, 59),
    _Bounds("hour", 0, 23),
    _Bounds("day-of-month", 1, 31),
    _Bounds("month", 1, 12),
    _Bounds("day-of-week", 0, 6),
)
_DAY_OF_MONTH: Final = 2
_DAY_OF_WEEK: Final = 4
#: Digits of a step quoted whole in a message; a longer one is named by its size.
_QUOTED_DIGITS: Final = 20


def _as_robfig(index: int, field: str) -> str:
    """One field, checked and rewritten so cronsim reads it as robfig/cron does.

    A step must be 1 to the field's number of values (`*/60` is every 60 minutes from minute 0, but
    `*/61` or `*/99999999999999999999` would silently fire hourly, as robfig does for any step
    that parses as an int64); `L`/`LW` take no step. In the day fields, a step ends the "any day"
    meaning of `*` (robfig clears its star bit, so day-of-month and day-of-week are then OR-ed, as
    for explicit values) and `N/step` in day-of-week ends at Saturday (6), not at cronsim's 7.
    """
    bounds = _FIELDS[index]
    terms = field.split(",")
    if any(_is_star(term) for term in terms) and index in (_DAY_OF_MONTH, _DAY_OF_WEEK):
        return "*"  # robfig: any star term makes the whole field a star (all values, AND-ed days)
    return ",".join(_term_as_robfig(index, bounds, term) for term in terms)


def _is_star(term: str) -> bool:
    base, slash, step = term.partition("/")
    return base in ("*", "?") and (not slash or step == "1")


def _term_as_robfig(index: int, bounds: _Bounds, term: str) -> str:
    base, slash, step = term.partition("/")
    if not slash:
        return term
    size = bounds.high - bounds.low + 1
    if not step.isascii() or not step.isdigit():
        return term  # cronsim says "Bad <field>"
    short = len(step) <= _QUOTED_DIGITS  # never int() a long text (and 21 digits exceed any field)
    if not short or int(step) > size:
        shown = step if short else f"a {len(step)}-digit number"
        raise ScheduleError(
            f"{bounds.name} field: step {shown} is larger than the field's {size} values"
            f" ({bounds.low}-{bounds.high}); it would fire only at the start of each range"
        )
    if base.upper() in ("L", "LW"):
        raise ScheduleError(f"{bounds.name} field: {base} takes no step: {term}")
    if index in (_DAY_OF_MONTH, _DAY_OF_WEEK) and base in ("*", "?"):
        return f"{bounds.low}-{bounds.high}/{step}"
    if index == _DAY_OF_WEEK and "-" not in base:
        return f"{base}-{bounds.high}/{step}"
    return term


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule in its zone; `next(t)` is robfig/cron's `Schedule.Next`."""

    expression: str
    zone: datetime.tzinfo

    def next(self, t: datetime.datetime) -> datetime.datetime:
        """The first schedule time strictly after `t`, in UTC; `NoScheduleTimeError` if there is none
        within 50 years or within datetime's range."""
        for value in self.times_after(t):
            return value
        raise NoScheduleTimeError(f"no schedule time after {t.isoformat()} within 50 years and before the year 10000")

    def times_after(self, t: datetime.datetime) -> Iterator[datetime.datetime]:
        """Every schedule time strictly after `t`, in UTC, in order; it ends where cronsim's 50-year
        search or datetime's range does."""
        try:
            for value in CronSim(self.expression, t.astimezone(self.zone)):
                yield value.astimezone(UTC)
        except OverflowError:
            return

    def latest_at_or_before(self, t: datetime.datetime) -> datetime.datetime:
        """The last schedule time not after `t`, in UTC; `NoScheduleTimeError` if there is none within
        50 years before it or within datetime's range."""
        try:
            start = (t + datetime.timedelta(seconds=1)).astimezone(self.zone)
            for value in CronSim(self.expression, start, reverse=True):
                candidate = value.astimezone(UTC)
                if candidate <= t:
                    return candidate
        except OverflowError:
            pass
        raise NoScheduleTimeError(f"no schedule time before {t.isoformat()} within 50 years and after the year 1")


def parse_schedule(schedule: str, time_zone: str | None) -> Schedule:
    """`cron.ParseStandard(formatSchedule(cj))`: `TimeZoneError` or `ScheduleError`, or the schedule."""
    zone = load_time_zone(time_zone)
    expression = five_fields(schedule)
    try:
        # Parsing is done on construction; the start time is irrelevant to it.
        CronSim(expression, datetime.datetime(2000, 1, 1, tzinfo=zone))
    except CronSimError as err:
        raise ScheduleError(str(err) or type(err).__name__) from None
    return Schedule(expression, zone)


@dataclass(frozen=True)
class MostRecent:
    """`mostRecentScheduleTime`'s answer: where counting began, the latest unmet time, how many."""

    earliest: datetime.datetime
    time: datetime.datetime | None
    missed: int


def most_recent_schedule_time(
    schedule: Schedule,
    now: datetime.datetime,
    earliest: datetime.datetime,
    starting_deadline_seconds: int | None = None,
) -> MostRecent:
    """The latest schedule time in (`earliest`, `now`] and how many there are.

    `earliest` is `status.lastScheduleTime`, else the CronJobFlow's creation; with a deadline, the
    count starts no earlier than `now - deadline`, as CronJob's. The count is exact up to
    `MAX_MISSED_TIMES + 1`; beyond that it is CronJob's estimate (elapsed time over the interval
    between the first two times) and the latest time is found backwards from `now`, so a controller
    down for years costs no more than a hundred steps. `NoScheduleTimeError` when the times cannot
    be found (past datetime's range, or none within 50 years).
    """
    # A deadline at or beyond the look-back changes nothing: it is compared, never turned into a date
    # (10^11 s before now is before year 1).
    if starting_deadline_seconds is not None and starting_deadline_seconds < (now - earliest).total_seconds():
        earliest = now - datetime.timedelta(seconds=max(0, starting_deadline_seconds))
    times = schedule.times_after(earliest)
    latest: datetime.datetime | None = None
    count = 0
    for t in times:
        if t > now:
            return MostRecent(earliest, latest, count)
        latest, count = t, count + 1
        if count > MAX_MISSED_TIMES:
            break
    first = schedule.next(earliest)
    interval = max(1.0, (schedule.next(first) - first).total_seconds())
    estimate = int((now - first).total_seconds() // interval) + 1
    return MostRecent(earliest, schedule.latest_at_or_before(now), max(count, estimate))


def next_schedule_delay(schedule: Schedule, now: datetime.datetime, earliest: datetime.datetime) -> float:
    """`nextScheduleTimeDuration`: seconds from `now` to just after the next schedule time.

    The next time after `now` (after `earliest` while that is still ahead, a clock running behind
    the API server's), plus `NEXT_SCHEDULE_DELTA` so the sync finds the time passed.
    """
    base = earliest if earliest > now else now
    return (schedule.next(base) - now).total_seconds() + NEXT_SCHEDULE_DELTA
