"""No flow is ever stranded (issue 10): conflicts, foreign Jobs, refused creates, and the resync.

Each test is one rule a user relies on when other clients, outages and squatters share the cluster
with the controller. The API is the recording fake of `jobflow_fakes`; its status PUT answers a stale
resourceVersion with 409 Conflict, as the API server does.
"""

from __future__ import annotations

import time

import pytest
from jobflow_fakes import (
    delete_all_jobs_created_by_job_flow,
    deploy_job,
    get_all_job_status,
    job,
    job_flow,
    job_template,
    new_fake_controller,
)

from jobflow_controller.apis import FlowRequest
from jobflow_controller.framework import CONFLICT_REQUEUE_DELAY
from jobflow_controller.jobflow.controller import JobFlowController
from jobflow_controller.jobflow.observe import jobs_created_by_job_flow
from jobflow_controller.kube.errors import ConflictError, from_status

FLOW_UID = "0b6c1e7e-5d0f-4a53-9e0e-1f4c2b9a7d11"
OLD_UID = "7f3a2c1d-0000-4bbb-8ccc-000000000001"


def _req(name: str = "f") -> FlowRequest:
    return JobFlowController.request_for("default", name)


def _conflict(name: str = "f") -> ConflictError:
    err = from_status(409, "Conflict", f'Operation cannot be fulfilled on jobflows.flow.volcano.sh "{name}"')
    assert isinstance(err, ConflictError)
    return err


def _wait_for_len(controller: JobFlowController, n: int, timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while len(controller.queue) != n and time.monotonic() < deadline:
        time.sleep(0.005)
    assert len(controller.queue) == n


# -- 1. a conflict on the status write is not a failure of the flow ------------------------------


def test_a_status_conflict_re_reads_the_job_flow_and_writes_again() -> None:
    controller, clientset, _ = new_fake_controller(max_requeue_num=0)
    cached = job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID, rv="5")
    controller.job_flow_informer.get_indexer().add(cached)
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=FLOW_UID, phase="Running"))
    # Another client annotated the JobFlow: the server holds rv 6, the cache still rv 5.
    annotated = job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID, rv="6")
    annotated["metadata"]["annotations"] = {"gitops/synced": "yes"}
    clientset.api.objects[("jobflows", "default", "f")] = annotated

    controller.sync.handle_job_flow(_req())

    verbs = clientset.api.verbs("jobflows")
    assert verbs == [("update_status", "f"), ("get", "f"), ("update_status", "f")]
    written = clientset.api.objects[("jobflows", "default", "f")]
    assert written["status"]["state"]["phase"] == "Running"
    assert written["status"]["runningJobs"] == ["f-a"]
    # The retry wrote over the other client's object, keeping its annotation.
    assert written["metadata"]["annotations"] == {"gitops/synced": "yes"}


def test_conflicts_that_outlast_the_retries_requeue_without_using_up_max_requeue_num() -> None:
    controller, clientset, recorder = new_fake_controller(max_requeue_num=0)
    controller.job_flow_informer.get_indexer().add(job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID))
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=FLOW_UID, phase="Running"))
    clientset.api.objects[("jobflows", "default", "f")] = job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID)
    clientset.api.fail[("update_status", "f")] = _conflict()
    req = _req()

    with pytest.raises(Exception) as excinfo:
        controller.sync.handle_job_flow(req)
    # client-go's DefaultRetry: five attempts, then the conflict goes back to the queue.
    assert clientset.api.verbs("jobflows").count(("update_status", "f")) == 5
    controller.workers.handle_err(excinfo.value, req)

    assert recorder.drain() == []  # no SyncJobFlow Warning, even with --max-requeue-num 0
    assert controller.queue.num_requeues(req) == 0
    assert len(controller.queue) == 0
    controller.clock.step(CONFLICT_REQUEUE_DELAY)  # type: ignore[attr-defined]
    _wait_for_len(controller, 1)


def test_a_conflict_wrapped_by_the_sync_error_is_still_a_conflict() -> None:
    controller, _, recorder = new_fake_controller(max_requeue_num=0)
    req = _req()
    try:
        try:
            raise _conflict()
        except ConflictError as inner:
            raise RuntimeError("sync jobflow f failed for conflict") from inner
    except RuntimeError as wrapped:
        controller.workers.handle_err(wrapped, req)
    assert recorder.drain() == []
    assert controller.queue.num_requeues(req) == 0


def test_other_errors_still_count_toward_max_requeue_num() -> None:
    controller, _, _ = new_fake_controller(max_requeue_num=3)
    req = _req()
    controller.workers.handle_err(RuntimeError("connection refused"), req)
    assert controller.queue.num_requeues(req) == 1


def test_a_job_flow_deleted_during_the_conflict_retry_ends_the_sync_quietly() -> None:
    controller, clientset, recorder = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID))
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=FLOW_UID, phase="Running"))
    clientset.api.fail[("update_status", "f")] = [_conflict()]
    controller.sync.handle_job_flow(_req())  # the GET finds nothing: nothing more to do
    assert clientset.api.verbs("jobflows") == [("update_status", "f"), ("get", "f")]
    assert recorder.drain() == []


# -- 3. a Job this JobFlow does not control is never adopted, counted or modified ---------------


def test_a_foreign_job_with_the_flows_name_gets_a_warning_and_no_create() -> None:
    controller, clientset, recorder = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    controller.job_informer.get_indexer().add(job("f-a", phase="Completed"))  # someone else's, no owner
    flow = job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID)

    deploy_job(controller, flow)

    assert clientset.api.verbs("jobs") == []
    assert recorder.drain() == ['Warning ErrResourceExists Resource "f-a" already exists and is not managed by JobFlow']


def test_a_foreign_completed_job_does_not_satisfy_a_dependency() -> None:
    controller, clientset, _ = new_fake_controller()
    for name in "ab":
        controller.job_template_informer.get_indexer().add(job_template(name))
    controller.job_informer.get_indexer().add(job("f-a", phase="Completed"))
    flow = job_flow("f", flows=[{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}], uid=FLOW_UID)

    deploy_job(controller, flow)

    assert clientset.api.verbs("jobs") == []  # the flow waits: f-b is not created


def test_a_foreign_job_is_not_counted_in_the_status() -> None:
    controller, _, _ = new_fake_controller()
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owned=False, phase="Running"))
    status = get_all_job_status(controller, job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID))
    assert status.running_jobs == []
    assert status.conditions == {}
    assert status.job_status_list == []


def test_the_jobs_of_an_earlier_job_flow_of_the_same_name_are_not_counted() -> None:
    controller, clientset, recorder = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    old = job("f-a", flow="f", owner_uid=OLD_UID, phase="Completed")  # waiting for the garbage collector
    controller.job_informer.get_indexer().add(old)
    recreated = job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID)

    assert jobs_created_by_job_flow(controller.job_lister, recreated) == []
    deploy_job(controller, recreated)
    assert clientset.api.verbs("jobs") == []
    assert recorder.drain() == ['Warning ErrResourceExists Resource "f-a" already exists and is not managed by JobFlow']


def test_retain_policy_delete_never_deletes_a_job_it_does_not_control() -> None:
    controller, clientset, _ = new_fake_controller()
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=FLOW_UID, phase="Completed"))
    controller.job_informer.get_indexer().add(job("f-b", flow="f", owner_uid=OLD_UID, phase="Completed"))
    delete_all_jobs_created_by_job_flow(controller, job_flow("f", retain="delete", uid=FLOW_UID))
    assert clientset.api.verbs("jobs") == [("delete", "f-a")]


def test_already_exists_from_a_foreign_job_the_cache_has_not_seen_gets_a_warning() -> None:
    controller, clientset, recorder = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    clientset.jobs("default").create(job("f-a"))  # made a moment ago by someone else
    clientset.api.actions.clear()

    deploy_job(controller, job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID))

    assert clientset.api.verbs("jobs") == [("create", "f-a"), ("get", "f-a")]
    assert recorder.drain() == ['Warning ErrResourceExists Resource "f-a" already exists and is not managed by JobFlow']


def test_a_job_controlled_by_this_job_flow_is_left_alone_and_counted() -> None:
    controller, clientset, recorder = new_fake_controller()
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=FLOW_UID, phase="Running"))
    flow = job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID)
    deploy_job(controller, flow)
    assert clientset.api.verbs("jobs") == []
    assert recorder.drain() == []
    assert get_all_job_status(controller, flow).running_jobs == ["f-a"]


# -- a refused create names its cause at once ------------------------------------------------


def test_a_create_refused_by_a_quota_gets_a_failed_create_warning_and_still_fails() -> None:
    controller, clientset, recorder = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    quota = (
        'jobs.batch.volcano.sh "f-a" is forbidden: exceeded quota: jobs, requested: count/jobs.batch.volcano.sh=1, '
        "used: count/jobs.batch.volcano.sh=1, limited: count/jobs.batch.volcano.sh=1"
    )
    clientset.api.fail[("create", "f-a")] = from_status(403, "Forbidden", quota)

    with pytest.raises(Exception, match="exceeded quota: jobs"):
        deploy_job(controller, job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID))

    assert recorder.drain() == [f"Warning FailedCreate Error creating job f-a: {quota}"]


@pytest.mark.parametrize("code", [409, 429, 500, 503])
def test_conflicts_throttling_and_server_errors_on_create_are_retried_without_an_event(code: int) -> None:
    controller, clientset, recorder = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    clientset.api.fail[("create", "f-a")] = from_status(code, "", "try again")
    with pytest.raises(Exception, match="try again"):
        deploy_job(controller, job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID))
    assert recorder.drain() == []


# -- 2. every unfinished JobFlow is synced again on the resync --------------------------------


@pytest.mark.parametrize("phase", ["", "Pending", "Running"])
def test_a_resync_enqueues_an_unfinished_job_flow(phase: str) -> None:
    controller, _, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], phase=phase, rv="7")
    controller.handlers.update_job_flow(flow, flow)
    assert len(controller.queue) == 1


@pytest.mark.parametrize("phase", ["Succeed", "Failed", "Terminating"])
def test_a_resync_leaves_a_finished_job_flow_alone(phase: str) -> None:
    controller, _, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], phase=phase, rv="7")
    controller.handlers.update_job_flow(flow, flow)
    assert len(controller.queue) == 0


def test_a_resync_enqueues_a_succeeded_delete_flow_only_while_its_jobs_remain() -> None:
    controller, _, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], phase="Succeed", retain="delete", rv="7", uid=FLOW_UID)
    controller.handlers.update_job_flow(flow, flow)
    assert len(controller.queue) == 0
    controller.job_informer.get_indexer().add(job("f-a", flow="f", owner_uid=FLOW_UID, phase="Completed"))
    controller.handlers.update_job_flow(flow, flow)
    assert len(controller.queue) == 1


def test_while_a_sync_keeps_failing_every_resync_after_a_drop_brings_the_warning_again() -> None:
    """Upstream's resync is 0, so a dropped request warns once; ours replays the unfinished JobFlow
    every --resync-period, its count of failures starts afresh, and the next drop warns again."""
    controller, _, recorder = new_fake_controller(max_requeue_num=0)
    flow = job_flow("f", flows=[{"name": "missing"}], phase="Pending", rv="7")
    controller.job_flow_informer.get_indexer().add(flow)
    warning = (
        "Warning SyncJobFlow SyncJobFlow JobFlow failed for sync jobflow f failed for "
        'jobtemplate.flow.volcano.sh "missing" not found, event is OutOfSync, action is SyncJobFlow'
    )
    for _ in range(2):
        controller.handlers.update_job_flow(flow, flow)  # the resync's replay
        assert controller.workers._process_next_work_item()
        assert recorder.drain() == [warning]
        assert len(controller.queue) == 0


def test_a_metadata_only_update_still_enqueues_nothing_as_upstream() -> None:
    controller, _, _ = new_fake_controller()
    old = job_flow("f", flows=[{"name": "a"}], phase="Running", rv="7")
    new = job_flow("f", flows=[{"name": "a"}], phase="Running", rv="8")
    controller.handlers.update_job_flow(old, new)
    assert len(controller.queue) == 0


def test_a_re_created_job_flow_seen_as_an_update_is_enqueued() -> None:
    """A relist can fold a delete and re-create of one name into an update: the uid tells them apart."""
    controller, _, _ = new_fake_controller()
    old = job_flow("f", flows=[{"name": "a"}], phase="Running", rv="7", uid=OLD_UID)
    new = job_flow("f", flows=[{"name": "a"}], rv="9", uid=FLOW_UID)
    controller.handlers.update_job_flow(old, new)
    assert len(controller.queue) == 1


def test_deleting_a_squatting_job_resumes_the_job_flow_that_waits_for_its_name() -> None:
    controller, _, _ = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID))
    controller.job_flow_informer.get_indexer().add(job_flow("g", flows=[{"name": "a"}], uid=OLD_UID))
    controller.handlers.delete_job(job("f-a"))  # no owner: someone else's Job
    assert len(controller.queue) == 1
    req, _ = controller.queue.get()
    assert req == _req("f")
