"""Lifecycle control decided purely (docs/lifecycle.md): suspend, shutdown, deadlines, TTL stamps
and re-runs, each rule on its own."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from jobflow_fakes import job, job_flow, job_template
from test_jobflow_planner import NOW, UID, plan_through_state, world_of
from test_jobflow_rules import created

from jobflow_controller.apis.lifecycle import RetryRequest
from jobflow_controller.apis.meta import format_time
from jobflow_controller.apis.retry import RERUN
from jobflow_controller.apis.rules import OUTCOME_ANNOTATION
from jobflow_controller.apis.status import recorded_completed, replaced_since_deleted
from jobflow_controller.jobflow import rerun
from jobflow_controller.jobflow.world import JobCreate, SyncPlan, World

CHAIN = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
CREATED = format_time(NOW - timedelta(seconds=10))


def world(
    phases: dict[str, str],
    flows: list[dict[str, Any]] | None = None,
    phase: str = "Running",
    status: dict[str, Any] | None = None,
    **spec: Any,
) -> World:
    obj = job_flow("f", flows=flows or CHAIN, uid=UID, status=status, phase=phase)
    obj["metadata"]["creationTimestamp"] = CREATED
    obj["spec"].update(spec)
    jobs = [job(f"f-{n}", flow="f", owner_uid=UID, phase=p, created=CREATED) for n, p in phases.items()]
    for one in jobs:
        one["metadata"]["uid"] = f"uid-{one['metadata']['name']}"
    found = world_of(obj, jobs)
    finals = {f["name"]: job_template(f["name"]) for f in spec.get("finally", [])}
    return replace(found, templates={**found.templates, **finals})


def plan(w: World) -> SyncPlan:
    found = plan_through_state(w)
    assert found is not None and found.status is not None
    return found


def told(p: SyncPlan) -> list[tuple[bool, str]]:
    return [(n.warning, n.reason) for n in p.notices]


def test_suspended_creates_nothing_stamps_since_when_and_says_so_once() -> None:
    p = plan(world({"a": "Completed"}, suspend=True))
    assert created(p) == [] and told(p) == [(False, "Suspended")]
    body = p.status_body()
    assert body["suspendedSince"] == format_time(NOW)
    again = plan(world({"a": "Completed"}, status=body, suspend=True))
    assert created(again) == [] and again.notices == [] and again.status_body()["suspendedSince"] == format_time(NOW)
    resumed = plan(world({"a": "Completed"}, status=body, suspend=False))
    assert created(resumed) == ["b"] and told(resumed) == [(False, "Resumed")]
    assert "suspendedSince" not in resumed.status_body()


def test_stop_creates_nothing_more_lets_the_running_job_end_then_finally_then_fails() -> None:
    finals = {"finally": [{"name": "n"}]}
    running = plan(world({"a": "Running"}, shutdown="Stop", **finals))
    assert created(running) == [] and running.status_body()["state"] == {"phase": "Running"}
    assert running.terminations == []
    ended = plan(world({"a": "Completed"}, shutdown="Stop", **finals))
    assert created(ended) == ["n"]
    step = ended.deploy.steps[0]
    assert isinstance(step, JobCreate) and step.body is not None
    assert step.body["metadata"]["annotations"][OUTCOME_ANNOTATION] == "Failed"
    done = plan(world({"a": "Completed", "n": "Completed"}, shutdown="Stop", **finals))
    assert done.status_body()["state"] == {"phase": "Failed"} and told(done) == [(False, "Stopped")]


def test_terminate_terminates_what_runs_runs_no_finally_and_fails_once_it_ended() -> None:
    flows = [{"name": "a"}, {"name": "x"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    finals = {"finally": [{"name": "n"}]}
    going = plan(world({"a": "Running", "x": "Terminating"}, flows, shutdown="Terminate", **finals))
    assert [t.job["metadata"]["name"] for t in going.terminations] == ["f-a"]  # x is on its way already
    assert created(going) == [] and going.status_body()["state"] == {"phase": "Running"}
    ended = plan(world({"a": "Terminated", "x": "Terminated"}, flows, shutdown="Terminate", **finals))
    assert created(ended) == [] and ended.terminations == []
    # b waited on a, which ended Terminated: b can no longer run (Skipped), and the JobFlow ends.
    assert ended.status_body()["state"] == {"phase": "Failed"}
    assert told(ended) == [(False, "Skipped"), (False, "Terminated")]


def test_the_job_flow_deadline_requeues_until_it_passes_then_terminates_and_fails() -> None:
    before = plan(world({"a": "Running"}, activeDeadlineSeconds=60))
    assert before.deploy.requeue_after == 50.0 and before.terminations == []
    past = plan(world({"a": "Running"}, activeDeadlineSeconds=5))
    (termination,) = past.terminations
    assert termination.warning is not None and termination.warning.reason == "DeadlineExceeded"
    assert termination.warning.message_fmt % termination.warning.args == (
        "JobFlow ran past its activeDeadlineSeconds (5s): terminating its Jobs"
    )
    ended = plan(world({"a": "Terminated"}, activeDeadlineSeconds=5))
    assert ended.status_body()["state"] == {"phase": "Failed"}
    assert told(ended) == [(False, "Skipped"), (True, "DeadlineExceeded")]


def test_a_flow_deadline_terminates_its_job_with_a_warning_and_requeues_before() -> None:
    flows = [{"name": "a", "activeDeadlineSeconds": 4}, {"name": "x", "activeDeadlineSeconds": 30}]
    p = plan(world({"a": "Running", "x": "Running"}, flows))
    (termination,) = p.terminations
    assert termination.job["metadata"]["name"] == "f-a" and termination.warning is not None
    assert termination.warning.message_fmt % termination.warning.args == (
        "Job f-a of flow a ran past its activeDeadlineSeconds (4s): terminating it"
    )
    assert p.deploy.requeue_after == 20.0


def test_finished_at_is_stamped_at_the_move_to_a_final_phase_when_a_ttl_is_set() -> None:
    p = plan(world({"a": "Completed", "b": "Completed"}, ttlSecondsAfterFinished=30))
    assert p.status_body()["finishedAt"] == format_time(NOW) and p.deploy.requeue_after == 30.0
    without = plan(world({"a": "Completed", "b": "Completed"}))
    assert "finishedAt" not in without.status_body()  # upstream's status, without the opt-in field


def failed_five() -> World:
    flows = [{"name": f"s{i}", **({"dependsOn": {"targets": [f"s{i - 1}"]}} if i > 1 else {})} for i in range(1, 6)]
    phases = {f"s{i}": "Completed" for i in range(1, 5)} | {"s5": "Failed"}
    first = plan(world(phases, flows))
    return world(phases, flows, phase="Failed", status=first.status_body())


def test_a_rerun_picks_the_failed_and_skipped_flows_and_everything_downstream() -> None:
    flows = [
        {"name": "a"},
        {"name": "b", "dependsOn": {"targets": ["a"]}},
        {"name": "c", "dependsOn": {"targets": ["b"]}},
    ]
    flows.append({"name": "x"})
    w = world({"a": "Failed", "x": "Completed"}, flows, phase="Failed", failurePolicy="RunToCompletion")
    assert rerun.chosen_flows(w, RetryRequest("r", ())) == ["a", "b", "c"]
    assert rerun.chosen_flows(w, RetryRequest("r", ("b",))) == ["b", "c"]
    assert rerun.chosen_flows(w, RetryRequest("r", ("x",))) == ["x"]


def test_a_rerun_records_rerun_histories_raises_restart_counts_goes_running_and_deletes_the_jobs() -> None:
    w = failed_five()
    p = rerun.plan_rerun(w, RetryRequest("req-1", ()))
    assert p.status is not None and p.write_at_once
    body = p.status_body()
    assert body["state"] == {"phase": "Running"} and body["retryRequest"] == "req-1"
    entries = {e["name"]: e for e in body["jobStatusList"]}
    assert entries["f-s5"]["runningHistories"][-1]["state"] == RERUN and entries["f-s5"]["restartCount"] == 1
    assert all(entries[f"f-s{i}"].get("restartCount", 0) == 0 for i in range(1, 5))
    assert [j["metadata"]["name"] for j in p.retry_deletes] == ["f-s5"]
    assert [(n.reason, n.args) for n in p.notices] == [("Retried", ("s5",))]
    # The flows upstream stay Completed; the re-run one no longer counts as Completed.
    assert recorded_completed({"status": body}) == {f"f-s{i}" for i in range(1, 5)}


def test_a_rerun_with_nothing_to_do_records_the_request_and_says_so() -> None:
    w = world({"a": "Completed", "b": "Completed"}, phase="Succeed")
    p = rerun.plan_rerun(w, RetryRequest("req-2", ()))
    assert p.status_body()["retryRequest"] == "req-2" and p.status_body()["state"] == {"phase": "Succeed"}
    assert [n.reason for n in p.notices] == ["Retried"] and p.retry_deletes == []


def test_a_completed_job_replaced_by_a_rerun_is_no_longer_remembered_as_completed() -> None:
    status = {"jobStatusList": [{"name": "f-a", "state": "Completed", "runningHistories": [{"state": RERUN}]}]}
    old = job("f-a", flow="f", owner_uid=UID, phase="Completed")
    assert replaced_since_deleted({"status": status}, {"f-a": old}) == {"f-a"}
    old["metadata"]["annotations"]["flow.volcano.sh/retry-attempt"] = "1"
    assert replaced_since_deleted({"status": status}, {"f-a": old}) == set()
