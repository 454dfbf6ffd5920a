"""The pure decisions of a CronJobFlow sync (cronjobflow/decide.py), one rule per test, at fixed times."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest
from cron_fakes import at, cron_job_flow, ref, run

from jobflow_controller.cronjobflow import events as ev
from jobflow_controller.cronjobflow.decide import (
    ScheduleOutcome,
    decide_schedule,
    history_deletes,
    is_recorded_run,
    reconcile_children,
    rfc1123z,
)


def names(objs: list[Any]) -> list[str]:
    return [o["metadata"]["name"] for o in objs]


# --- decide_schedule: the policies ---------------------------------------------------------------


def test_a_due_time_creates_its_run_and_requeues_for_the_next() -> None:
    decision = decide_schedule(cron_job_flow(), [], at("2026-12-05T00:01:00.5"))
    assert decision.outcome is ScheduleOutcome.CREATE
    assert decision.scheduled_time == at("2026-12-05T00:01:00")
    assert decision.events == []
    assert decision.requeue_after == pytest.approx(59.6)


def test_nothing_due_sleeps_until_the_next_time_without_an_event() -> None:
    decision = decide_schedule(cron_job_flow(schedule="0 * * * *"), [], at("2026-12-05T00:30:00"))
    assert (decision.outcome, decision.events) == (ScheduleOutcome.WAIT, [])
    assert decision.requeue_after == pytest.approx(1800.1)


def test_allow_creates_beside_an_active_run() -> None:
    active = [ref(run("nightly-29417760"))]
    decision = decide_schedule(cron_job_flow(concurrencyPolicy="Allow"), active, at("2026-12-05T00:01:01"))
    assert (decision.outcome, decision.replace) == (ScheduleOutcome.CREATE, [])


def test_forbid_skips_while_a_run_is_active() -> None:
    active = [ref(run("nightly-29417760"))]
    decision = decide_schedule(cron_job_flow(concurrencyPolicy="Forbid"), active, at("2026-12-05T00:01:01"))
    assert decision.outcome is ScheduleOutcome.WAIT
    assert decision.events == [
        ev.Event(
            "Normal",
            "JobAlreadyActive",
            "Not starting jobflow because prior execution is running and concurrency policy is Forbid",
        )
    ]
    assert decision.missed == 1
    assert decision.requeue_after == pytest.approx(59.1)


def test_forbid_creates_when_nothing_is_active() -> None:
    decision = decide_schedule(cron_job_flow(concurrencyPolicy="Forbid"), [], at("2026-12-05T00:01:01"))
    assert decision.outcome is ScheduleOutcome.CREATE


def test_replace_deletes_every_active_run_first() -> None:
    active = [ref(run("nightly-29417760")), ref(run("nightly-29417759"))]
    decision = decide_schedule(cron_job_flow(concurrencyPolicy="Replace"), active, at("2026-12-05T00:01:01"))
    assert decision.outcome is ScheduleOutcome.CREATE
    assert [r["name"] for r in decision.replace] == ["nightly-29417760", "nightly-29417759"]


def test_suspend_starts_nothing_and_sleeps_for_good() -> None:
    decision = decide_schedule(cron_job_flow(suspend=True), [], at("2026-12-05T00:05:00"))
    assert (decision.outcome, decision.requeue_after, decision.events) == (ScheduleOutcome.NOTHING, None, [])


def test_a_cronjobflow_being_deleted_starts_nothing() -> None:
    obj = cron_job_flow()
    obj["metadata"]["deletionTimestamp"] = "2026-12-05T00:00:30Z"
    assert decide_schedule(obj, [], at("2026-12-05T00:05:00")).outcome is ScheduleOutcome.NOTHING


def test_an_unknown_time_zone_is_a_warning_even_when_suspended() -> None:
    decision = decide_schedule(cron_job_flow(timeZone="Mars/Olympus", suspend=True), [], at("2026-12-05T00:05:00"))
    assert decision.outcome is ScheduleOutcome.NOTHING
    assert decision.events == [
        ev.Event("Warning", "UnknownTimeZone", 'invalid timeZone: "Mars/Olympus": unknown time zone Mars/Olympus')
    ]


def test_an_invalid_schedule_is_a_warning_and_no_requeue() -> None:
    decision = decide_schedule(cron_job_flow(schedule="61 * * * *"), [], at("2026-12-05T00:05:00"))
    assert (decision.outcome, decision.requeue_after) == (ScheduleOutcome.NOTHING, None)
    assert decision.events == [ev.Event("Warning", "InvalidSchedule", "invalid schedule: 61 * * * * : Bad minute")]


def test_an_invalid_schedule_of_a_suspended_cronjobflow_says_nothing() -> None:
    decision = decide_schedule(cron_job_flow(schedule="61 * * * *", suspend=True), [], at("2026-12-05T00:05:00"))
    assert (decision.outcome, decision.events) == (ScheduleOutcome.NOTHING, [])


# --- missed runs ------------------------------------------------------------------------------------


def test_after_downtime_only_the_most_recent_missed_time_is_started() -> None:
    hourly = cron_job_flow(schedule="0 * * * *", status={"lastScheduleTime": "2026-12-05T01:00:00Z"})
    decision = decide_schedule(hourly, [], at("2026-12-05T04:10:00"))
    assert (decision.outcome, decision.scheduled_time) == (ScheduleOutcome.CREATE, at("2026-12-05T04:00:00"))
    assert decision.missed == 2  # 02:00 and 03:00 are never started
    assert decision.events == []


def test_more_than_a_hundred_missed_times_warn_and_still_start_the_latest() -> None:
    obj = cron_job_flow(status={"lastScheduleTime": "2026-12-05T00:00:00Z"})
    decision = decide_schedule(obj, [], at("2026-12-05T01:41:10"))  # 101 minutes
    assert decision.events == [
        ev.Event(
            "Warning",
            "TooManyMissedTimes",
            "too many missed start times: 101. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
        )
    ]
    assert (decision.outcome, decision.scheduled_time) == (ScheduleOutcome.CREATE, at("2026-12-05T01:41:00"))


def test_exactly_a_hundred_missed_times_do_not_warn() -> None:
    obj = cron_job_flow(status={"lastScheduleTime": "2026-12-05T00:00:00Z"})
    assert decide_schedule(obj, [], at("2026-12-05T01:40:10")).events == []


def test_a_deadline_keeps_the_count_under_a_hundred() -> None:
    obj = cron_job_flow(startingDeadlineSeconds=300, status={"lastScheduleTime": "2026-12-05T00:00:00Z"})
    decision = decide_schedule(obj, [], at("2026-12-05T05:00:10"))
    assert (decision.events, decision.scheduled_time) == ([], at("2026-12-05T05:00:00"))


# --- startingDeadlineSeconds ---------------------------------------------------------------------------


@pytest.mark.parametrize("now", ["00:01:00.5", "00:01:10", "00:01:20"])
def test_within_the_deadline_the_run_starts(now: str) -> None:
    decision = decide_schedule(cron_job_flow(startingDeadlineSeconds=20), [], at(f"2026-12-05T{now}"))
    assert (decision.outcome, decision.scheduled_time) == (ScheduleOutcome.CREATE, at("2026-12-05T00:01:00"))


def test_past_the_deadline_the_run_is_missed_with_a_warning() -> None:
    decision = decide_schedule(cron_job_flow(startingDeadlineSeconds=20), [], at("2026-12-05T00:01:21"))
    assert decision.outcome is ScheduleOutcome.WAIT
    assert decision.events == [
        ev.Event("Warning", "MissSchedule", "Missed scheduled time to start a jobflow: Sat, 05 Dec 2026 00:01:00 +0000")
    ]
    assert (decision.missed, decision.missed_time) == (1, at("2026-12-05T00:01:00"))
    assert decision.requeue_after == pytest.approx(39.1)


def test_past_the_deadline_the_next_time_still_starts() -> None:
    hourly = cron_job_flow(
        schedule="0 * * * *", startingDeadlineSeconds=600, status={"lastScheduleTime": "2026-12-05T00:00:00Z"}
    )
    decision = decide_schedule(hourly, [], at("2026-12-05T02:05:00"))
    assert (decision.outcome, decision.scheduled_time, decision.missed) == (
        ScheduleOutcome.CREATE,
        at("2026-12-05T02:00:00"),
        1,
    )


def test_rfc1123z_is_gos() -> None:
    assert rfc1123z(at("2026-03-29T01:00:00")) == "Sun, 29 Mar 2026 01:00:00 +0000"


# --- an already processed time ------------------------------------------------------------------------


def test_the_time_of_the_last_schedule_is_not_started_again() -> None:
    obj = cron_job_flow(status={"lastScheduleTime": "2026-12-05T00:01:00Z"})
    decision = decide_schedule(obj, [], at("2026-12-05T00:01:30"))
    assert (decision.outcome, decision.events, decision.missed) == (ScheduleOutcome.WAIT, [], 0)


def test_a_time_whose_run_is_active_by_name_is_not_started_again() -> None:
    active = [ref(run("nightly-29940481"))]  # 2026-12-05T00:01:00Z in minutes since the epoch
    decision = decide_schedule(cron_job_flow(), active, at("2026-12-05T00:01:30"))
    assert decision.outcome is ScheduleOutcome.WAIT


# --- daylight saving, through the whole decision ----------------------------------------------------------


def test_spring_forward_the_nightly_run_starts_at_three_cest() -> None:
    obj = cron_job_flow(schedule="30 2 * * *", timeZone="Europe/Berlin", created="2026-03-28T12:00:00Z")
    assert decide_schedule(obj, [], at("2026-03-29T00:59:59")).outcome is ScheduleOutcome.WAIT
    decision = decide_schedule(obj, [], at("2026-03-29T01:00:01"))
    assert (decision.outcome, decision.scheduled_time) == (ScheduleOutcome.CREATE, at("2026-03-29T01:00:00"))


def test_fall_back_the_nightly_run_starts_once() -> None:
    obj = cron_job_flow(schedule="30 2 * * *", timeZone="Europe/Berlin", created="2026-10-24T12:00:00Z")
    first = decide_schedule(obj, [], at("2026-10-25T00:30:05"))
    assert (first.outcome, first.scheduled_time) == (ScheduleOutcome.CREATE, at("2026-10-25T00:30:00"))
    done = cron_job_flow(
        schedule="30 2 * * *", timeZone="Europe/Berlin", status={"lastScheduleTime": "2026-10-25T00:30:00Z"}
    )
    again = decide_schedule(done, [], at("2026-10-25T01:30:05"))  # 02:30 CET, the repeated hour
    assert again.outcome is ScheduleOutcome.WAIT
    assert again.requeue_after == pytest.approx(24 * 3600 - 5 + 0.1)  # 02:30 CET the next night


# --- reconcile_children ---------------------------------------------------------------------------------------


def test_a_finished_active_run_leaves_active_with_saw_completed_job() -> None:
    done = run("nightly-1", phase="Failed")
    obj = cron_job_flow(status={"active": [ref(done)]})
    result = reconcile_children(obj, [done], at("2026-12-05T01:00:00"))
    assert (result.active, result.changed) == ([], True)
    assert result.events == [
        ev.Event("Normal", "SawCompletedJob", "Saw completed jobflow: nightly-1, condition: Failed")
    ]
    assert result.last_successful_time is None


def test_the_latest_succeeded_run_sets_last_successful_time() -> None:
    older = run("nightly-1", phase="Succeed", finished_at="2026-12-05T00:10:00Z")
    newer = run("nightly-2", phase="Succeed", finished_at="2026-12-05T00:20:00Z")
    obj = cron_job_flow(status={"lastSuccessfulTime": "2026-12-05T00:05:00Z"})
    result = reconcile_children(obj, [newer, older], at("2026-12-05T01:00:00"))
    assert result.last_successful_time == "2026-12-05T00:20:00Z"
    assert result.events == []  # neither was active


def test_a_succeeded_run_without_an_end_time_counts_from_when_it_is_first_seen() -> None:
    done = run("nightly-1", phase="Succeed")
    result = reconcile_children(cron_job_flow(), [done], at("2026-12-05T01:00:00"))
    assert result.last_successful_time == "2026-12-05T01:00:00Z"
    again = reconcile_children(
        cron_job_flow(status={"lastSuccessfulTime": "2026-12-05T01:00:00Z"}), [done], at("2026-12-05T02:00:00")
    )
    assert (again.last_successful_time, again.changed) == ("2026-12-05T01:00:00Z", False)


def test_an_unfinished_run_of_ours_missing_from_active_is_unexpected() -> None:
    result = reconcile_children(cron_job_flow(), [run("nightly-7")], at("2026-12-05T01:00:00"))
    assert result.events == [
        ev.Event("Warning", "UnexpectedJob", "Saw a jobflow that the controller did not create or forgot: nightly-7")
    ]
    assert result.active == []


def test_an_active_entry_without_a_run_in_the_cache_is_to_be_checked() -> None:
    gone = run("nightly-3")
    result = reconcile_children(cron_job_flow(status={"active": [ref(gone)]}), [], at("2026-12-05T01:00:00"))
    assert [r["name"] for r in result.unverified] == ["nightly-3"]
    assert result.changed is False


# --- history limits ----------------------------------------------------------------------------------------


def _runs(phase: str, count: int) -> list[dict[str, Any]]:
    return [run(f"nightly-{i}", phase=phase, created=f"2026-12-05T00:0{i}:00Z") for i in range(count)]


def test_the_oldest_succeeded_runs_beyond_the_limit_are_deleted() -> None:
    succeeded = _runs("Succeed", 5)
    assert names(history_deletes(cron_job_flow(), list(reversed(succeeded)))) == ["nightly-0", "nightly-1"]


def test_the_failed_limit_defaults_to_one_and_counts_separately() -> None:
    children = [*_runs("Failed", 3), run("ok", phase="Succeed")]
    assert names(history_deletes(cron_job_flow(), children)) == ["nightly-0", "nightly-1"]


@pytest.mark.parametrize(
    ("limits", "deleted"), [({"successfulJobFlowsHistoryLimit": 0}, 3), ({"successfulJobFlowsHistoryLimit": 5}, 0)]
)
def test_the_limits_are_read_from_the_spec(limits: dict[str, int], deleted: int) -> None:
    assert len(history_deletes(cron_job_flow(**limits), _runs("Succeed", 3))) == deleted


def test_unfinished_runs_are_never_deleted_for_history() -> None:
    children = [*_runs("Running", 4), *_runs("Pending", 2), *_runs("Terminating", 2)]
    assert (
        history_deletes(cron_job_flow(successfulJobFlowsHistoryLimit=0, failedJobFlowsHistoryLimit=0), children) == []
    )


def test_ties_in_creation_time_are_broken_by_name() -> None:
    same = [run(n, phase="Succeed", created="2026-12-05T00:00:00Z") for n in ("b", "a", "c", "d")]
    assert names(history_deletes(cron_job_flow(), same)) == ["a"]


# --- is_recorded_run: an active entry is its run only by uid and controller (issue 42, item 3) -----------

_OURS = run("nightly-5", uid="recorded")


@pytest.mark.parametrize(
    ("found", "recorded_uid", "expected"),
    [
        (_OURS, "recorded", True),
        (None, "recorded", False),  # gone
        (run("nightly-5", uid="re-created", owner_uid=""), "recorded", False),  # someone else's, same name
        (run("nightly-5", uid="re-created"), "recorded", False),  # re-created with our owner ref copied
        (run("nightly-5", uid="recorded", owner_uid=""), "recorded", False),  # orphaned: no controller
        (run("nightly-5", uid="recorded", owner_uid="other-cjf"), "recorded", False),  # another controller
        (_OURS, "", False),  # an entry without a uid cannot be verified
    ],
    ids=["ours", "gone", "foreign", "copied-owner", "orphaned", "other-controller", "no-uid"],
)
def test_an_active_entry_is_its_run_only_with_the_recorded_uid_and_our_controller(
    found: dict[str, Any] | None, recorded_uid: str, expected: bool
) -> None:
    entry = {**ref(_OURS), "uid": recorded_uid}
    assert is_recorded_run(entry, found, cron_job_flow()) is expected
