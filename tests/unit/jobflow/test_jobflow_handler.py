"""Which events enqueue a JobFlow: upstream's handler tests and filters, plus our three triggers."""

from __future__ import annotations

from jobflow_fakes import job, job_flow, job_template, new_fake_controller

from informers import DeletedFinalStateUnknown
from jobflow_controller.apis import Action, Event, FlowRequest
from jobflow_controller.jobflow.handler import get_job_flow_name_by_job
from workqueue import FakeClock


def test_add_job_flow_enqueues_it() -> None:
    controller, _, _ = new_fake_controller()
    controller.handlers.add_job_flow(job_flow("jobflow1", namespace="test"))
    assert len(controller.queue) == 1


def test_update_job_flow_enqueues_a_succeeded_flow_with_delete_policy() -> None:
    controller, _, _ = new_fake_controller()
    old = job_flow("jobflow1", "test", retain="delete", phase="Succeed", rv="1223")
    new = job_flow("jobflow1", "test", retain="delete", phase="Succeed", rv="")
    controller.handlers.update_job_flow(old, new)
    assert len(controller.queue) == 1


def test_update_job_flow_ignores_status_writes_of_a_running_flow() -> None:
    controller, _, _ = new_fake_controller()
    controller.handlers.update_job_flow(job_flow("f", phase="Pending", rv="1"), job_flow("f", phase="Running", rv="2"))
    assert len(controller.queue) == 0


def test_update_job_flow_ignores_a_resync_with_the_same_resource_version() -> None:
    controller, _, _ = new_fake_controller()
    same = job_flow("f", retain="delete", phase="Succeed", rv="5")
    controller.handlers.update_job_flow(same, same)
    assert len(controller.queue) == 0


def test_update_job_flow_enqueues_a_spec_change() -> None:
    """Ours: a new generation (a spec edit) is synced, so a fixed invalid spec is picked up."""
    controller, _, _ = new_fake_controller()
    controller.handlers.update_job_flow(job_flow("f", rv="1", generation=1), job_flow("f", rv="2", generation=2))
    assert len(controller.queue) == 1


def test_the_generation_bump_of_a_deletion_is_no_spec_change() -> None:
    """The API server bumps the generation when it sets `deletionTimestamp`; upstream does not sync that."""
    controller, _, _ = new_fake_controller()
    deleting = job_flow("f", rv="2", generation=2)
    deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    controller.handlers.update_job_flow(job_flow("f", rv="1", generation=1), deleting)
    assert len(controller.queue) == 0


def test_update_job_enqueues_the_controlling_job_flow() -> None:
    controller, _, _ = new_fake_controller()
    old = job("job1", "test", owner="jobflow1", rv="1223")
    new = job("job1", "test", owner="jobflow1", rv="1224")
    controller.handlers.update_job(old, new)
    item, _ = controller.queue.get()
    assert item == FlowRequest("test", "jobflow1", action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)


def test_update_job_ignores_jobs_no_job_flow_controls() -> None:
    controller, _, _ = new_fake_controller()
    controller.handlers.update_job(job("j", rv="1"), job("j", rv="2"))
    controller.handlers.update_job(
        job("j", owner="f", controller=False, rv="1"), job("j", owner="f", controller=False, rv="2")
    )
    assert len(controller.queue) == 0


def test_update_job_ignores_a_resync_with_the_same_resource_version() -> None:
    controller, _, _ = new_fake_controller()
    same = job("j", owner="f", rv="3")
    controller.handlers.update_job(same, same)
    assert len(controller.queue) == 0


def test_delete_job_enqueues_the_owner_even_from_a_tombstone() -> None:
    """Ours: upstream has no Job delete handler, so a Job deleted by hand went unnoticed."""
    controller, _, _ = new_fake_controller()
    controller.handlers.delete_job(DeletedFinalStateUnknown("default/f-a", job("f-a", owner="f")))
    assert len(controller.queue) == 1


def test_add_job_template_resumes_the_flows_that_wait_for_it() -> None:
    """Ours: upstream ignores template creation, so a flow missing its template stayed stuck."""
    controller, _, _ = new_fake_controller()
    indexer = controller.job_flow_informer.get_indexer()
    indexer.add(job_flow("waiting", flows=[{"name": "a"}, {"name": "late"}], phase="Running"))
    indexer.add(job_flow("other", flows=[{"name": "a"}]))
    indexer.add(job_flow("finished", flows=[{"name": "late"}], phase="Succeed"))
    controller.handlers.add_job_template(job_template("late"))
    item, _ = controller.queue.get()
    assert item.job_flow_name == "waiting"
    assert len(controller.queue) == 0


def test_add_job_template_during_the_initial_list_enqueues_nothing() -> None:
    controller, _, _ = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(job_flow("waiting", flows=[{"name": "late"}]))
    controller.handlers.add_job_template(job_template("late"), True)
    assert len(controller.queue) == 0


def test_enqueue_job_flow_deduplicates_equal_requests() -> None:
    controller, _, _ = new_fake_controller()
    controller.handlers.enqueue_job_flow(controller.request_for("default", "a"))
    controller.handlers.enqueue_job_flow(controller.request_for("default", "a"))
    assert len(controller.queue) == 1
    controller.handlers.enqueue_job_flow(controller.request_for("default", "b"))
    assert len(controller.queue) == 2


def test_get_job_flow_name_by_job_does_not_require_a_controller_reference() -> None:
    assert get_job_flow_name_by_job(job("j", owner="jobflowtest", controller=False)) == "jobflowtest"


def test_get_job_flow_name_by_job_is_empty_without_a_job_flow_owner() -> None:
    assert get_job_flow_name_by_job(job("j")) == ""


def test_with_a_status_write_interval_a_job_turning_running_syncs_its_flow_after_the_interval() -> None:
    """Ours (--status-write-interval): such an update can change only the status, which waits anyway."""
    controller, _, _ = new_fake_controller()
    controller.pacing.interval = 2.0
    clock = controller.clock
    assert isinstance(clock, FakeClock)
    controller.handlers.update_job(
        job("job1", "test", owner="jobflow1", rv="1"), job("job1", "test", owner="jobflow1", phase="Running", rv="2")
    )
    assert len(controller.queue) == 0
    clock.step(2.0)
    item, _ = controller.queue.get(timeout=5.0)
    assert item == FlowRequest("test", "jobflow1", action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)


def test_with_a_status_write_interval_a_job_turning_completed_still_syncs_its_flow_at_once() -> None:
    controller, _, _ = new_fake_controller()
    controller.pacing.interval = 2.0
    controller.handlers.update_job(
        job("job1", "test", owner="jobflow1", phase="Running", rv="1"),
        job("job1", "test", owner="jobflow1", phase="Completed", rv="2"),
    )
    assert len(controller.queue) == 1
