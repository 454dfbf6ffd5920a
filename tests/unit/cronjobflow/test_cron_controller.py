"""The CronJobFlow controller on a fake clock: handlers, the delayed requeue to the next schedule
time (never a poll), missed-time counting, the wait for the CRD."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workqueue"))

import pytest
from cron_fakes import NS, FakeClientset, at, cron_job_flow, run
from prometheus_client import CollectorRegistry
from workqueue_test_support import stays, wait_for

from jobflow_controller.cronjobflow import CONTROLLER_NAME, CronJobFlowController, CronJobFlowMetrics
from jobflow_controller.cronjobflow.crd_wait import MESSAGE_WAITING, wait_for_crd
from jobflow_controller.framework import ControllerOption
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.manager.config import CRONJOBFLOW_CONTROLLER, is_controller_enabled
from jobflow_controller.record.fake import FakeRecorder
from workqueue import FakeClock

KEY = f"{NS}/nightly"


def new_controller(
    start: str = "2026-12-05T00:00:30",
) -> tuple[CronJobFlowController, FakeClientset, FakeClock, CollectorRegistry]:
    clock = FakeClock(epoch=at(start))
    clientset = FakeClientset()
    registry = CollectorRegistry()
    metrics = CronJobFlowMetrics(registry)
    controller = CronJobFlowController(
        ControllerOption(
            clientset,  # type: ignore[arg-type]
            VolcanoInformerFactory(clientset),  # type: ignore[arg-type]
            FakeRecorder(),
            clock=clock,
            settings={CronJobFlowMetrics: lambda: metrics},
        )
    )
    controller.start_cron_job_flow_informer()
    return controller, clientset, clock, registry


def cache(controller: CronJobFlowController, obj: dict[str, Any]) -> None:
    informer = controller.cron_job_flow_informer if obj["kind"] == "CronJobFlow" else controller.job_flow_informer
    informer.get_indexer().add(obj)
    plural = "cronjobflows" if obj["kind"] == "CronJobFlow" else "jobflows"
    controller.clientset.server.put(plural, obj)  # type: ignore[attr-defined]


def take(controller: CronJobFlowController) -> str:
    key, shutdown = controller.queue.get()
    assert not shutdown
    controller.queue.done(key)
    return str(key)


def test_names() -> None:
    assert CONTROLLER_NAME == CRONJOBFLOW_CONTROLLER == "cronjobflow-controller"
    assert is_controller_enabled(CRONJOBFLOW_CONTROLLER, ["*"])
    assert is_controller_enabled(CRONJOBFLOW_CONTROLLER, ["*", "-sharding-controller"])
    assert not is_controller_enabled(CRONJOBFLOW_CONTROLLER, ["*", "-cronjobflow-controller"])


def test_a_sync_sleeps_until_just_after_the_next_schedule_time() -> None:
    controller, _, clock, _ = new_controller("2026-12-05T00:00:30")
    cache(controller, cron_job_flow(schedule="0 * * * *"))
    controller.sync_handler(KEY)
    assert len(controller.queue) == 0
    clock.step(3569.9)  # 00:59:59.9: not yet
    assert stays(lambda: len(controller.queue) == 0)
    clock.step(0.3)  # 01:00:00.2: past the time and CronJob's 100 ms
    wait_for(lambda: len(controller.queue) == 1)
    assert take(controller) == KEY


def test_every_minute_one_run_per_minute_from_the_requeue_alone() -> None:
    controller, clientset, clock, registry = new_controller("2026-12-05T00:00:30")
    cache(controller, cron_job_flow())
    for _minute in range(3):
        controller.sync_handler(KEY)
        clock.step(60)
        wait_for(lambda: len(controller.queue) == 1)
        take(controller)
        # The status the controller wrote is what the next sync reads.
        stored = clientset.server.objects[("cronjobflows", "nightly")]
        controller.cron_job_flow_informer.get_indexer().update(stored)
    controller.sync_handler(KEY)
    created = [c.name for c in clientset.server.calls if c.verb == "create"]
    assert created == ["nightly-29940481", "nightly-29940482", "nightly-29940483"]
    assert registry.get_sample_value("jobflow_controller_cronjobflow_scheduled_total", {"namespace": NS}) == 3


def test_both_counters_of_a_namespace_exist_at_zero_from_its_first_sync() -> None:
    """The dashboard's rate() and increase() then see the first run and the first miss."""
    controller, _, _, registry = new_controller("2026-12-05T00:00:30")
    assert registry.get_sample_value("jobflow_controller_cronjobflow_scheduled_total", {"namespace": NS}) is None
    cache(controller, cron_job_flow(schedule="0 * * * *"))
    controller.sync_handler(KEY)
    assert registry.get_sample_value("jobflow_controller_cronjobflow_scheduled_total", {"namespace": NS}) == 0
    assert registry.get_sample_value("jobflow_controller_cronjobflow_missed_total", {"namespace": NS}) == 0


def test_a_schedule_change_is_replanned_at_once_to_the_new_next_time() -> None:
    controller, _, clock, _ = new_controller("2026-12-05T00:00:30")
    old = cron_job_flow(schedule="0 0 * * *")
    new = cron_job_flow(schedule="*/5 * * * *")
    new["metadata"]["resourceVersion"] = "2"
    controller.update_cron_job_flow(old, new)
    assert len(controller.queue) == 0  # not now: at 00:05
    clock.step(270)
    assert stays(lambda: len(controller.queue) == 0)
    clock.step(0.5)
    wait_for(lambda: len(controller.queue) == 1)


def test_a_schedule_change_with_no_time_left_is_synced_now_for_its_warning() -> None:
    # Issue 42, item 4: the handler computes the next time; past the year 9999 there is none, and
    # the informer's handler must not raise: the sync says InvalidSchedule instead.
    controller, _, _, _ = new_controller("9999-06-01T00:00:00")
    old = cron_job_flow(schedule="0 0 * * *", created="9999-01-01T00:00:00Z")
    new = cron_job_flow(schedule="0 0 * 2 1#5", created="9999-01-01T00:00:00Z")
    controller.update_cron_job_flow(old, new)
    assert take(controller) == KEY


def test_any_other_change_is_synced_now() -> None:
    controller, _, _, _ = new_controller()
    old = cron_job_flow(concurrencyPolicy="Allow")
    controller.update_cron_job_flow(old, cron_job_flow(concurrencyPolicy="Forbid"))
    assert take(controller) == KEY


def test_a_run_event_wakes_its_cronjobflow_by_owner_uid() -> None:
    controller, _, _, _ = new_controller()
    cache(controller, cron_job_flow())
    controller.add_job_flow(run("nightly-1"))
    assert take(controller) == KEY


@pytest.mark.parametrize(
    "job_flow",
    [
        run("nightly-1", owner_uid="an-earlier-nightly"),  # same name, another object
        run("nightly-1", owner_kind="JobFlow"),
        run("nightly-1", owner_uid=""),  # nobody's
    ],
)
def test_a_jobflow_not_controlled_by_the_cronjobflow_wakes_nothing(job_flow: dict[str, Any]) -> None:
    controller, _, _, _ = new_controller()
    cache(controller, cron_job_flow())
    controller.add_job_flow(job_flow)
    controller.delete_job_flow(job_flow)
    assert len(controller.queue) == 0


def test_only_runs_it_controls_are_its_children() -> None:
    controller, _, _, _ = new_controller()
    obj = cron_job_flow()
    cache(controller, obj)
    for each in (run("nightly-1"), run("nightly-2", owner_uid="other"), run("nightly-3", owner_uid="")):
        cache(controller, each)
    assert [c["metadata"]["name"] for c in controller.children_of(obj)] == ["nightly-1"]


def test_a_resync_of_a_run_wakes_nothing() -> None:
    controller, _, _, _ = new_controller()
    cache(controller, cron_job_flow())
    same = run("nightly-1")
    controller.update_job_flow(same, same)
    assert len(controller.queue) == 0


def test_missed_times_are_counted_once_however_often_they_are_seen() -> None:
    controller, _, _, registry = new_controller("2026-12-05T00:01:30")
    active = run("nightly-29940480")
    obj = cron_job_flow(
        concurrencyPolicy="Forbid", status={"active": [{"name": "nightly-29940480", "uid": "uid-nightly-29940480"}]}
    )
    cache(controller, obj)
    cache(controller, active)
    controller.sync_handler(KEY)
    controller.sync_handler(KEY)  # a run's event, the same minute
    assert registry.get_sample_value("jobflow_controller_cronjobflow_missed_total", {"namespace": NS}) == 1


def test_a_deleted_cronjobflow_is_forgotten() -> None:
    controller, clientset, _, _ = new_controller()
    controller.sync_handler(KEY)  # not in the cache: nothing, no requeue
    assert (clientset.server.calls, len(controller.queue)) == ([], 0)


# --- waiting for the CRD ------------------------------------------------------------------------------


def test_without_the_crd_it_logs_once_and_waits_then_starts(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = FakeClock()
    answers = iter([False, False, False, True])
    stop = threading.Event()
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(wait_for_crd(lambda: next(answers), stop, clock, 10.0)))
    thread.start()
    for _ in range(3):
        wait_for(clock.has_waiters)
        clock.step(10.0)
    thread.join(5)
    assert result == [True]
    logged = capsys.readouterr().out + capsys.readouterr().err + caplog.text
    assert logged.count(MESSAGE_WAITING) == 1


def test_the_wait_for_the_crd_ends_with_the_stop() -> None:
    stop = threading.Event()
    stop.set()
    assert wait_for_crd(lambda: False, stop, FakeClock(), 10.0) is False


def test_run_without_the_crd_creates_no_cronjobflow_informer() -> None:
    clock = FakeClock()
    clientset = FakeClientset(serves=False)
    factory = VolcanoInformerFactory(clientset)  # type: ignore[arg-type]
    controller = CronJobFlowController(ControllerOption(clientset, factory, FakeRecorder(), clock=clock))  # type: ignore[arg-type]
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    wait_for(clock.has_waiters)
    assert controller.cron_job_flow_informer is None
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
