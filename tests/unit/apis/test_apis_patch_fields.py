"""Which fields a patch may set under `--jobflow-patch-allowed-fields` (issue 21, item 7; docs/patch.md)."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.apis.patch import PatchError
from jobflow_controller.apis.patch_fields import (
    PatchFields,
    apply_allowed_patch,
    parse_patch_fields,
    patch_field_problems,
)

SCALE = "tasks.replicas,minAvailable"
RESOURCES = "tasks.template.spec.containers.resources"


def fields(value: str) -> PatchFields | None:
    return parse_patch_fields(value.split(","))


def container(**extra: Any) -> dict[str, Any]:
    return {"name": "main", **extra}


def task(**extra: Any) -> dict[str, Any]:
    return {"name": "worker", **extra}


def pod(**spec: Any) -> dict[str, Any]:
    return task(template={"spec": spec})


def paths(job_spec: dict[str, Any], allowed: str) -> list[str]:
    """Where the patch sets a field that `allowed` does not allow."""
    return [err.path for err in patch_field_problems({"jobSpec": job_spec}, fields(allowed))]


@pytest.mark.parametrize(
    ("allowed", "job_spec", "refused"),
    [
        # top-level fields
        (SCALE, {"minAvailable": 3}, []),
        (SCALE, {"minAvailable": 3, "priorityClassName": "high"}, ["patch.jobSpec.priorityClassName"]),
        (SCALE, {"queue": "research"}, ["patch.jobSpec.queue"]),
        # into the keyed list `tasks`: the task's name only says which task
        (SCALE, {"tasks": [task(replicas=4)]}, []),
        (SCALE, {"tasks": [task(replicas=4, minAvailable=2)]}, ["patch.jobSpec.tasks[0].minAvailable"]),
        (SCALE, {"tasks": [task(), task(name="ps", maxRetry=9)]}, ["patch.jobSpec.tasks[1].maxRetry"]),
        # nested keyed lists: containers by name
        (RESOURCES, {"tasks": [pod(containers=[container(resources={"limits": {"cpu": "2"}})])]}, []),
        (
            RESOURCES,
            {"tasks": [pod(containers=[container(image="evil:1", resources={})])]},
            ["patch.jobSpec.tasks[0].template.spec.containers[0].image"],
        ),
        (
            RESOURCES,
            {"tasks": [pod(serviceAccountName="admin", containers=[])]},
            ["patch.jobSpec.tasks[0].template.spec.serviceAccountName"],
        ),
        (
            RESOURCES,
            {"tasks": [pod(containers=[container(securityContext={"privileged": True})])]},
            ["patch.jobSpec.tasks[0].template.spec.containers[0].securityContext"],
        ),
        # a path covers everything under it
        (
            "tasks.template.spec.containers",
            {"tasks": [pod(containers=[container(image="x", env=[{"name": "A"}])])]},
            [],
        ),
        ("tasks", {"tasks": [task(replicas=1, template={"spec": {"hostNetwork": True}})]}, []),
        # a list that is no keyed list is a value: only naming it allows it
        (
            "tasks.template.spec.volumes.name",
            {"tasks": [pod(volumes=[{"name": "v", "hostPath": {"path": "/"}}])]},
            ["patch.jobSpec.tasks[0].template.spec.volumes[0].hostPath"],
        ),
        ("policies.event", {"policies": [{"event": "PodFailed"}]}, ["patch.jobSpec.policies"]),
        # env is keyed by name inside a container
        (
            "tasks.template.spec.containers.env.value",
            {"tasks": [pod(containers=[container(env=[{"name": "A", "value": "1"}])])]},
            [],
        ),
        # ports are keyed by containerPort and protocol: both only say which port
        (
            "tasks.template.spec.containers.ports.hostPort",
            {"tasks": [pod(containers=[container(ports=[{"containerPort": 80, "protocol": "UDP", "hostPort": 80}])])]},
            [],
        ),
        # the CRD's defaults, written by the API server into every stored patch, set nothing
        (SCALE, {"maxRetry": 3, "queue": "default", "minAvailable": 2}, []),
        (SCALE, {"maxRetry": 4}, ["patch.jobSpec.maxRetry"]),
        # a null deletes the template's value: it is a change like any other
        (SCALE, {"schedulerName": None}, ["patch.jobSpec.schedulerName"]),
        # none allows no field at all
        (
            "none",
            {"minAvailable": 3, "tasks": [task(replicas=1)]},
            ["patch.jobSpec.minAvailable", "patch.jobSpec.tasks"],
        ),
        ("none", {"maxRetry": 3, "queue": "default"}, []),
    ],
)
def test_the_fields_a_patch_sets_outside_the_allowed_ones(
    allowed: str, job_spec: dict[str, Any], refused: list[str]
) -> None:
    assert paths(job_spec, allowed) == refused


def test_unset_allows_every_field() -> None:
    assert parse_patch_fields([]) is None
    assert parse_patch_fields([""]) is None
    assert patch_field_problems({"jobSpec": {"queue": "x"}}, None) == []


def test_no_patch_sets_nothing() -> None:
    assert patch_field_problems(None, fields("none")) == []
    assert patch_field_problems({}, fields("none")) == []


def test_the_message_names_the_allowed_fields() -> None:
    (err,) = patch_field_problems({"jobSpec": {"queue": "research"}}, fields("tasks.replicas, minAvailable"))
    assert str(err) == (
        "patch.jobSpec.queue: not among the fields a patch may set "
        "(--jobflow-patch-allowed-fields=minAvailable,tasks.replicas)"
    )
    (err,) = patch_field_problems({"jobSpec": {"queue": "research"}}, fields("none"))
    assert str(err) == "patch.jobSpec.queue: patches may set no field (--jobflow-patch-allowed-fields=none)"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("tasks[0].replicas", "'tasks[0].replicas' is not a dotted field path below jobSpec"),
        ("tasks..replicas", "'tasks..replicas' is not a dotted field path below jobSpec"),
        ("none,queue", "'none' cannot be given with fields"),
    ],
)
def test_a_value_that_is_no_field_path_is_refused(value: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        fields(value)


def test_apply_allowed_patch_merges_an_allowed_patch_and_refuses_another() -> None:
    spec = {"queue": "q", "tasks": [task(replicas=1)]}
    patch = {"jobSpec": {"tasks": [task(replicas=3)]}}
    assert apply_allowed_patch(spec, patch, fields(SCALE)) == {"queue": "q", "tasks": [task(replicas=3)]}
    with pytest.raises(PatchError, match=r"patch\.jobSpec\.tasks: not among"):
        apply_allowed_patch(spec, patch, fields("minAvailable"))


def test_a_bad_shape_is_reported_before_the_fields() -> None:
    with pytest.raises(PatchError, match=r"has no name"):
        apply_allowed_patch({}, {"jobSpec": {"queue": "x", "tasks": [{"replicas": 1}]}}, fields("none"))
