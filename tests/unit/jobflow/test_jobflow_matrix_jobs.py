"""A matrix flow's Jobs are its Jobs everywhere (docs/params.md): the status, the retain policy, the policy.

One function says which Jobs a flow has (`apis/params.flow_job_names`, through `World.flow_job_names`
and the policy's `jobs`); these pin the steps that once assumed one Job per flow.
"""

from __future__ import annotations

from typing import Any

from jobflow_fakes import get_all_job_status, job, job_flow, job_template, new_fake_controller

from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION, retry_request_value
from jobflow_controller.jobflow.controller import request_for
from jobflow_controller.jobflow.policies import choose_policy
from jobflow_controller.jobflow.world import World

MATRIX = {"params": [{"name": "p", "values": ["x", "y"]}]}
UID = "u-m"


def _flow(phase: str, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return job_flow("jf", flows=[{"name": "a", "matrix": MATRIX}], retain="delete", phase=phase, uid=UID, status=status)


def test_a_matrix_flow_with_retain_delete_has_all_its_jobs_deleted_at_the_end() -> None:
    controller, clientset, _ = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    for name in ("jf-a-0", "jf-a-1"):
        done = job(name, flow="jf", phase="Completed", owner_uid=UID)
        controller.job_informer.get_indexer().add(done)
        clientset.api.objects[("jobs", "default", name)] = done
    controller.job_flow_informer.get_indexer().add(_flow("Running"))
    controller.sync.handle_job_flow(request_for("default", "jf"))
    written = [a for a in clientset.api.actions if a.verb == "update_status"][-1].body
    assert written["status"]["state"]["phase"] == "Succeed"
    controller.job_flow_informer.get_indexer().update(
        {**written, "metadata": {**written["metadata"], "resourceVersion": "9"}}
    )
    controller.sync.handle_job_flow(request_for("default", "jf"))
    assert sorted(n for v, n in clientset.api.verbs("jobs") if v == "delete") == ["jf-a-0", "jf-a-1"]


def test_a_matrix_job_recorded_completed_and_since_deleted_counts_as_completed() -> None:
    """get_all_job_status lists a gone Completed Job of a matrix flow among the deleted Completed ones
    (it once looked for `<jobflow>-<flow>` only)."""
    controller, _, _ = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    controller.job_informer.get_indexer().add(job("jf-a-1", flow="jf", phase="Completed", owner_uid=UID))
    recorded = {"jobStatusList": [{"name": "jf-a-0", "state": "Completed"}, {"name": "jf-a-1", "state": "Completed"}]}
    status = get_all_job_status(controller, _flow("Running", recorded))
    assert status.deleted_completed_jobs == ["jf-a-0"]  # type: ignore[attr-defined]


def test_every_step_names_a_matrix_flows_jobs_alike() -> None:
    controller, _, _ = new_fake_controller()
    world: World = controller.sync.observe(_flow("Running"))[0]
    flow = world.spec.flows[0]
    assert world.flow_job_names("a") == choose_policy(world).jobs(flow) == ["jf-a-0", "jf-a-1"]
    assert world.spec.job_names("jf", "a") == ["jf-a-0", "jf-a-1"]


def test_a_rerun_asked_by_annotation_is_written_by_the_sync_through_the_controller() -> None:
    """The re-run's status goes through the sync's one policy (sync.py `_lifecycle_first`), written at once."""
    controller, clientset, _ = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    failed = job_flow("jf", flows=[{"name": "a"}], phase="Failed", uid=UID)
    failed["metadata"]["annotations"] = {RETRY_REQUEST_ANNOTATION: retry_request_value("r1")}
    controller.job_informer.get_indexer().add(job("jf-a", flow="jf", phase="Failed", owner_uid=UID))
    controller.job_flow_informer.get_indexer().add(failed)
    controller.sync.handle_job_flow(request_for("default", "jf"))
    written = [a for a in clientset.api.actions if a.verb == "update_status"][-1].body["status"]
    assert written["state"] == {"phase": "Running"} and written["retryRequest"] == "r1"
