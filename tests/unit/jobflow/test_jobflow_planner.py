"""The sync's decisions as a pure function (action.py): every Job phase against every JobFlow phase,
and random DAGs driven to the end against a small reference model of upstream's rules."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jobflow_fakes import job, job_flow, job_template

from jobflow_controller.apis import Action, JobPhase, Phase
from jobflow_controller.jobflow import action
from jobflow_controller.jobflow.state import UpdateJobFlowStatusFn, new_state
from jobflow_controller.jobflow.world import JobCreate, JobFlowSpec, SyncPlan, World

UID = "uid-f"
NOW = datetime(2024, 1, 1, tzinfo=UTC)

#: Every Volcano Job phase (the enum is pinned to upstream's by test_phase_enum_values_are_upstreams),
#: no phase yet, and one this controller does not know.
JOB_PHASES = [*(p.value for p in JobPhase), "", "SomethingNew"]
FLOW_PHASES = ["", "Pending", "Running", "Succeed", "Terminating", "Failed"]
LIST_OF = {
    "Pending": "pendingJobs",
    "Running": "runningJobs",
    "Completed": "completedJobs",
    "Failed": "failedJobs",
    "Terminated": "terminatedJobs",
    "Completing": None,
    "Terminating": None,
}


def world_of(flow_obj: dict[str, Any], jobs: list[dict[str, Any]]) -> World:
    spec = JobFlowSpec.of(flow_obj)
    return World(
        job_flow=flow_obj,
        spec=spec,
        jobs=tuple(jobs),
        named_jobs={j["metadata"]["name"]: j for j in jobs},
        templates={f.name: job_template(f.name) for f in spec.flows},
        deleted_completed={},
        expected=frozenset(),
        probes={},
        now=NOW,
    )


def plan_through_state(world: World) -> SyncPlan | None:
    """What upstream's state machine makes of the world: None when the phase syncs nothing."""
    plans: list[SyncPlan] = []

    def sync(job_flow: Any, update_state_fn: UpdateJobFlowStatusFn) -> None:
        plans.append(action.sync_job_flow(world, update_state_fn))

    state = new_state(world.job_flow, sync)
    assert state is not None
    state.execute(Action.SYNC_JOB_FLOW)
    return plans[0] if plans else None


def expected_phase(flow_phase: str, job_phase: str) -> str:
    """Upstream's phase table for `a -> b` with only a's Job there, in `job_phase`."""
    failed = job_phase in ("Failed", "Terminated")
    if flow_phase in ("", "Pending"):
        if failed:
            return Phase.FAILED
        return Phase.RUNNING if job_phase in ("Running", "Completed") else Phase.PENDING
    if flow_phase == "Running":
        return Phase.FAILED if failed else Phase.RUNNING
    return flow_phase


@pytest.mark.parametrize("flow_phase", FLOW_PHASES)
@pytest.mark.parametrize("job_phase", JOB_PHASES)
def test_every_job_phase_against_every_job_flow_phase(flow_phase: str, job_phase: str) -> None:
    flows = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    a = job("f-a", flow="f", owner_uid=UID, phase=job_phase)
    plan = plan_through_state(world_of(job_flow("f", flows=flows, phase=flow_phase, uid=UID), [a]))
    if flow_phase in ("Terminating", "Failed"):
        assert plan is None  # upstream's terminal states sync nothing
        return
    assert plan is not None and plan.status is not None
    creates = [s.job_name for s in plan.deploy.steps if isinstance(s, JobCreate)]
    assert creates == (["f-b"] if job_phase == "Completed" and flow_phase != "Succeed" else [])
    body = plan.status_body()
    assert body["state"] == {"phase": expected_phase(flow_phase, job_phase)}
    listed = {key for key in ("pendingJobs", "runningJobs", "completedJobs", "failedJobs", "terminatedJobs")}
    lists = {key: body[key] for key in listed | {"unKnowJobs"} if key in body}
    where = LIST_OF.get(job_phase, "unKnowJobs")
    assert lists == ({where: ["f-a"]} if where else {})
    assert body["conditions"] == {"f-a": {"phase": job_phase} if job_phase else {}}


# -- random DAGs against a reference model -----------------------------------------------------------
@st.composite
def dags(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Flows n0..nk, each depending on a random subset of the earlier ones (so no cycle)."""
    n = draw(st.integers(1, 6))
    flows: list[dict[str, Any]] = []
    for i in range(n):
        targets = draw(st.lists(st.integers(0, i - 1), unique=True, max_size=i)) if i else []
        flow: dict[str, Any] = {"name": f"n{i}"}
        if targets or draw(st.booleans()):
            flow["dependsOn"] = {"targets": [f"n{t}" for t in sorted(targets)]}
        flows.append(flow)
    return flows


def reference_phase(previous: str, phases: dict[str, str], total: int) -> str:
    """Our rules, written as plainly as possible (state/pending.py, state/running.py).

    Pending's Running rule looks at Failed Jobs only (upstream's, volcano-jobflow.md): a Terminated
    Job beside a Running one leaves the JobFlow Running until the Running rule fails it.
    """
    completed = sum(1 for p in phases.values() if p == "Completed")
    failed = any(p in ("Failed", "Terminated") for p in phases.values())
    running = any(p == "Running" for p in phases.values())
    if previous in ("", "Pending"):
        if completed == total:
            return "Succeed"
        if (running or completed) and not any(p == "Failed" for p in phases.values()):
            return "Running"
        return "Failed" if failed else "Pending"
    if previous == "Running":
        return "Succeed" if completed == total else ("Failed" if failed else "Running")
    return previous


@settings(max_examples=150, deadline=None)
@given(
    flows=dags(),
    outcomes=st.lists(st.sampled_from(["Running", "Completed", "Completed", "Failed", "Terminated"]), max_size=40),
)
def test_random_dags_create_each_job_once_when_due_and_reach_the_reference_phase(
    flows: list[dict[str, Any]], outcomes: list[str]
) -> None:
    targets = {f["name"]: (f.get("dependsOn") or {}).get("targets", []) for f in flows}
    phases: dict[str, str] = {}  # flow -> its Job's phase, once created
    status: dict[str, Any] = {}
    flow_phase = ""
    for outcome in [*outcomes, *["Completed"] * (3 * len(flows))]:
        obj = job_flow("f", flows=flows, uid=UID, status=status)
        jobs = [job(f"f-{name}", flow="f", owner_uid=UID, phase=p) for name, p in phases.items()]
        plan = plan_through_state(world_of(obj, jobs))
        if plan is None:
            break
        assert plan.status is not None
        due = [
            n
            for n in targets
            if n not in phases
            and flow_phase not in ("Succeed", "Failed")
            and all(phases.get(t) == "Completed" for t in targets[n])
        ]
        created = [s.flow for s in plan.deploy.steps if isinstance(s, JobCreate)]
        assert created == due
        flow_phase = reference_phase(flow_phase, phases, len(flows))
        assert plan.status.phase == flow_phase
        status = plan.status_body()
        for name in created:
            phases[name] = "Pending"
        unfinished = sorted(n for n, p in phases.items() if p in ("Pending", "Running"))
        if unfinished:
            phases[unfinished[len(outcomes) % len(unfinished)]] = outcome
    if all(p == "Completed" for p in phases.values()) and len(phases) == len(flows):
        assert flow_phase == "Succeed"
    if any(p in ("Failed", "Terminated") for p in phases.values()):
        assert flow_phase in ("Failed", "Running")  # Running: see reference_phase; the next sync fails it
