"""What a CronJobFlow sync decides, as pure functions (CronJob's `syncCronJob` and `cleanupFinishedJobs`).

`sync.py` reads the caches, calls these in CronJob's order and does what they say:

1. `history_deletes`: the oldest finished runs beyond the two history limits;
2. `reconcile_children`: the runs seen finished leave `status.active` (`SawCompletedJob`),
   `lastSuccessfulTime` follows the latest Succeed run, an unfinished run of ours that is not in
   `status.active` is `UnexpectedJob`, and an active entry with no run in the cache is to be checked
   against the API server (`MissingJob` if it is gone, or if `is_recorded_run` says the JobFlow of
   that name now is another one);
3. `decide_schedule`: whether a run is due now and what stops it (deletion, an unknown zone,
   suspend, an invalid schedule, the deadline, an already processed time, `Forbid`), with the
   requeue delay to the next schedule time.

Nothing here reads a clock, the API or a cache: `now` and every object come in as arguments.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from jobflow_controller.apis import cronjobflow as cjf
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import Phase
from jobflow_controller.apis.cron_schedule import (
    MAX_MISSED_TIMES,
    NoScheduleTimeError,
    Schedule,
    ScheduleError,
    TimeZoneError,
    load_time_zone,
    most_recent_schedule_time,
    next_schedule_delay,
    parse_schedule,
)
from jobflow_controller.apis.meta import format_time, parse_time
from jobflow_controller.cronjobflow import events as ev
from jobflow_controller.cronjobflow import stored

Obj = Mapping[str, Any]
_FINISHED = (Phase.SUCCEED.value, Phase.FAILED.value)


def is_finished(job_flow: Obj) -> bool:
    """CronJob's `IsJobFinished`: the JobFlow's phase is final (`Succeed` or `Failed`)."""
    return jf.phase(job_flow) in _FINISHED


def _time(value: object) -> datetime.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def finished_time(job_flow: Obj) -> datetime.datetime | None:
    """When a finished JobFlow ended: `status.finishedAt` if written (a TTL), else its last Job's
    `endTimestamp`; None when neither is known (the caller uses the time it noticed)."""
    status = jf.status(job_flow)
    stamped = _time(status.get("finishedAt"))
    if stamped is not None:
        return stamped
    ends = [t for t in (_time(e.get("endTimestamp")) for e in jf.job_status_list(job_flow)) if t is not None]
    return max(ends) if ends else None


def _start_key(job_flow: Obj) -> tuple[int, str, str]:
    # CronJob's byJobStartTime: by start (here the creation time; a JobFlow has no start time),
    # those without one last, ties by name.
    created = meta.creation_timestamp(job_flow)
    return (0, created, meta.name(job_flow)) if created else (1, "", meta.name(job_flow))


def history_deletes(cron_job_flow: Obj, children: Sequence[Obj]) -> list[Obj]:
    """`cleanupFinishedJobs`: the oldest Succeed runs beyond `successfulJobFlowsHistoryLimit`, then
    the oldest Failed ones beyond `failedJobFlowsHistoryLimit`, in deletion order."""
    deletes: list[Obj] = []
    for phase, limit in (
        (Phase.SUCCEED.value, cjf.successful_history_limit(cron_job_flow)),
        (Phase.FAILED.value, cjf.failed_history_limit(cron_job_flow)),
    ):
        finished = sorted((c for c in children if jf.phase(c) == phase), key=_start_key)
        deletes.extend(finished[: max(0, len(finished) - limit)])
    return deletes


@dataclass
class Reconciled:
    """The status after looking at the runs, and what to tell or check."""

    active: list[dict[str, Any]]
    last_successful_time: str | None
    events: list[ev.Event] = field(default_factory=list)
    #: Active entries with no run in the cache: to GET, `MissingJob` if they are gone.
    unverified: list[dict[str, Any]] = field(default_factory=list)
    changed: bool = False


def reconcile_children(cron_job_flow: Obj, children: Sequence[Obj], now: datetime.datetime) -> Reconciled:
    """The first loop of `syncCronJob` over the runs controlled by `cron_job_flow`."""
    active = [dict(ref) for ref in cjf.active(cron_job_flow)]
    active_uids = {str(ref.get("uid") or "") for ref in active}
    result = Reconciled(active, cjf.last_successful_time(cron_job_flow))
    last_success = _time(result.last_successful_time)
    seen: set[str] = set()
    for child in children:
        uid, name = meta.uid(child), meta.name(child)
        seen.add(uid)
        found = uid in active_uids
        if not found and not is_finished(child):
            result.events.append(ev.warning(ev.UNEXPECTED_JOB, ev.MESSAGE_UNEXPECTED % name))
            continue
        if not is_finished(child):
            continue
        if found:
            result.active = [ref for ref in result.active if str(ref.get("uid") or "") != uid]
            condition = jf.phase(child)
            result.events.append(ev.normal(ev.SAW_COMPLETED_JOB, ev.MESSAGE_SAW_COMPLETED % (name, condition)))
            result.changed = True
        if jf.phase(child) == Phase.SUCCEED.value:
            ended = finished_time(child)
            if ended is None:
                # Known to have succeeded, but not when: the first time we see it (once, as then
                # the field is set and only a later time replaces it).
                ended = now if last_success is None else None
            if ended is not None and (last_success is None or ended > last_success):
                last_success = ended
                result.last_successful_time = format_time(ended)
                result.changed = True
    result.unverified = [ref for ref in result.active if str(ref.get("uid") or "") not in seen]
    return result


def is_recorded_run(ref: Mapping[str, Any], found: Obj | None, cron_job_flow: Obj) -> bool:
    """Is `found` (a GET of the `status.active` entry `ref`'s name; None when not found) the run `ref`
    recorded: the same uid, and controlled by `cron_job_flow`?

    A name alone says nothing: a run deleted and re-created by someone else under the same name is
    another object. Anything else is as missing (the entry leaves `status.active`, as CronJob's
    controller drops its own Jobs), so `Forbid` is not blocked by it and `Replace` never deletes it.
    An entry without a uid cannot be verified: missing too.
    """
    recorded = str(ref.get("uid") or "")
    if found is None or not recorded:
        return False
    return meta.uid(found) == recorded and meta.is_controlled_by(found, cron_job_flow)


class ScheduleOutcome(Enum):
    """What `decide_schedule` concluded."""

    NOTHING = "nothing"  # no run: stopped for good until the object changes (no requeue)
    WAIT = "wait"  # no run now: sleep until the next schedule time
    CREATE = "create"  # start the run for `scheduled_time` (after the `replace` deletes)


@dataclass
class Decision:
    outcome: ScheduleOutcome
    events: list[ev.Event] = field(default_factory=list)
    scheduled_time: datetime.datetime | None = None
    #: Seconds until the next schedule time (None: no requeue).
    requeue_after: float | None = None
    #: Active runs to delete first (`Replace`).
    replace: list[dict[str, Any]] = field(default_factory=list)
    #: Schedule times that passed without a run, counted once per decision that saw them.
    missed: int = 0
    #: The latest unmet schedule time, which `missed` counts up to (the caller counts each once).
    missed_time: datetime.datetime | None = None


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def rfc1123z(t: datetime.datetime) -> str:
    """Go's `time.RFC1123Z` of `t` in UTC: `Sat, 05 Dec 2026 02:00:00 +0000`."""
    return t.astimezone(datetime.UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


def _stopped_or_schedule(cron_job_flow: Obj) -> Decision | Schedule:
    """What stops a CronJobFlow before any time is computed (deletion, an unknown zone, suspend, a
    schedule that does not parse), as a Decision; else its parsed schedule."""
    if meta.metadata(cron_job_flow).get("deletionTimestamp"):
        return Decision(ScheduleOutcome.NOTHING)
    zone = cjf.time_zone(cron_job_flow)
    try:
        load_time_zone(zone)
    except TimeZoneError as err:
        message = ev.MESSAGE_UNKNOWN_TIME_ZONE % (_quote(zone or ""), err)
        return Decision(ScheduleOutcome.NOTHING, [ev.warning(ev.UNKNOWN_TIME_ZONE, message)])
    if cjf.suspend(cron_job_flow):
        return Decision(ScheduleOutcome.NOTHING)
    try:
        return parse_schedule(cjf.schedule(cron_job_flow), zone)
    except ScheduleError as err:
        message = ev.MESSAGE_INVALID_SCHEDULE % (cjf.schedule(cron_job_flow), err)
        return Decision(ScheduleOutcome.NOTHING, [ev.warning(ev.INVALID_SCHEDULE, message)])


def decide_schedule(cron_job_flow: Obj, active: Sequence[Mapping[str, Any]], now: datetime.datetime) -> Decision:
    """The second half of `syncCronJob`, up to the create: is a run due now, and may it start?

    Stored values the arithmetic cannot use are replaced first (`stored.py`, with their Warnings); a
    schedule with no time left to compute (none within 50 years, or past the year 9999) is
    `InvalidSchedule` with no requeue, so no exception leaves a sync and no error loops the queue.
    """
    stopped = _stopped_or_schedule(cron_job_flow)
    if isinstance(stopped, Decision):
        return stopped
    deadline, warnings = stored.starting_deadline(cron_job_flow)
    last, last_warnings = stored.last_schedule_time(cron_job_flow, now)
    warnings.extend(last_warnings)
    try:
        decision = _decide_time(cron_job_flow, stopped, active, now, deadline, last)
    except NoScheduleTimeError as err:
        message = ev.MESSAGE_INVALID_SCHEDULE % (cjf.schedule(cron_job_flow), err)
        return Decision(ScheduleOutcome.NOTHING, [*warnings, ev.warning(ev.INVALID_SCHEDULE, message)])
    decision.events[:0] = warnings
    return decision


def _decide_time(
    cron_job_flow: Obj,
    schedule: Schedule,
    active: Sequence[Mapping[str, Any]],
    now: datetime.datetime,
    deadline: int | None,
    last: datetime.datetime | None,
) -> Decision:
    earliest = stored.earliest_time(cron_job_flow, now)
    recent = most_recent_schedule_time(schedule, now, earliest)
    decision = Decision(ScheduleOutcome.WAIT, requeue_after=next_schedule_delay(schedule, now, earliest))
    if recent.time is None:
        return decision
    scheduled = recent.time
    # The warning counts, as CronJob's, only the times within the deadline.
    counted = recent.missed if deadline is None else most_recent_schedule_time(schedule, now, earliest, deadline).missed
    if counted > MAX_MISSED_TIMES:
        decision.events.append(ev.warning(ev.TOO_MANY_MISSED_TIMES, ev.MESSAGE_TOO_MANY_MISSED % counted))
    # Times before the most recent one are never started: missed.
    decision.missed, decision.missed_time = recent.missed - 1, scheduled
    if deadline is not None and (now - scheduled).total_seconds() > deadline:
        decision.events.append(ev.warning(ev.MISS_SCHEDULE, ev.MESSAGE_MISS_SCHEDULE % rfc1123z(scheduled)))
        decision.missed += 1
        return decision
    name = cjf.run_name(meta.name(cron_job_flow), scheduled)
    if any(ref.get("name") == name for ref in active) or last == scheduled:
        decision.missed = 0  # counted when that time was decided
        return decision
    if cjf.concurrency_policy(cron_job_flow) == cjf.ConcurrencyPolicy.FORBID and active:
        decision.events.append(ev.normal(ev.JOB_ALREADY_ACTIVE, ev.MESSAGE_ALREADY_ACTIVE))
        decision.missed += 1
        return decision
    decision.outcome = ScheduleOutcome.CREATE
    decision.scheduled_time = scheduled
    if cjf.concurrency_policy(cron_job_flow) == cjf.ConcurrencyPolicy.REPLACE:
        decision.replace = [dict(ref) for ref in active]
    # The requeue after the create counts from the time just scheduled (CronJob recomputes it
    # with lastScheduleTime set): the next time after `now`.
    decision.requeue_after = next_schedule_delay(schedule, now, scheduled)
    return decision
