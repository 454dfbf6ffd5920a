"""The params policy at its named points (docs/params.md), one behaviour each: the Job a flow makes, the
`when` skip and its event, a waiting matrix flow's one patch Warning, a JobFlow without the fields."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from jobflow_fakes import job, job_flow, job_template

from jobflow_controller.apis.params import MATRIX_INDEX_LABEL
from jobflow_controller.jobflow import action
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.flow_policy import FlowPolicy
from jobflow_controller.jobflow.params_policy import ParamsPolicy
from jobflow_controller.jobflow.policies import choose_policy
from jobflow_controller.jobflow.rules_policy import FailureAwarePolicy
from jobflow_controller.jobflow.world import JobCreate, JobFlowSpec, WarningEvent, World

UID = "uid-p"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
ARGS = ["$(params.mode)", "$(matrix.x)", "$(context.matrix.index)", "$$(params.mode)", "$(HOME)"]


def template(name: str, **spec: Any) -> dict[str, Any]:
    containers = [{"name": "main", "image": "busybox", "args": list(ARGS)}]
    body = {"tasks": [{"name": "main", "replicas": 1, "template": {"spec": {"containers": containers}}}], **spec}
    return job_template(name, spec=body)


def world_of(flows: list[dict[str, Any]], jobs: list[dict[str, Any]] | None = None, **spec: Any) -> World:
    jobs = jobs or []
    obj = job_flow("jf", flows=flows, uid=UID)
    obj["spec"].update(spec)
    parsed = JobFlowSpec.of(obj)
    return World(
        job_flow=obj,
        spec=parsed,
        jobs=tuple(jobs),
        named_jobs={j["metadata"]["name"]: j for j in jobs},
        templates={f.name: template(f.name) for f in parsed.flows},
        deleted_completed={},
        expected=frozenset(),
        probes={},
        now=NOW,
    )


def creates(world: World) -> list[JobCreate]:
    return [s for s in action.deploy_job(world, choose_policy(world)).steps if isinstance(s, JobCreate)]


def args_of(create: JobCreate) -> list[str]:
    assert create.body is not None
    return list(create.body["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"])


def test_a_job_flow_without_the_new_fields_gets_its_old_policy_and_verbatim_jobs() -> None:
    plain = world_of([{"name": "a"}])
    assert type(choose_policy(plain)) is FlowPolicy
    assert args_of(creates(plain)[0]) == ARGS
    ruled = world_of([{"name": "a"}], failurePolicy="RunToCompletion")
    assert type(choose_policy(ruled)) is FailureAwarePolicy
    assert args_of(creates(ruled)[0]) == ARGS


def test_params_expand_a_flows_job() -> None:
    world = world_of([{"name": "a"}], params=[{"name": "mode", "value": "full"}])
    assert isinstance(choose_policy(world), ParamsPolicy)
    (made,) = creates(world)
    assert made.job_name == "jf-a"
    assert args_of(made) == ["full", "$(matrix.x)", "$(context.matrix.index)", "$(params.mode)", "$(HOME)"]
    assert made.body is not None and MATRIX_INDEX_LABEL not in made.body["metadata"]["labels"]


def test_a_matrix_flow_starts_with_max_parallel_jobs_in_index_order() -> None:
    matrix = {"params": [{"name": "x", "values": ["a", "b", "c"]}], "maxParallel": 2}
    made = creates(world_of([{"name": "m", "matrix": matrix}]))
    assert [m.job_name for m in made] == ["jf-m-0", "jf-m-1"]
    assert [args_of(m)[1:3] for m in made] == [["a", "0"], ["b", "1"]]


def test_a_finished_job_makes_room_for_the_next_index_only() -> None:
    matrix = {"params": [{"name": "x", "values": ["a", "b", "c", "d"]}], "maxParallel": 2}
    jobs = [job("jf-m-0", flow="jf", owner_uid=UID, phase="Completed"), job("jf-m-1", flow="jf", owner_uid=UID)]
    assert [m.job_name for m in creates(world_of([{"name": "m", "matrix": matrix}], jobs))] == ["jf-m-2"]


def test_a_false_when_skips_the_flow_with_its_message_and_its_all_completed_dependent() -> None:
    flows = [
        {"name": "gate", "when": [{"input": "$(params.mode)", "operator": "in", "values": ["full"]}]},
        {"name": "next", "dependsOn": {"targets": ["gate"]}},
    ]
    world = world_of(flows, params=[{"name": "mode", "value": "dry"}])
    plan = action.sync_job_flow(world, lambda status, total: None)
    assert plan.deploy.steps == []
    assert plan.status is not None and plan.status.skipped_jobs == ["jf-gate", "jf-next"]
    assert [(n.reason, n.message_fmt % n.args) for n in plan.notices] == [
        (c.REASON_SKIPPED, 'flow gate skipped: when "$(params.mode)" (= "dry") in [full] is false'),
        (c.REASON_SKIPPED, "Flow next is skipped: its rule AllCompleted can no longer be met (gate: Skipped)"),
    ]


def test_a_waiting_matrix_flow_with_a_bad_patch_gets_one_warning() -> None:
    matrix = {"params": [{"name": "x", "values": ["a", "b", "c"]}]}
    bad = {"jobSpec": {"tasks": [{"name": "nope", "replicas": 2}]}}
    flows = [{"name": "a"}, {"name": "m", "matrix": matrix, "dependsOn": {"targets": ["a"]}, "patch": bad}]
    world = world_of(flows)
    steps = action.deploy_job(world, choose_policy(world)).steps
    assert [s.job_name for s in steps if isinstance(s, JobCreate)] == ["jf-a"]
    assert [s.reason for s in steps if isinstance(s, WarningEvent)] == [c.REASON_INVALID_PATCH]
