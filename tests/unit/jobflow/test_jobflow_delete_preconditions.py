"""Every delete the controller makes names the uid it means (issue 33 item 6, docs/deviations.md).

The retain policy's delete of a Succeeded JobFlow's Jobs goes by the uid the cache holds: when the
cache lags and the name already holds another Job (deleted and re-created by someone else), the
API server refuses with 409 Conflict, which is "already gone", never an error to retry.
"""

from __future__ import annotations

from typing import Any

from jobflow_fakes import job, job_flow, new_fake_controller


def _retained(uid: str) -> tuple[Any, Any, dict[str, Any]]:
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], retain="delete", phase="Succeed")
    cached = job("f-a", flow="f", phase="Completed")
    cached["metadata"]["uid"] = "uid-ours"
    controller.job_informer.get_indexer().add(cached)
    clientset.api.objects[("jobs", "default", "f-a")] = {"metadata": {"name": "f-a", "uid": uid}}
    clientset.api.actions.clear()
    return controller, clientset, flow


def _deletes(clientset: Any) -> list[tuple[str, Any]]:
    return [(a.name, a.body) for a in clientset.api.actions if a.verb == "delete"]


def test_the_retain_policy_deletes_a_job_with_its_uid_as_precondition() -> None:
    controller, clientset, flow = _retained(uid="uid-ours")
    controller.sync.sync_job_flow(flow, lambda *_: None)
    assert _deletes(clientset) == [("f-a", {"preconditions": {"uid": "uid-ours"}})]
    assert ("jobs", "default", "f-a") not in clientset.api.objects


def test_a_foreign_job_recreated_under_the_name_is_never_deleted_and_the_conflict_is_no_error() -> None:
    controller, clientset, flow = _retained(uid="uid-someone-elses")
    controller.sync.sync_job_flow(flow, lambda *_: None)  # no error: the 409 means "ours is gone"
    assert _deletes(clientset) == [("f-a", {"preconditions": {"uid": "uid-ours"}})]
    assert clientset.api.objects[("jobs", "default", "f-a")]["metadata"]["uid"] == "uid-someone-elses"
