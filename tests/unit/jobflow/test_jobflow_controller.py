"""The queue side of the controller: handle_job_flow, handle_job_flow_err, and the drop event."""

from __future__ import annotations

import threading
import time

import pytest
import structlog.testing
from jobflow_fakes import job, job_flow, job_template, new_fake_controller

from jobflow_controller.apis import FlowRequest
from jobflow_controller.apis.request import FlowRequest as Request
from jobflow_controller.jobflow.controller import CONTROLLER_NAME


def _req(name: str = "test") -> FlowRequest:
    from jobflow_controller.jobflow.controller import JobFlowController

    return JobFlowController.request_for("default", name)


def test_controller_and_queue_names_are_upstreams() -> None:
    controller, _, _ = new_fake_controller()
    assert CONTROLLER_NAME == "jobflow-controller"
    assert controller.queue.name == "jobflow"


def test_flow_request_string_is_upstreams() -> None:
    assert str(Request("ns", "flow", "tmpl")) == "JobTemplate: tmpl, JobFlow: flow/ns"


def test_a_deleted_job_flow_is_dropped_silently() -> None:
    controller, clientset, recorder = new_fake_controller()
    controller.sync.handle_job_flow(_req("gone"))
    assert clientset.api.actions == []
    assert recorder.drain() == []


def test_success_forgets_the_request() -> None:
    controller, _, _ = new_fake_controller()
    req = _req()
    controller.queue.add_rate_limited(req)
    controller.workers.handle_err(None, req)
    assert controller.queue.num_requeues(req) == 0


def test_an_error_is_retried_with_backoff_below_max_requeue_num() -> None:
    controller, _, recorder = new_fake_controller(max_requeue_num=2)
    req = _req()
    controller.workers.handle_err(RuntimeError("boom"), req)
    controller.workers.handle_err(RuntimeError("boom"), req)
    assert controller.queue.num_requeues(req) == 2
    assert recorder.drain() == []


def test_after_max_requeue_num_a_warning_event_drops_the_request() -> None:
    controller, _, recorder = new_fake_controller(max_requeue_num=0)
    controller.job_flow_informer.get_indexer().add(job_flow("test"))
    req = _req()
    controller.workers.handle_err(RuntimeError("sync jobflow test failed for x"), req)
    assert recorder.drain() == ["Warning SyncJobFlow SyncJobFlow JobFlow failed for sync jobflow test failed for x"]
    assert controller.queue.num_requeues(req) == 0


def test_max_requeue_num_minus_one_retries_forever() -> None:
    controller, _, recorder = new_fake_controller(max_requeue_num=-5)
    assert controller.workers.max_requeue_num == -1
    req = _req()
    for _ in range(40):
        controller.workers.handle_err(RuntimeError("boom"), req)
    assert controller.queue.num_requeues(req) == 40
    assert recorder.drain() == []


def test_no_event_when_the_dropped_job_flow_is_gone() -> None:
    controller, _, recorder = new_fake_controller(max_requeue_num=0)
    controller.workers.handle_err(RuntimeError("boom"), _req("gone"))
    assert recorder.drain() == []


def test_a_missing_template_fails_the_sync_with_upstreams_wrapped_message() -> None:
    controller, _, _ = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(job_flow("test", flows=[{"name": "a"}, {"name": "b"}]))
    with pytest.raises(RuntimeError) as err:
        controller.sync.handle_job_flow(_req())
    assert str(err.value) == (
        'sync jobflow test failed for jobtemplate.flow.volcano.sh "a" not found, '
        "event is OutOfSync, action is SyncJobFlow"
    )


def test_an_invalid_phase_is_an_error() -> None:
    controller, _, _ = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(job_flow("test", phase="Bogus"))
    with pytest.raises(RuntimeError, match=r"^jobflow test state \{Bogus\} is invalid$"):
        controller.sync.handle_job_flow(_req())


def test_an_invalid_job_flow_gets_a_warning_and_no_jobs() -> None:
    controller, clientset, recorder = new_fake_controller()
    flows = [{"name": "a", "dependsOn": {"targets": ["b"]}}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    controller.job_flow_informer.get_indexer().add(job_flow("cyclic", flows=flows))
    controller.sync.handle_job_flow(_req("cyclic"))
    assert [a.verb for a in clientset.api.actions if a.resource == "jobs"] == []
    assert recorder.drain() == ["Warning InvalidJobFlow jobflow Flow is not DAG"]


def test_a_stored_job_flow_over_the_flow_cap_gets_invalid_job_flow_and_no_jobs() -> None:
    """Issue 21: stored while neither our CRD's maxItems nor the webhook refused it (upstream's CRD)."""
    controller, clientset, recorder = new_fake_controller()
    flows = [{"name": f"f{i}"} for i in range(501)]
    controller.job_flow_informer.get_indexer().add(job_flow("big", flows=flows))
    controller.job_template_informer.get_indexer().add(job_template("f0"))
    controller.sync.handle_job_flow(_req("big"))
    assert [a.verb for a in clientset.api.actions if a.resource == "jobs"] == []
    assert recorder.drain() == ["Warning InvalidJobFlow jobflow has 501 flows, more than the 500 allowed"]


def test_an_invalid_job_flow_shows_the_status_of_a_job_flow_with_no_jobs() -> None:
    """Upstream writes Pending for it (and waits for ever); `kubectl get jf` shows that phase."""
    controller, clientset, _ = new_fake_controller()
    flows = [{"name": "a", "dependsOn": {"targets": ["b"]}}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    controller.job_flow_informer.get_indexer().add(job_flow("cyclic", flows=flows))
    controller.sync.handle_job_flow(_req("cyclic"))
    assert [(a.verb, a.body["status"]) for a in clientset.api.actions] == [
        ("update_status", {"state": {"phase": "Pending"}})
    ]


def test_an_invalid_job_flow_with_jobs_keeps_their_status_true_and_creates_nothing() -> None:
    controller, clientset, recorder = new_fake_controller()
    flows = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["c"]}}]  # c names no flow
    controller.job_flow_informer.get_indexer().add(job_flow("f", flows=flows, phase="Running"))
    controller.job_template_informer.get_indexer().add(job_template("b"))
    controller.job_informer.get_indexer().add(job("f-a", flow="f", phase="Completed"))
    controller.sync.handle_job_flow(_req("f"))
    writes = [a for a in clientset.api.actions if a.verb == "update_status"]
    assert [a.verb for a in clientset.api.actions] == ["update_status"]
    assert writes[0].body["status"]["completedJobs"] == ["f-a"]
    assert writes[0].body["status"]["state"] == {"phase": "Running"}
    assert [e.split(" ")[1] for e in recorder.drain()] == ["InvalidJobFlow"]


def test_an_invalid_job_flow_is_warned_once_per_generation_however_often_it_is_synced() -> None:
    """A JobTemplate's add racing the JobFlow's, or the resync, syncs it again: no second Warning."""
    controller, clientset, recorder = new_fake_controller()
    flows = [{"name": "a", "dependsOn": {"targets": ["b"]}}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    cyclic = job_flow("cyclic", flows=flows)
    cyclic["metadata"]["generation"] = 1
    controller.job_flow_informer.get_indexer().add(cyclic)
    controller.sync.handle_job_flow(_req("cyclic"))
    controller.sync.handle_job_flow(_req("cyclic"))
    assert recorder.drain() == ["Warning InvalidJobFlow jobflow Flow is not DAG"]

    # A spec edit bumps the resourceVersion too (the status the first sync wrote is older than it).
    edited = {
        **cyclic,
        "metadata": {**cyclic["metadata"], "generation": 2, "resourceVersion": "900"},
        "spec": {"flows": [*flows, {"name": "c"}]},
    }
    clientset.api.objects[("jobflows", "default", "cyclic")] = edited
    controller.job_flow_informer.get_indexer().update(edited)
    controller.sync.handle_job_flow(_req("cyclic"))
    assert recorder.drain() == ["Warning InvalidJobFlow jobflow Flow is not DAG"]


def test_a_pending_flow_whose_jobs_all_completed_succeeds_in_one_sync() -> None:
    """Deviation: upstream goes Pending → Running and waits for another event to reach Succeed."""
    controller, clientset, _ = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(job_flow("f", flows=[{"name": "a"}], phase="Pending"))
    controller.job_informer.get_indexer().add(job("f-a", flow="f", phase="Completed"))
    controller.sync.handle_job_flow(_req("f"))
    write = next(a for a in clientset.api.actions if a.verb == "update_status")
    assert write.body["status"]["state"] == {"phase": "Succeed"}
    assert controller.metrics.succeed_count("default") == 1


@pytest.mark.parametrize("phase", ["Failed", "Terminating"])
def test_failed_and_terminating_flows_are_left_alone(phase: str) -> None:
    controller, clientset, _ = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(job_flow("f", flows=[{"name": "a"}], phase=phase))
    controller.sync.handle_job_flow(_req("f"))
    assert clientset.api.actions == []


def test_process_next_work_item_syncs_and_marks_the_item_done() -> None:
    controller, clientset, _ = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(job_flow("f", flows=[]))
    controller.handlers.enqueue_job_flow(_req("f"))
    assert controller.workers._process_next_work_item() is True
    assert len(controller.queue) == 0
    assert [a.verb for a in clientset.api.actions] == ["update_status"]
    controller.queue.shut_down()
    assert controller.workers._process_next_work_item() is False


def test_zero_worker_threads_runs_one_worker() -> None:
    """--worker-threads=0 (a uint32 upstream accepts) runs one worker, as upstream's JobFlow controller always does."""
    controller, _, _ = new_fake_controller()
    stop = threading.Event()
    runner = threading.Thread(target=controller.run, args=(stop, 0), daemon=True)
    runner.start()
    try:
        deadline = time.monotonic() + 10
        while not controller.workers._workers and time.monotonic() < deadline:
            stop.wait(0.01)
        stop.wait(0.1)
        assert [t.name for t in controller.workers._workers] == ["jobflow-controller-0"]
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive()


def test_worker_threads_are_honoured() -> None:
    """Deviation: upstream runs exactly one worker whatever --worker-threads says."""
    controller, _, _ = new_fake_controller()
    stop = threading.Event()
    runner = threading.Thread(target=controller.run, args=(stop, 3), daemon=True)
    runner.start()
    try:
        deadline = time.monotonic() + 10
        while len(controller.workers._workers) < 3 and time.monotonic() < deadline:
            stop.wait(0.01)
        names = sorted(t.name for t in controller.workers._workers)
        assert names == ["jobflow-controller-0", "jobflow-controller-1", "jobflow-controller-2"]
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive()


def test_a_missing_target_is_logged_once_while_it_stays_missing() -> None:
    """Upstream's `No <job> Job found` line, once when the target starts to be missing, not every sync."""
    controller, _, _ = new_fake_controller()
    flows = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    controller.job_flow_informer.get_indexer().add(job_flow("f", flows=flows))
    controller.job_template_informer.get_indexer().add(job_template("a"))
    with structlog.testing.capture_logs() as logs:
        for _ in range(3):
            controller.sync.handle_job_flow(_req("f"))
    assert [e["event"] for e in logs if e["event"].startswith("No ")] == ["No f-a Job found！"]  # noqa: RUF001
