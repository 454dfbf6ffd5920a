"""Which syncs go first, and how the writes of a status that is still changing are paced (urgency.py).

Specification, in the order a user meets it:
* a controller that keeps up writes every status change at once, as upstream does;
* a sync that may create a Job is handed out before syncs that can only change a status;
* past the status bucket's burst, a status change that does not finish the JobFlow waits for its
  token, and every change meanwhile is written with it;
* Succeed and Failed never wait.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any
from unittest import mock

from jobflow_fakes import FakeClientset, job, job_flow, job_template, new_fake_controller

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workqueue"))  # the recording storage

from workqueue_test_support import RecordingPriorityStorage, priority_handed_out

from jobflow_controller.jobflow import controller as controller_module
from jobflow_controller.jobflow import status_writer, urgency
from jobflow_controller.jobflow.controller import JobFlowController
from workqueue import FairShare, FakeClock

UID = "5f1d1c2e-0000-4000-8000-000000000002"
CHAIN = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
REQ = JobFlowController.request_for("default", "f")


def _controller(*, burst: int = status_writer.STATUS_WRITE_BURST) -> tuple[JobFlowController, FakeClientset, FakeClock]:
    """A fake controller whose queue records the lane each request is handed out from."""
    storages: list[RecordingPriorityStorage[Any]] = []

    def recording_storage(
        shares: dict[int, int] | None = None,
        tenant_of: Callable[[Any], Hashable] | None = None,
        fair_share: FairShare | None = None,
    ) -> RecordingPriorityStorage[Any]:
        storages.append(RecordingPriorityStorage(shares, tenant_of, fair_share))
        return storages[-1]

    with mock.patch.object(controller_module, "PriorityStorage", recording_storage):
        controller, clientset, _ = new_fake_controller()
    (storage,) = storages
    storage.attach(controller.queue)
    clock = controller.clock
    assert isinstance(clock, FakeClock)
    controller.pacing.lane = status_writer.StatusLane(controller.queue, clock, qps=1.0, burst=burst)
    for name in ("a", "b"):
        controller.job_template_informer.get_indexer().add(job_template(name))
    flow = job_flow("f", flows=CHAIN, rv="1", uid=UID)
    controller.job_flow_informer.get_indexer().add(flow)
    clientset.api.objects[("jobflows", "default", "f")] = flow
    return controller, clientset, clock


def _job(phase: str, rv: str, name: str = "f-a") -> dict[str, Any]:
    return job(name, flow="f", owner_uid=UID, phase=phase, rv=rv)


def _set_job(controller: JobFlowController, phase: str, rv: str, name: str = "f-a") -> None:
    indexer = controller.job_informer.get_indexer()
    try:
        indexer.update(_job(phase, rv, name))
    except Exception:  # noqa: BLE001 - first sight
        indexer.add(_job(phase, rv, name))


def _status_writes(clientset: FakeClientset) -> int:
    return sum(1 for a in clientset.api.actions if a.verb == "update_status")


def _stored(clientset: FakeClientset) -> dict[str, Any]:
    status: dict[str, Any] = clientset.api.objects[("jobflows", "default", "f")]["status"]
    return status


def _sync_next(controller: JobFlowController) -> int | None:
    """One worker step: take the next request, sync it, mark it done; returns the lane it came from."""
    item, shutdown = controller.queue.get(timeout=5.0)
    assert not shutdown
    lane = priority_handed_out(controller.queue, item)
    try:
        controller.sync_handler(item)
    finally:
        controller.queue.done(item)
    return lane


def _wait_for_queue(controller: JobFlowController, length: int) -> None:
    deadline = time.monotonic() + 5.0
    while len(controller.queue) < length:
        assert time.monotonic() < deadline, "the delayed request never came"
        time.sleep(0.005)


# -- the lanes ----------------------------------------------------------------------------------------


def test_a_job_completed_goes_before_job_flows_added_and_jobs_turned_running() -> None:
    controller, _, _ = _controller()
    running = controller.request_for("default", "other")
    controller.handlers.update_job(
        job("o-a", flow="other", phase="Pending", rv="1"), job("o-a", flow="other", phase="Running", rv="2")
    )
    controller.handlers.add_job_flow(job_flow("new"))
    controller.handlers.update_job(_job("Running", "1"), _job("Completed", "2"))

    order = []
    while len(controller.queue):
        item, _ = controller.queue.get(timeout=1)
        order.append((item.job_flow_name, priority_handed_out(controller.queue, item)))
        controller.queue.done(item)

    assert order == [("f", urgency.REACT), ("new", urgency.DEFAULT), (running.job_flow_name, urgency.STATUS)]


def test_failed_and_deleted_jobs_are_urgent_too() -> None:
    controller, _, _ = _controller()
    controller.handlers.update_job(_job("Running", "1"), _job("Failed", "2"))
    controller.handlers.delete_job(job("g-a", flow="g", phase="Running"))

    lanes = [_sync_lane_of(controller) for _ in range(2)]
    assert lanes == [urgency.REACT, urgency.REACT]


def test_a_running_job_is_urgent_for_a_job_flow_whose_dependency_is_judged_by_a_probe() -> None:
    controller, _, _ = _controller()
    probed = job_flow(
        "p",
        flows=[
            {"name": "a"},
            {
                "name": "b",
                "dependsOn": {"targets": ["a"], "probe": {"taskStatusList": [{"taskName": "t", "phase": "Running"}]}},
            },
        ],
    )
    controller.job_flow_informer.get_indexer().add(probed)
    controller.handlers.update_job(
        job("p-a", flow="p", phase="Pending", rv="1"), job("p-a", flow="p", phase="Running", rv="2")
    )

    assert _sync_lane_of(controller) == urgency.REACT


def _spend_the_burst(controller: JobFlowController) -> None:
    assert controller.pacing.lane.write_now(controller.request_for("default", "someone-else"))


def _sync_lane_of(controller: JobFlowController) -> int | None:
    item, _ = controller.queue.get(timeout=1)
    lane = priority_handed_out(controller.queue, item)
    controller.queue.done(item)
    return lane


# -- the status bucket ----------------------------------------------------------------------------------


def test_a_controller_that_keeps_up_writes_every_status_change_at_once() -> None:
    controller, clientset, _ = _controller()
    for rv, phase in (("2", "Pending"), ("3", "Running")):
        old = _job("", str(int(rv) - 1))
        _set_job(controller, phase, rv)
        controller.handlers.update_job(old, _job(phase, rv))
        _sync_next(controller)
        assert _stored(clientset)["jobStatusList"][0]["state"] == phase

    assert _status_writes(clientset) == 2
    assert len(controller.queue) == 0


def test_past_the_burst_a_status_change_waits_for_its_token_and_is_written_with_the_changes_since() -> None:
    controller, clientset, clock = _controller(burst=1)
    controller.handlers.add_job_flow(job_flow("f"))
    assert _sync_next(controller) == urgency.DEFAULT  # creates f-a, writes the first status: the burst
    assert _status_writes(clientset) == 1

    _set_job(controller, "Pending", "2")
    controller.handlers.update_job(_job("", "1"), _job("Pending", "2"))
    assert len(controller.queue) == 0  # its token is a second away (1 qps)
    _set_job(controller, "Running", "3")
    controller.handlers.update_job(_job("Pending", "2"), _job("Running", "3"))
    assert len(controller.queue) == 0  # the same reservation: no second token
    assert _status_writes(clientset) == 1

    clock.step(1.0)
    _wait_for_queue(controller, 1)
    assert _sync_next(controller) == urgency.STATUS

    assert _status_writes(clientset) == 2
    entry = _stored(clientset)["jobStatusList"][0]
    assert entry["state"] == "Running"
    assert [h["state"] for h in entry["runningHistories"]] == ["Running"]
    assert len(controller.pacing.lane) == 0


def test_a_reaction_past_the_burst_creates_the_job_at_once_and_leaves_its_status_to_the_bucket() -> None:
    controller, clientset, clock = _controller(burst=1)
    controller.handlers.add_job_flow(job_flow("f"))
    _sync_next(controller)  # the burst's one token
    _set_job(controller, "Completed", "2")
    controller.handlers.update_job(_job("Running", "1"), _job("Completed", "2"))

    assert _sync_next(controller) == urgency.REACT
    assert [a.name for a in clientset.api.actions if a.verb == "create"] == ["f-a", "f-b"]
    assert _status_writes(clientset) == 1
    assert controller.status_writer.own_writes.pending_keys() == [("default", "f")]

    clock.step(1.0)
    _wait_for_queue(controller, 1)
    _sync_next(controller)
    assert _status_writes(clientset) == 2
    assert _stored(clientset)["completedJobs"] == ["f-a"]


def _finish_both_jobs_and_sync(controller: JobFlowController) -> None:
    _set_job(controller, "Completed", "2", name="f-a")
    _set_job(controller, "Completed", "2", name="f-b")
    controller.handlers.update_job(_job("Running", "1", name="f-b"), _job("Completed", "2", name="f-b"))
    _sync_next(controller)


def test_succeed_is_written_at_once_even_with_an_empty_bucket() -> None:
    controller, clientset, _ = _controller(burst=0)

    _finish_both_jobs_and_sync(controller)

    assert _status_writes(clientset) == 1
    assert _stored(clientset)["state"] == {"phase": "Succeed"}


def test_a_reservation_whose_sync_found_nothing_to_write_lapses() -> None:
    controller, clientset, clock = _controller(burst=1)
    controller.handlers.add_job_flow(job_flow("f"))
    _sync_next(controller)
    _set_job(controller, "Pending", "2")
    controller.handlers.update_job(_job("", "1"), _job("Pending", "2"))
    clock.step(1.0)
    _wait_for_queue(controller, 1)
    _sync_next(controller)
    assert _status_writes(clientset) == 2

    controller.handlers.update_job(_job("Pending", "2"), _job("Pending", "3"))  # nothing new for the status
    clock.step(1.0)
    _wait_for_queue(controller, 1)
    _sync_next(controller)

    assert _status_writes(clientset) == 2
    assert len(controller.pacing.lane) == 0


def test_a_deleted_job_flow_forgets_its_reservation() -> None:
    controller, _, _ = _controller(burst=1)
    _spend_the_burst(controller)
    controller.pacing.lane.add(REQ)
    assert len(controller.pacing.lane) == 1
    controller.handlers.delete_job_flow(job_flow("f", uid=UID))
    assert len(controller.pacing.lane) == 0


def test_an_earlier_wake_up_of_the_same_request_never_strands_its_reservation() -> None:
    """The delaying queue keeps the earliest of several times: a sync woken before the reserved
    time defers again and re-arms the reserved one."""
    controller, clientset, clock = _controller(burst=1)
    _spend_the_burst(controller)
    _set_job(controller, "Running", "2")
    controller.pacing.lane.add(REQ)  # reserved 1 s from now
    controller.queue.add_after(REQ, 0.5)  # something else wakes it earlier
    clock.step(0.5)
    _wait_for_queue(controller, 1)
    _sync_next(controller)
    assert _status_writes(clientset) == 0

    clock.step(0.5)
    _wait_for_queue(controller, 1)
    _sync_next(controller)
    assert _status_writes(clientset) == 1


def test_a_job_flow_added_during_a_burst_of_reactions_is_handed_out_after_at_most_one_of_them() -> None:
    """Strict lanes made a new JobFlow's first Job wait for every due dependent of a burst; the
    DEFAULT lane's share (one pop in DEFAULT_LANE_SHARE) bounds that wait by the pops."""
    controller, _, _ = new_fake_controller()
    assert urgency.LANE_SHARES == {urgency.DEFAULT: 2}
    for i in range(4):
        controller.queue.add_with_priority(JobFlowController.request_for("default", f"react-{i}"), urgency.REACT)
    controller.queue.add(JobFlowController.request_for("default", "new"))
    order = []
    while len(controller.queue):
        req, _ = controller.queue.get(timeout=1)
        order.append(req.job_flow_name)
        controller.queue.done(req)
    assert order == ["react-0", "new", "react-1", "react-2", "react-3"]


# -- the client's QPS limiter -------------------------------------------------------------------------


def test_while_the_client_is_backlogged_a_status_change_waits_and_the_job_is_created_at_once() -> None:
    controller, clientset, _clock = _controller()
    clientset.client_backlog = 0.5
    controller.handlers.add_job_flow(job_flow("f"))

    _sync_next(controller)

    assert [a.name for a in clientset.api.actions if a.verb == "create"] == ["f-a"]
    assert _status_writes(clientset) == 0
    assert controller.status_writer.own_writes.pending_keys() == [("default", "f")]
    assert len(controller.queue) == 0  # one sync, when the longest deferral is over


def test_a_sync_after_the_backlog_cleared_writes_the_waiting_status() -> None:
    controller, clientset, _clock = _controller()
    clientset.client_backlog = 0.5
    controller.handlers.add_job_flow(job_flow("f"))
    _sync_next(controller)
    clientset.client_backlog = 0.0

    _set_job(controller, "Pending", "2")
    controller.handlers.update_job(_job("", "1"), _job("Pending", "2"))
    _sync_next(controller)

    assert _status_writes(clientset) == 1
    assert _stored(clientset)["jobStatusList"][0]["state"] == "Pending"
    assert controller.status_writer.own_writes.pending_keys() == []


def test_a_status_change_waits_for_the_backlog_at_most_the_longest_deferral() -> None:
    controller, clientset, clock = _controller()
    clientset.client_backlog = 0.5
    controller.handlers.add_job_flow(job_flow("f"))
    _sync_next(controller)

    clock.step(status_writer.CLIENT_BACKLOG_MAX_DEFERRAL)
    _wait_for_queue(controller, 1)
    assert _sync_next(controller) == urgency.STATUS

    assert _status_writes(clientset) == 1  # written although the client is still backlogged
    assert _stored(clientset)["state"]["phase"] in ("Pending", "Running")


def test_succeed_is_written_at_once_while_the_client_is_backlogged() -> None:
    controller, clientset, _ = _controller()
    clientset.client_backlog = 5.0

    _finish_both_jobs_and_sync(controller)

    assert _status_writes(clientset) == 1
    assert _stored(clientset)["state"] == {"phase": "Succeed"}


def test_with_an_interval_the_backlog_is_not_consulted() -> None:
    controller, clientset, clock = _controller()
    controller.pacing.interval = 2.0
    clientset.client_backlog = 0.5
    controller.handlers.add_job_flow(job_flow("f"))
    _sync_next(controller)
    assert _status_writes(clientset) == 0

    clock.step(2.0)
    _wait_for_queue(controller, 1)
    _sync_next(controller)
    assert _status_writes(clientset) == 1


# -- a JobFlow queued again at every sync ----------------------------------------------------------------


def _sync_while_queued_again(controller: JobFlowController, phase: str, rv: str) -> None:
    """One sync of `f` during which its Job changes again (the JobFlow is queued again meanwhile)."""
    item, _ = controller.queue.get(timeout=5.0)
    _set_job(controller, phase, rv)
    controller.handlers.update_job(_job("", str(int(rv) - 1)), _job(phase, rv))
    try:
        controller.sync_handler(item)
    finally:
        controller.queue.done(item)


def test_a_job_flow_queued_again_at_every_sync_still_writes_its_status_after_the_longest_deferral() -> None:
    controller, clientset, clock = _controller()
    controller.handlers.add_job_flow(job_flow("f"))
    _sync_next(controller)  # creates f-a; its first status is written
    _set_job(controller, "Pending", "2")
    controller.handlers.update_job(_job("", "1"), _job("Pending", "2"))
    writes = _status_writes(clientset)

    _sync_while_queued_again(controller, "Running", "3")
    assert _status_writes(clientset) == writes  # left to the sync already queued

    clock.step(status_writer.QUEUED_AGAIN_MAX_DEFERRAL)
    _sync_while_queued_again(controller, "Running", "4")

    assert _status_writes(clientset) == writes + 1
    assert _stored(clientset)["jobStatusList"][0]["state"] == "Running"
