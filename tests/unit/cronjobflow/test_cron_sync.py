"""One CronJobFlow sync against a recording fake API (cronjobflow/sync.py): what is created, deleted,
written and said, in CronJob's order."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cron_fakes import NS, FakeClientset, FakeServer, at, cron_job_flow, ref, run
from prometheus_client import CollectorRegistry

from jobflow_controller.cronjobflow.metrics import CronJobFlowMetrics
from jobflow_controller.cronjobflow.sync import CronJobFlowSyncer
from jobflow_controller.kube.errors import ForbiddenError
from jobflow_controller.record.fake import FakeRecorder

RUN_0101 = "nightly-29940481"  # 2026-12-05T00:01:00Z


def new_sync(server: FakeServer | None = None) -> tuple[CronJobFlowSyncer, FakeServer, FakeRecorder, CollectorRegistry]:
    clientset = FakeClientset(server)
    recorder = FakeRecorder()
    registry = CollectorRegistry()
    return CronJobFlowSyncer(clientset, recorder, CronJobFlowMetrics(registry)), clientset.server, recorder, registry  # type: ignore[arg-type]


def stored(server: FakeServer, obj: dict[str, Any]) -> dict[str, Any]:
    server.put("cronjobflows", obj)
    return obj


def status_writes(server: FakeServer) -> list[dict[str, Any]]:
    return [c.body["status"] for c in server.calls if c.verb == "update_status"]


def test_a_due_time_creates_the_run_as_cronjob_creates_its_job() -> None:
    sync, server, recorder, registry = new_sync(FakeServer(created_at=at("2026-12-05T00:01:00.4")))
    obj = stored(server, cron_job_flow(timeZone="Europe/Berlin"))
    result = sync.sync(obj, [], at("2026-12-05T00:01:00.2"))
    (create,) = [c for c in server.calls if c.verb == "create"]
    assert create.body["metadata"] == {
        "name": RUN_0101,
        "namespace": NS,
        "labels": {"team": "data"},
        "annotations": {"a": "b", "flow.volcano.sh/scheduled-timestamp": "2026-12-05T01:01:00+01:00"},
        "ownerReferences": [
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": "CronJobFlow",
                "name": "nightly",
                "uid": "cjf-uid",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert create.body["spec"] == {"flows": [{"name": "extract"}]}
    assert recorder.drain() == [f"Normal SuccessfulCreate Created jobflow {RUN_0101}"]
    (status,) = status_writes(server)
    assert status["lastScheduleTime"] == "2026-12-05T00:01:00Z"
    assert [(r["name"], r["uid"], r["kind"]) for r in status["active"]] == [(RUN_0101, "new-uid-1", "JobFlow")]
    assert result.requeue_after is not None and 59 < result.requeue_after < 60
    assert registry.get_sample_value("jobflow_controller_cronjobflow_scheduled_total", {"namespace": NS}) == 1
    assert registry.get_sample_value("jobflow_controller_cronjobflow_schedule_lag_seconds_sum") == 0.0  # whole seconds


def test_nothing_due_writes_nothing_and_says_nothing() -> None:
    sync, server, recorder, _ = new_sync()
    result = sync.sync(stored(server, cron_job_flow(schedule="0 * * * *")), [], at("2026-12-05T00:30:00"))
    assert (server.calls, recorder.drain()) == ([], [])
    assert result.requeue_after is not None and round(result.requeue_after, 1) == 1800.1


def test_a_same_named_jobflow_that_is_not_ours_is_never_adopted_nor_replaced() -> None:
    sync, server, recorder, _ = new_sync()
    obj = stored(server, cron_job_flow())
    server.put("jobflows", run(RUN_0101, owner_uid="", uid="someone-elses"))
    result = sync.sync(obj, [], at("2026-12-05T00:01:01"))
    assert recorder.drain() == [
        f'Warning FailedCreate Error creating jobflow: jobflows.flow.volcano.sh "{RUN_0101}" already exists'
    ]
    assert [c.verb for c in server.calls] == ["create", "get"]  # no delete, no update, no status
    assert server.objects[("jobflows", RUN_0101)]["metadata"]["uid"] == "someone-elses"
    assert result.requeue_after is not None  # tried again at the next time, not stalled


def test_a_same_named_jobflow_owned_by_another_cronjobflow_of_the_name_is_not_ours() -> None:
    sync, server, recorder, _ = new_sync()
    obj = stored(server, cron_job_flow())
    server.put("jobflows", run(RUN_0101, owner_uid="an-earlier-nightly"))
    sync.sync(obj, [], at("2026-12-05T00:01:01"))
    assert recorder.drain()[0].startswith("Warning FailedCreate Error creating jobflow:")
    assert status_writes(server) == []


def test_our_run_created_before_a_lost_status_write_is_added_to_active_without_an_event() -> None:
    sync, server, recorder, _ = new_sync()
    obj = stored(server, cron_job_flow())
    ours = run(RUN_0101, phase="Succeed", uid="ours")  # finished: no UnexpectedJob re-read
    server.put("jobflows", ours)
    sync.sync(obj, [], at("2026-12-05T00:01:01"))
    assert recorder.drain() == []
    (status,) = status_writes(server)
    assert [r["uid"] for r in status["active"]] == ["ours"]
    assert status["lastScheduleTime"] == "2026-12-05T00:01:00Z"


def test_a_failed_create_is_a_warning_and_an_error_for_the_queue_to_retry() -> None:
    sync, server, recorder, _ = new_sync()
    server.create_error = ForbiddenError(403, "Forbidden", "jobflows.flow.volcano.sh is forbidden: exceeded quota")
    obj = stored(server, cron_job_flow())
    try:
        sync.sync(obj, [], at("2026-12-05T00:01:01"))
    except ForbiddenError:
        pass
    else:  # pragma: no cover - the assertion below says what was expected
        raise AssertionError("the sync must fail")
    assert recorder.drain() == [
        "Warning FailedCreate Error creating jobflow: jobflows.flow.volcano.sh is forbidden: exceeded quota"
    ]
    assert status_writes(server) == []


def test_replace_deletes_the_active_run_in_the_foreground_then_creates() -> None:
    sync, server, recorder, _ = new_sync()
    old = run("nightly-29940480", uid="old")
    server.put("jobflows", old)
    obj = stored(server, cron_job_flow(concurrencyPolicy="Replace", status={"active": [ref(old)]}))
    sync.sync(obj, [old], at("2026-12-05T00:01:01"))
    delete = next(c for c in server.calls if c.verb == "delete")
    assert (delete.name, delete.options) == ("nightly-29940480", {"propagation": "Foreground", "uid": "old"})
    assert [c.verb for c in server.calls] == ["get", "delete", "create", "update_status"]
    assert recorder.drain() == [
        "Normal SuccessfulDelete Deleted jobflow nightly-29940480",
        f"Normal SuccessfulCreate Created jobflow {RUN_0101}",
    ]
    (status,) = status_writes(server)
    assert [r["name"] for r in status["active"]] == [RUN_0101]


def test_forbid_creates_nothing_while_a_run_is_active() -> None:
    sync, server, recorder, _ = new_sync()
    old = run("nightly-29940480")
    obj = stored(server, cron_job_flow(concurrencyPolicy="Forbid", status={"active": [ref(old)]}))
    sync.sync(obj, [old], at("2026-12-05T00:01:01"))
    assert server.calls == []
    assert recorder.drain() == [
        "Normal JobAlreadyActive Not starting jobflow because prior execution is running"
        " and concurrency policy is Forbid"
    ]


def test_replace_never_deletes_a_jobflow_re_created_by_someone_else_under_the_runs_name() -> None:
    # Issue 42, item 3: the run was deleted and re-created by another user under the same name; the
    # cache has not seen it (not ours), the GET finds it with another uid: dropped as missing.
    sync, server, recorder, _ = new_sync()
    old = run("nightly-29940480", uid="old")
    server.put("jobflows", run("nightly-29940480", uid="foreign", owner_uid=""))
    obj = stored(server, cron_job_flow(concurrencyPolicy="Replace", status={"active": [ref(old)]}))
    sync.sync(obj, [], at("2026-12-05T00:01:01"))
    assert [c.verb for c in server.calls if c.verb == "delete"] == []
    assert recorder.drain() == [
        "Normal MissingJob Active jobflow went missing: nightly-29940480",
        f"Normal SuccessfulCreate Created jobflow {RUN_0101}",
    ]
    (status,) = status_writes(server)
    assert [r["name"] for r in status["active"]] == [RUN_0101]


def test_replace_deletes_with_the_recorded_uid_as_precondition() -> None:
    # Re-created between the check and the DELETE: the server refuses the precondition (409), the
    # foreign JobFlow stays, the entry leaves active.
    sync, server, recorder, _ = new_sync()
    old = run("nightly-29940480", uid="old")
    server.put("jobflows", old)
    obj = stored(server, cron_job_flow(concurrencyPolicy="Replace", status={"active": [ref(old)]}))
    server.delete_conflict = True
    sync.sync(obj, [old], at("2026-12-05T00:01:01"))
    (delete,) = [c for c in server.calls if c.verb == "delete"]
    assert delete.options["uid"] == "old"
    assert ("jobflows", "nightly-29940480") in server.objects
    assert recorder.drain()[0] == "Normal MissingJob Active jobflow went missing: nightly-29940480"


def test_forbid_is_not_blocked_by_a_jobflow_re_created_by_someone_else_under_the_runs_name() -> None:
    sync, server, recorder, _ = new_sync()
    old = run("nightly-29940480", uid="old")
    server.put("jobflows", run("nightly-29940480", uid="foreign", owner_uid=""))
    obj = stored(server, cron_job_flow(concurrencyPolicy="Forbid", status={"active": [ref(old)]}))
    sync.sync(obj, [], at("2026-12-05T00:01:01"))
    assert recorder.drain() == [
        "Normal MissingJob Active jobflow went missing: nightly-29940480",
        f"Normal SuccessfulCreate Created jobflow {RUN_0101}",
    ]


def test_history_beyond_the_limits_is_deleted_oldest_first_in_the_background() -> None:
    sync, server, recorder, _ = new_sync()
    runs = [run(f"nightly-{i}", phase="Succeed", created=f"2026-12-05T00:0{i}:00Z") for i in range(5)]
    for each in runs:
        server.put("jobflows", each)
    obj = stored(server, cron_job_flow(schedule="0 * * * *", successfulJobFlowsHistoryLimit=2))
    sync.sync(obj, runs, at("2026-12-05T00:30:00"))
    deletes = [(c.name, c.options["propagation"]) for c in server.calls if c.verb == "delete"]
    assert deletes == [("nightly-0", "Background"), ("nightly-1", "Background"), ("nightly-2", "Background")]
    assert recorder.drain()[:3] == [f"Normal SuccessfulDelete Deleted jobflow nightly-{i}" for i in range(3)]


def test_a_finished_run_leaves_active_and_sets_last_successful_time() -> None:
    sync, server, recorder, _ = new_sync()
    done = run("nightly-29940480", phase="Succeed", finished_at="2026-12-05T00:00:40Z")
    obj = stored(server, cron_job_flow(schedule="0 * * * *", status={"active": [ref(done)]}))
    sync.sync(obj, [done], at("2026-12-05T00:00:45"))
    assert recorder.drain() == ["Normal SawCompletedJob Saw completed jobflow: nightly-29940480, condition: Succeed"]
    (status,) = status_writes(server)
    assert status == {"lastSuccessfulTime": "2026-12-05T00:00:40Z"}


def test_an_active_run_gone_from_the_api_is_missing_job() -> None:
    sync, server, recorder, _ = new_sync()
    gone = run("nightly-29940480")
    obj = stored(server, cron_job_flow(schedule="0 * * * *", status={"active": [ref(gone)]}))
    sync.sync(obj, [], at("2026-12-05T00:00:45"))
    assert recorder.drain() == ["Normal MissingJob Active jobflow went missing: nightly-29940480"]
    assert status_writes(server) == [{}]


def test_an_active_run_the_cache_lacks_but_the_api_has_stays() -> None:
    sync, server, recorder, _ = new_sync()
    fresh = run("nightly-29940480")
    server.put("jobflows", fresh)
    obj = stored(server, cron_job_flow(schedule="0 * * * *", status={"active": [ref(fresh)]}))
    sync.sync(obj, [], at("2026-12-05T00:00:45"))
    assert (recorder.drain(), status_writes(server)) == ([], [])


def test_an_unexpected_run_is_checked_against_a_fresh_read_first() -> None:
    # Our own status write has not reached the cache yet: the fresh copy lists the run; no warning,
    # and no second run for the same time.
    sync, server, recorder, _ = new_sync()
    mine = run(RUN_0101)
    cached = cron_job_flow()
    stored(server, cron_job_flow(status={"active": [ref(mine)], "lastScheduleTime": "2026-12-05T00:01:00Z"}))
    sync.sync(cached, [mine], at("2026-12-05T00:01:02"))
    assert recorder.drain() == []
    assert [c.verb for c in server.calls] == ["get"]


def test_an_unexpected_run_the_fresh_read_lacks_too_is_warned_about() -> None:
    sync, server, recorder, _ = new_sync()
    stray = run("nightly-manual")
    obj = stored(server, cron_job_flow(schedule="0 * * * *"))
    sync.sync(obj, [stray], at("2026-12-05T00:30:00"))
    assert recorder.drain() == [
        "Warning UnexpectedJob Saw a jobflow that the controller did not create or forgot: nightly-manual"
    ]


def test_a_status_conflict_puts_the_same_status_on_a_fresh_copy() -> None:
    sync, server, _, _ = new_sync()
    obj = stored(server, cron_job_flow())
    server.conflicts = 1
    sync.sync(obj, [], at("2026-12-05T00:01:01"))
    writes = status_writes(server)
    assert len(writes) == 2 and writes[0] == writes[1]
    assert server.objects[("cronjobflows", "nightly")]["status"]["lastScheduleTime"] == "2026-12-05T00:01:00Z"


def test_a_finished_active_run_deleted_for_history_leaves_active_without_saw_completed_job() -> None:
    # CronJob's order: the history cleanup's delete takes it out of the active list first.
    sync, server, recorder, _ = new_sync()
    done = run("nightly-1", phase="Failed", created="2026-12-05T00:00:00Z")
    newer = run("nightly-2", phase="Failed", created="2026-12-05T00:01:00Z")
    for each in (done, newer):
        server.put("jobflows", each)
    obj = stored(server, cron_job_flow(schedule="0 * * * *", status={"active": [ref(done)]}))
    sync.sync(obj, [done, newer], at("2026-12-05T00:30:00"))
    assert recorder.drain() == ["Normal SuccessfulDelete Deleted jobflow nightly-1"]
    assert status_writes(server) == [{}]
