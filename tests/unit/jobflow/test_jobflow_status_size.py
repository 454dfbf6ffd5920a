"""A status too large to store fails the JobFlow with one that fits, and says so (status_writer.py `fit_status`)."""

from __future__ import annotations

from typing import Any

from jobflow_fakes import job, job_flow, job_template, new_fake_controller

from jobflow_controller.jobflow.status_writer import STATUS_SIZE_LIMIT, status_size

UID = "uid-big"


def _many_tasks_job(name: str, tasks: int) -> dict[str, Any]:
    """A Running Job whose taskStatusCount (copied into the JobFlow's conditions) is about 90 bytes a task."""
    obj = job(name, flow="big", owner_uid=UID, phase="Running", created="2024-01-01T00:00:00Z")
    obj["status"]["taskStatusCount"] = {f"task-{i:04d}-{'x' * 50}": {"phase": {"Running": 1}} for i in range(tasks)}
    return obj


def _sync_big(jobs: int, tasks: int) -> tuple[dict[str, Any], list[str]]:
    controller, clientset, recorder = new_fake_controller()
    flows = [{"name": f"f{i}"} for i in range(jobs)]
    controller.job_flow_informer.get_indexer().add(job_flow("big", flows=flows, uid=UID, phase="Running"))
    for i in range(jobs):
        controller.job_template_informer.get_indexer().add(job_template(f"f{i}"))
        controller.job_informer.get_indexer().add(_many_tasks_job(f"big-f{i}", tasks))
    controller.sync.handle_job_flow(controller.request_for("default", "big"))
    writes = [a.body["status"] for a in clientset.api.actions if a.verb == "update_status"]
    assert len(writes) == 1
    return writes[0], recorder.drain()


def test_a_status_over_the_limit_fails_the_job_flow_with_a_status_that_fits_and_a_warning() -> None:
    status, events = _sync_big(jobs=60, tasks=250)  # about 1.3 MiB of conditions
    assert status["state"] == {"phase": "Failed"}
    assert status_size(status) <= STATUS_SIZE_LIMIT
    assert sorted(status["runningJobs"]) == sorted(f"big-f{i}" for i in range(60))  # the lists still say where
    assert "conditions" not in status and len(status["jobStatusList"]) == 60
    [warning] = [e for e in events if "StatusTooLarge" in e]
    assert warning.startswith("Warning StatusTooLarge The status of ")
    assert f"over the limit of {STATUS_SIZE_LIMIT} bytes" in warning
    assert warning.endswith("written without: running histories but the last, conditions")


def test_a_status_under_the_limit_is_written_as_computed() -> None:
    status, events = _sync_big(jobs=10, tasks=250)
    assert status["state"] == {"phase": "Running"}
    assert len(status["conditions"]) == 10
    assert not [e for e in events if "StatusTooLarge" in e]


def test_the_status_limit_leaves_etcd_room_for_a_large_spec() -> None:
    """A 1 MB spec (params, `when`, matrix values) leaves about 0.4 MiB of etcd's 1.5 MiB for the status."""
    from jobflow_controller.jobflow.status_writer import HEADROOM, OBJECT_SIZE_LIMIT, status_size_limit

    small = job_flow("jf", flows=[{"name": "a"}])
    assert status_size_limit(small) == STATUS_SIZE_LIMIT
    big = job_flow("jf", flows=[{"name": "a"}])
    big["spec"]["params"] = [{"name": "p", "value": "x" * 1_000_000}]
    limit = status_size_limit(big)
    assert OBJECT_SIZE_LIMIT - HEADROOM - 1_001_000 < limit < OBJECT_SIZE_LIMIT - HEADROOM - 1_000_000


def test_the_status_limit_ignores_the_managed_fields_of_the_status_it_replaces() -> None:
    """An object read from the API server carries managedFields as large as its status; they are
    written anew with the next status, so they leave the limit at 1 MiB for a small spec."""
    from jobflow_controller.jobflow.status_writer import status_size_limit

    read = job_flow("jf", flows=[{"name": "a"}])
    read["metadata"]["managedFields"] = [{"manager": "jobflow-controller", "fieldsV1": {"x" * 900_000: {}}}]
    assert status_size_limit(read) == STATUS_SIZE_LIMIT
