"""The expansion budgets (apis/expansion.py, jobflow/params_budget.py): a flow over one gets no Job and
an `InvalidParams` Warning naming it, the others go on; an oversized matrix lists nothing."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest
from jobflow_fakes import job_flow, job_template
from test_jobflow_params_policy import world_of

from jobflow_controller.apis import expansion
from jobflow_controller.apis.params import MAX_MATRIX_COMBINATIONS, ParamsSpec
from jobflow_controller.jobflow import action
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.handler import _job_names
from jobflow_controller.jobflow.policies import choose_policy
from jobflow_controller.jobflow.world import JobCreate, JobFlowSpec, WarningEvent, World


def reading(name: str, args: list[str], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    containers = [{"name": "main", "image": "busybox", "args": args}]
    spec = {"tasks": [{"name": "main", "replicas": 1, "template": {"spec": {"containers": containers}}}]}
    out = job_template(name, spec=spec)
    if annotations:
        out["spec"]["tasks"][0]["template"]["metadata"] = {"annotations": annotations}
    return out


def steps(world: World) -> list[JobCreate | WarningEvent]:
    return [s for s in action.deploy_job(world, choose_policy(world)).steps if isinstance(s, (JobCreate, WarningEvent))]


def with_templates(world: World, **templates: dict[str, Any]) -> World:
    return World(**{**world.__dict__, "templates": {**world.templates, **templates}})


def warnings(world: World) -> list[WarningEvent]:
    return [s for s in steps(world) if isinstance(s, WarningEvent) and s.reason == c.REASON_INVALID_PARAMS]


BIG = "x" * 4096


@pytest.mark.parametrize(
    ("case", "references", "expected"),
    [
        ("under every budget", 10, None),
        ("one string over 64 KiB", 17, "an expanded string would be"),
    ],
)
def test_one_string_over_its_budget_is_refused_before_it_is_built(case: str, references: int, expected: str) -> None:
    world = world_of([{"name": "a"}, {"name": "b"}], params=[{"name": "big", "value": BIG}])
    world = with_templates(world, a=reading("a", ["$(params.big)" * references]))
    found = warnings(world)
    if expected is None:
        assert not found
        return
    (warning,) = found
    assert warning.args[:2] == ("jf-a", "a")
    assert expected in warning.args[2]
    assert [s.job_name for s in steps(world) if isinstance(s, JobCreate)] == ["jf-b"]  # the other flow goes on


def test_a_job_over_its_budget_names_the_flow_and_is_not_created() -> None:
    """The issue's case: a template reading a large param 100 times made a 2 MB Job etcd refused for ever."""
    world = world_of([{"name": "a"}], params=[{"name": "big", "value": BIG}])
    world = with_templates(world, a=reading("a", ["$(params.big)"] * 100))
    (warning,) = warnings(world)
    assert warning.message_fmt == c.MESSAGE_INVALID_PARAMS
    assert warning.args[2] == (
        f"expansion would add {100 * (4096 - 13)} characters to its Job, more than the {expansion.MAX_JOB_EXPANSION}"
        " allowed"
    )
    assert not [s for s in steps(world) if isinstance(s, JobCreate)]


def test_the_job_flows_jobs_together_are_budgeted_every_matrix_index_counted() -> None:
    """16 x 16 Jobs each adding 40 KiB (under the Job's budget) add 10 MiB: over the JobFlow's 4 MiB."""
    matrix = {
        "params": [
            {"name": "x", "values": [str(i) for i in range(16)]},
            {"name": "y", "values": list("abcdefghijklmnop")},
        ]
    }
    world = world_of(
        [{"name": "small"}, {"name": "m", "matrix": matrix, "dependsOn": {"targets": ["small"]}}],
        params=[{"name": "big", "value": BIG}],
    )
    world = with_templates(world, m=reading("m", ["$(params.big)"] * 10), small=reading("small", ["$(params.big)"]))
    policy = choose_policy(world)
    assert set(policy.over_budget) == {"m"}  # type: ignore[attr-defined]
    assert "more than the 4194304 allowed" in policy.over_budget["m"]  # type: ignore[attr-defined]
    assert [s.job_name for s in steps(world) if isinstance(s, JobCreate)] == ["jf-small"]


def test_a_when_input_over_its_budget_is_never_expanded_and_its_flow_waits_with_the_warning() -> None:
    when = [{"input": "$(params.big)" * 20, "operator": "in", "values": ["x"]}]
    world = world_of([{"name": "a", "when": when}], params=[{"name": "big", "value": BIG}])
    (warning,) = warnings(world)
    assert warning.args[2] == f"when[0].input would expand to {20 * 4096} characters, more than the 65536 allowed"
    assert not [s for s in steps(world) if isinstance(s, JobCreate)]


@pytest.mark.parametrize(("length", "refused"), [(4096, False), (20_000, True)])
def test_a_matrix_values_annotation_over_kubernetes_total_is_refused(length: int, refused: bool) -> None:
    """16 values of 4 KiB (the CRD's bound) fit; stored past the CRD (an old one), 16 x 20 KB do not:
    every create failed, at every sync, before."""
    lists = [{"name": f"p{i}", "values": ["v" * length]} for i in range(16)]
    world = world_of([{"name": "m", "matrix": {"params": lists}}])
    found = warnings(world)
    if not refused:
        assert not found and [s.job_name for s in steps(world)] == ["jf-m-0"]
        return
    (warning,) = found
    assert warning.args[:2] == ("jf-m-0", "m")
    assert warning.args[2].startswith("its Job's annotations would be ")
    assert warning.args[2].endswith("bytes, more than the 262144 Kubernetes allows")


def test_an_oversized_matrix_lists_no_job_name_anywhere() -> None:
    """3 lists of 256 values are 16.7 M combinations: listing their names took gigabytes."""
    lists = [{"name": f"p{i}", "values": [str(v) for v in range(256)]} for i in range(3)]
    obj = job_flow("jf", flows=[{"name": "m", "matrix": {"params": lists}}, {"name": "b"}], uid="u")
    tracemalloc.start()
    spec = JobFlowSpec.of(obj)
    names = spec.job_names("jf", "m")
    handler_names = _job_names(obj)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert names == [] and handler_names == {"jf-b"}
    assert peak < 5 * 1024 * 1024
    found = ParamsSpec.of(obj, spec.flows)
    assert found is not None and found.matrices["m"].size == 256**3 > MAX_MATRIX_COMBINATIONS
    assert found.matrices["m"].combinations() == []
