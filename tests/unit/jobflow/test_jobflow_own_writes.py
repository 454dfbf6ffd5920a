"""A sync never works from a JobFlow older than the status this process last wrote (status_writer.py `OwnWrites`)."""

from __future__ import annotations

from typing import Any

from jobflow_fakes import FakeClientset, job, job_flow, job_template, new_fake_controller

from jobflow_controller.jobflow.controller import JobFlowController
from jobflow_controller.jobflow.status_writer import OwnWrites
from workqueue import FakeClock

UID = "5f1d1c2e-0000-4000-8000-000000000001"
CHAIN = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]


def _flow(rv: str, uid: str = UID, phase: str = "") -> dict[str, Any]:
    return job_flow("f", flows=CHAIN, rv=rv, uid=uid, phase=phase)


# -- the record ---------------------------------------------------------------------------------------


def test_nothing_written_the_cache_is_the_newest() -> None:
    cached = _flow("1")
    assert OwnWrites().newest(cached) is cached


def test_while_the_cache_shows_the_version_we_replaced_our_write_is_the_newest() -> None:
    writes, stored = OwnWrites(), _flow("2", phase="Running")
    writes.wrote(_flow("1"), stored)
    assert writes.newest(_flow("1")) is stored


def test_once_the_cache_shows_our_write_it_is_the_newest_and_the_record_goes() -> None:
    writes = OwnWrites()
    writes.wrote(_flow("1"), _flow("2", phase="Running"))
    caught_up = _flow("2", phase="Running")
    assert writes.newest(caught_up) is caught_up
    assert len(writes) == 0


def test_a_version_we_did_not_replace_is_someone_elses_newer_write() -> None:
    writes = OwnWrites()
    writes.wrote(_flow("1"), _flow("2", phase="Running"))
    theirs = _flow("3", phase="Running")
    assert writes.newest(theirs) is theirs


def test_a_job_flow_re_created_under_the_same_name_is_not_ours() -> None:
    writes = OwnWrites()
    writes.wrote(_flow("1"), _flow("2", phase="Running"))
    recreated = _flow("1", uid="another-uid")
    assert writes.newest(recreated) is recreated


def test_two_writes_before_the_cache_caught_up_the_second_is_the_newest() -> None:
    writes, second = OwnWrites(), _flow("3", phase="Succeed")
    writes.wrote(_flow("1"), _flow("2", phase="Running"))
    writes.wrote(_flow("2", phase="Running"), second)
    assert writes.newest(_flow("1")) is second
    assert writes.newest(_flow("2", phase="Running")) is second


def test_the_informer_showing_our_write_drops_the_record() -> None:
    writes = OwnWrites()
    writes.wrote(_flow("1"), _flow("2", phase="Running"))
    writes.observed(_flow("1"))
    assert len(writes) == 1
    writes.observed(_flow("2", phase="Running"))
    assert len(writes) == 0


def test_a_deleted_job_flow_is_forgotten() -> None:
    writes = OwnWrites()
    writes.wrote(_flow("1"), _flow("2", phase="Running"))
    writes.forget("default", "f")
    assert len(writes) == 0


# -- the controller -------------------------------------------------------------------------------------


def _controller(flow: dict[str, Any]) -> tuple[JobFlowController, FakeClientset]:
    controller, clientset, _ = new_fake_controller()
    for name in ("a", "b"):
        controller.job_template_informer.get_indexer().add(job_template(name))
    controller.job_flow_informer.get_indexer().add(flow)
    clientset.api.objects[("jobflows", "default", "f")] = flow
    return controller, clientset


def _status_writes(clientset: FakeClientset) -> int:
    return sum(1 for a in clientset.api.actions if a.verb == "update_status")


def test_a_sync_before_the_cache_shows_our_status_write_neither_rewrites_nor_conflicts() -> None:
    controller, clientset = _controller(_flow("1"))
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=UID, phase="Running"))
    req = JobFlowController.request_for("default", "f")

    controller.sync.handle_job_flow(req)  # writes Running; the cache still shows resourceVersion 1
    controller.sync.handle_job_flow(req)

    assert _status_writes(clientset) == 1
    assert [a.verb for a in clientset.api.actions if a.verb == "get"] == []


def test_a_sync_before_the_cache_shows_our_write_builds_on_it() -> None:
    controller, clientset = _controller(_flow("1"))
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=UID, phase="Running"))
    req = JobFlowController.request_for("default", "f")
    controller.sync.handle_job_flow(req)
    controller.job_informer.get_indexer().update(job("f-a", flow="f", owner_uid=UID, phase="Completed", rv="2"))

    controller.sync.handle_job_flow(req)

    assert _status_writes(clientset) == 2
    assert [a.name for a in clientset.api.actions if a.verb == "create"] == ["f-b"]
    history = clientset.api.objects[("jobflows", "default", "f")]["status"]["jobStatusList"][0]["runningHistories"]
    assert [h["state"] for h in history] == ["Running", "Completed"]


# -- a write the next sync would overwrite ---------------------------------------------------------------


def test_a_status_write_is_left_to_the_next_sync_when_the_job_flow_was_queued_again_meanwhile() -> None:
    controller, clientset = _controller(_flow("1"))
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=UID, phase="Running"))
    req = JobFlowController.request_for("default", "f")
    controller.queue.add(req)
    item, _ = controller.queue.get()
    controller.queue.add(req)  # a Job update while the sync runs

    controller.sync.handle_job_flow(item)
    controller.queue.done(item)

    assert _status_writes(clientset) == 0
    again, _ = controller.queue.get()
    controller.sync.handle_job_flow(again)
    assert _status_writes(clientset) == 1


def test_a_status_write_is_not_left_to_a_next_sync_while_the_queue_shuts_down() -> None:
    controller, clientset = _controller(_flow("1"))
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=UID, phase="Running"))
    req = JobFlowController.request_for("default", "f")
    controller.queue.add(req)
    item, _ = controller.queue.get()
    controller.queue.add(req)
    controller.queue.shut_down()

    controller.sync.handle_job_flow(item)

    assert _status_writes(clientset) == 1


# -- --status-write-interval ------------------------------------------------------------------------------


def _paced(flow: dict[str, Any], interval: float = 2.0) -> tuple[JobFlowController, FakeClientset]:
    controller, clientset = _controller(flow)
    controller.pacing.interval = interval
    return controller, clientset


def _stored(clientset: FakeClientset) -> dict[str, Any]:
    status: dict[str, Any] = clientset.api.objects[("jobflows", "default", "f")]["status"]
    return status


def test_a_status_change_that_does_not_finish_the_job_flow_waits_for_the_interval() -> None:
    controller, clientset = _paced(_flow("1"))
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=UID, phase="Running"))

    controller.sync.handle_job_flow(JobFlowController.request_for("default", "f"))

    assert _status_writes(clientset) == 0
    assert controller.status_writer.own_writes.pending_keys() == [("default", "f")]


def test_the_changes_within_the_interval_are_written_together_once_it_passed() -> None:
    controller, clientset = _paced(_flow("1"))
    clock = controller.clock
    assert isinstance(clock, FakeClock)
    req = JobFlowController.request_for("default", "f")
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=UID, phase="Pending"))
    controller.sync.handle_job_flow(req)
    clock.step(1.0)
    controller.job_informer.get_indexer().update(job("f-a", flow="f", owner_uid=UID, phase="Running", rv="2"))
    controller.sync.handle_job_flow(req)
    assert _status_writes(clientset) == 0

    clock.step(1.0)
    controller.sync.handle_job_flow(req)

    assert _status_writes(clientset) == 1
    histories = _stored(clientset)["jobStatusList"][0]["runningHistories"]
    assert [h["state"] for h in histories] == ["Pending", "Running"]  # the Pending the first sync saw
    assert controller.status_writer.own_writes.pending_keys() == []


def test_a_waiting_status_change_schedules_the_sync_that_writes_it() -> None:
    controller, _ = _paced(_flow("1"))
    clock = controller.clock
    assert isinstance(clock, FakeClock)
    req = JobFlowController.request_for("default", "f")
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=UID, phase="Running"))
    controller.sync.handle_job_flow(req)
    assert len(controller.queue) == 0

    clock.step(2.0)

    assert controller.queue.get(timeout=5.0) == (req, False)


def test_succeed_is_written_at_once() -> None:
    flow = job_flow("f", flows=[{"name": "a"}], rv="1", uid=UID)
    controller, clientset = _paced(flow)
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=UID, phase="Completed"))

    controller.sync.handle_job_flow(JobFlowController.request_for("default", "f"))

    assert _status_writes(clientset) == 1
    assert _stored(clientset)["state"] == {"phase": "Succeed"}
    assert controller.metrics.succeed_count("default") == 1


def test_a_waiting_status_is_written_by_the_drain_at_shutdown() -> None:
    controller, clientset = _paced(_flow("1"))
    req = JobFlowController.request_for("default", "f")
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=UID, phase="Running"))
    controller.sync.handle_job_flow(req)

    controller.shut_down(drain_timeout=5.0)
    item, shutdown = controller.queue.get(timeout=5.0)
    assert (item, shutdown) == (req, False)
    controller.sync.handle_job_flow(item)

    assert _status_writes(clientset) == 1
