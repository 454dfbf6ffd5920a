"""A Job that ran to completion never runs again, and a finished JobFlow creates nothing (issue 14).

A Job a JobFlow created may be deleted once it finished, by hand or by Volcano's garbage collector
(`ttlSecondsAfterFinished`). Upstream re-creates any missing Job whose targets are Completed, in
Succeed too; with our Job delete handler that happened at once and a TTL'd flow re-ran for ever.
The record that a Job ran is the JobFlow's status: its `jobStatusList` entry in state Completed
(upstream never prunes that list) or its name in `completedJobs`. The lists and conditions keep
naming only the Jobs that exist, as upstream's; the phase rules count the deleted Completed Jobs.
"""

from __future__ import annotations

from typing import Any

from jobflow_fakes import FakeClientset, deploy_job, job, job_flow, job_template, new_fake_controller

from jobflow_controller.apis import FlowRequest
from jobflow_controller.jobflow.controller import JobFlowController
from jobflow_controller.jobflow.state.pending import pending_update_status
from jobflow_controller.jobflow.state.running import running_update_status
from jobflow_controller.jobflow.world import PlannedStatus

FLOW_UID = "0b6c1e7e-5d0f-4a53-9e0e-1f4c2b9a7d11"
OLD_UID = "7f3a2c1d-0000-4bbb-8ccc-000000000001"
T0 = "2026-01-01T00:00:00Z"
CHAIN = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]


def _req(name: str = "f") -> FlowRequest:
    return JobFlowController.request_for("default", name)


def _entry(name: str, state: str) -> dict[str, Any]:
    return {
        "name": name,
        "state": state,
        "startTimestamp": T0,
        "runningHistories": [{"startTimestamp": T0, "state": state}],
    }


def _status(completed: tuple[str, ...] = (), running: tuple[str, ...] = ()) -> dict[str, Any]:
    """A status as the controller writes it: the lists, the conditions and one entry per Job."""
    status: dict[str, Any] = {
        "jobStatusList": [_entry(n, "Completed") for n in completed] + [_entry(n, "Running") for n in running],
        "conditions": {n: {"phase": "Completed"} for n in completed} | {n: {"phase": "Running"} for n in running},
    }
    if completed:
        status["completedJobs"] = list(completed)
    if running:
        status["runningJobs"] = list(running)
    return status


def _controller_with(flow: dict[str, Any], *jobs: dict[str, Any]) -> tuple[JobFlowController, FakeClientset]:
    controller, clientset, _ = new_fake_controller()
    for name in {f["name"] for f in flow["spec"]["flows"]}:
        controller.job_template_informer.get_indexer().add(job_template(name))
    controller.job_flow_informer.get_indexer().add(flow)
    clientset.api.objects[("jobflows", "default", "f")] = flow
    for j in jobs:
        controller.job_informer.get_indexer().add(j)
    return controller, clientset


def _created(clientset: FakeClientset) -> list[str]:
    return [name for verb, name in clientset.api.verbs("jobs") if verb == "create"]


def _written(clientset: FakeClientset) -> dict[str, Any]:
    status: dict[str, Any] = clientset.api.objects[("jobflows", "default", "f")]["status"]
    return status


# -- a finished JobFlow ------------------------------------------------------------------------------


def test_a_succeeded_job_flow_whose_jobs_were_deleted_is_not_deployed_again() -> None:
    flow = job_flow("f", flows=CHAIN, phase="Succeed", uid=FLOW_UID, status=_status(completed=("f-a", "f-b")))
    controller, clientset = _controller_with(flow)  # both Jobs gone (their TTL expired)

    controller.sync.handle_job_flow(_req())

    assert _created(clientset) == []  # upstream creates f-a again
    status = _written(clientset)
    assert status["state"] == {"phase": "Succeed"}
    # The lists name the Jobs that exist (none); the entries say what ran.
    assert "completedJobs" not in status and "conditions" not in status
    assert [(e["name"], e["state"]) for e in status["jobStatusList"]] == [("f-a", "Completed"), ("f-b", "Completed")]
    assert controller.metrics.succeed_count("default") == 0


def test_a_succeeded_job_flow_whose_last_job_is_deleted_stays_succeed_and_creates_nothing() -> None:
    flow = job_flow("f", flows=CHAIN, phase="Succeed", uid=FLOW_UID, status=_status(completed=("f-a", "f-b")))
    controller, clientset = _controller_with(flow, job("f-a", flow="f", owner_uid=FLOW_UID, phase="Completed"))

    controller.sync.handle_job_flow(_req())

    assert _created(clientset) == []
    assert _written(clientset)["completedJobs"] == ["f-a"]
    assert _written(clientset)["state"] == {"phase": "Succeed"}


def test_a_flow_added_to_a_succeeded_job_flow_is_not_started() -> None:
    """Upstream creates it while the JobFlow stays Succeed whatever it does (Succeed's phase rule is
    a no-op): ours creates nothing once the JobFlow has Succeeded."""
    flows = [*CHAIN, {"name": "c"}]
    flow = job_flow("f", flows=flows, phase="Succeed", uid=FLOW_UID, status=_status(completed=("f-a", "f-b")))
    controller, clientset = _controller_with(flow)

    controller.sync.handle_job_flow(_req())

    assert _created(clientset) == []


def test_a_failed_job_flow_deploys_nothing() -> None:
    flow = job_flow("f", flows=[{"name": "a"}, {"name": "b"}], phase="Failed", uid=FLOW_UID)
    controller, clientset = _controller_with(flow)

    deploy_job(controller, flow)  # the Failed state never even syncs, as upstream

    assert clientset.api.actions == []


# -- a Running JobFlow -------------------------------------------------------------------------------


def test_a_running_job_flow_does_not_recreate_a_deleted_completed_job_and_still_creates_its_dependents() -> None:
    flow = job_flow("f", flows=CHAIN, phase="Running", uid=FLOW_UID, status=_status(completed=("f-a",)))
    controller, clientset = _controller_with(flow)  # f-a completed, was recorded, and its TTL expired

    controller.sync.handle_job_flow(_req())

    assert _created(clientset) == ["f-b"]
    status = _written(clientset)
    assert status["state"] == {"phase": "Running"}
    assert "completedJobs" not in status and "conditions" not in status
    assert [(e["name"], e["state"]) for e in status["jobStatusList"]] == [("f-a", "Completed")]


def test_a_deleted_completed_job_still_counts_toward_succeed() -> None:
    flow = job_flow("f", flows=CHAIN, phase="Running", uid=FLOW_UID, status=_status(completed=("f-a",)))
    controller, clientset = _controller_with(flow, job("f-b", flow="f", owner_uid=FLOW_UID, phase="Completed"))

    controller.sync.handle_job_flow(_req())

    assert _created(clientset) == []
    status = _written(clientset)
    assert status["state"] == {"phase": "Succeed"}
    assert status["completedJobs"] == ["f-b"]
    assert [(e["name"], e["state"]) for e in status["jobStatusList"]] == [("f-a", "Completed"), ("f-b", "Completed")]
    assert controller.metrics.succeed_count("default") == 1


def test_a_job_never_recorded_completed_that_is_deleted_while_running_is_recreated() -> None:
    """Upstream's rule, which stays: a Job deleted before it completed runs again."""
    flows = [{"name": "a"}, {"name": "b"}]
    flow = job_flow("f", flows=flows, phase="Running", uid=FLOW_UID, status=_status(running=("f-a", "f-b")))
    controller, clientset = _controller_with(flow, job("f-b", flow="f", owner_uid=FLOW_UID, phase="Running"))

    controller.sync.handle_job_flow(_req())

    assert _created(clientset) == ["f-a"]
    created = next(a.body for a in clientset.api.actions if a.verb == "create")
    assert created["metadata"]["ownerReferences"][0]["uid"] == FLOW_UID


def test_a_job_recorded_completed_satisfies_its_dependents_even_when_someone_else_took_its_name() -> None:
    flow = job_flow("f", flows=CHAIN, phase="Running", uid=FLOW_UID, status=_status(completed=("f-a",)))
    squatter = job("f-a", phase="Running")  # no owner: made after ours was deleted
    controller, clientset = _controller_with(flow, squatter)

    deploy_job(controller, flow)

    assert _created(clientset) == ["f-b"]


# -- a Job seen deleted while Completed, before any status recorded it -------------------------------


def test_a_job_seen_deleted_while_completed_is_not_recreated_before_the_status_recorded_it() -> None:
    """TTL 0, a busy queue, or a JobFlow cache behind our own write: the delete event's last state
    says the Job completed, and the next status write records it."""
    flow = job_flow("f", flows=CHAIN, phase="Running", uid=FLOW_UID, status=_status(running=("f-a",)))
    controller, clientset = _controller_with(flow)

    controller.handlers.delete_job(job("f-a", flow="f", owner_uid=FLOW_UID, phase="Completed", created=T0))
    controller.sync.handle_job_flow(_req())

    assert _created(clientset) == ["f-b"]
    status = _written(clientset)
    assert "completedJobs" not in status and "runningJobs" not in status
    [entry] = status["jobStatusList"]
    assert (entry["name"], entry["state"]) == ("f-a", "Completed")
    assert [h["state"] for h in entry["runningHistories"]] == ["Running", "Completed"]


def test_a_completed_job_of_a_job_flow_no_longer_cached_is_not_remembered() -> None:
    controller, _, _ = new_fake_controller()
    controller.handlers.delete_job(job("f-a", flow="f", owner_uid=FLOW_UID, phase="Completed"))
    assert len(controller.deleted_jobs) == 0


def test_what_is_remembered_goes_with_the_job_flow() -> None:
    flow = job_flow("f", flows=CHAIN, phase="Running", uid=FLOW_UID)
    controller, _ = _controller_with(flow)
    controller.handlers.delete_job(job("f-a", flow="f", owner_uid=FLOW_UID, phase="Completed"))
    controller.handlers.delete_job(job("f-b", flow="f", owner_uid=FLOW_UID, phase="Running"))  # not Completed
    assert len(controller.deleted_jobs) == 1

    controller.handlers.delete_job_flow(flow)

    assert len(controller.deleted_jobs) == 0


# -- a JobFlow re-created under the same name ---------------------------------------------------------


def test_a_job_flow_re_created_under_the_same_name_runs_its_jobs_again() -> None:
    """The record belongs to the object it was read from: the new one's status is empty."""
    old = job_flow("f", flows=[{"name": "a"}], phase="Succeed", uid=OLD_UID, rv="5", status=_status(("f-a",)))
    controller, clientset = _controller_with(old)
    controller.handlers.delete_job(job("f-a", flow="f", owner_uid=OLD_UID, phase="Completed"))  # the GC, say
    # The server already holds the new JobFlow; the cache still shows the old one.
    new = job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID, rv="9")
    clientset.api.objects[("jobflows", "default", "f")] = new

    controller.sync.handle_job_flow(_req())

    # The old object's sync creates nothing and its status write conflicts; the re-read new
    # JobFlow runs its own Job.
    assert _created(clientset) == ["f-a"]
    created = next(a.body for a in clientset.api.actions if a.verb == "create")
    assert created["metadata"]["ownerReferences"][0]["uid"] == FLOW_UID


def test_a_re_created_job_flow_forgets_the_jobs_of_the_one_it_replaced() -> None:
    old = job_flow("f", flows=[{"name": "a"}], phase="Running", uid=OLD_UID, rv="5")
    controller, _ = _controller_with(old)
    controller.handlers.delete_job(job("f-a", flow="f", owner_uid=OLD_UID, phase="Completed"))
    assert len(controller.deleted_jobs) == 1

    controller.handlers.update_job_flow(old, job_flow("f", flows=[{"name": "a"}], uid=FLOW_UID, rv="9"))

    assert len(controller.deleted_jobs) == 0


# -- the phase rules --------------------------------------------------------------------------------


def test_the_phase_rules_count_a_deleted_completed_job_as_completed() -> None:
    running = PlannedStatus(phase="Running", completed_jobs=["f-b"], deleted_completed_jobs=["f-a"])
    running_update_status(running, 2)
    assert running.phase == "Succeed"

    pending = PlannedStatus(phase="Pending", deleted_completed_jobs=["f-a"])
    pending_update_status(pending, 2)
    assert pending.phase == "Running"

    assert "deleted_completed_jobs" not in str(running.to_dict())


def test_a_job_flow_being_deleted_creates_nothing() -> None:
    """The garbage collector deletes its Jobs first (Foreground): none of them is created again."""
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}], phase="Running")
    flow["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    controller.job_flow_informer.get_indexer().add(flow)
    controller.job_template_informer.get_indexer().add(job_template("a"))
    controller.job_template_informer.get_indexer().add(job_template("b"))
    deploy_job(controller, flow)
    assert clientset.api.verbs("jobs") == []


def test_a_job_seen_deleted_is_remembered_by_its_status_inputs_only_and_forgotten_once_recorded() -> None:
    """DeletedJobs keeps what the status needs of a deleted Completed Job, until the stored status has it."""
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], uid="u1", phase="Running")
    clientset.api.objects[("jobflows", "default", "f")] = flow
    controller.job_flow_informer.get_indexer().add(flow)
    done = job("f-a", flow="f", owner_uid="u1", phase="Completed", created="2024-01-01T00:00:00Z")
    done["spec"] = {"tasks": [{"name": "big", "template": {"spec": {"containers": [{"name": "c"}]}}}]}
    controller.handlers.delete_job(done)
    remembered = controller.deleted_jobs.recall(flow)["f-a"]
    assert "spec" not in remembered
    assert remembered["status"]["state"] == {"phase": "Completed"}
    controller.sync.handle_job_flow(controller.request_for("default", "f"))  # records it: Succeed
    controller.job_flow_informer.get_indexer().update(clientset.api.objects[("jobflows", "default", "f")])
    controller.sync.handle_job_flow(controller.request_for("default", "f"))
    assert len(controller.deleted_jobs) == 0
