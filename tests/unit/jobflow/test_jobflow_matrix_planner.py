"""The planner with matrices and `maxParallel` (docs/params.md), driven to the end against a reference model.

Random chains and DAGs of flows, some with a matrix (up to 6 combinations) and a `maxParallel`, under
FailFast or RunToCompletion; each sync's creates are compared with a small model of the rules:
a flow is due once its targets Completed; a matrix flow's Jobs are created in index order, never more
than `maxParallel` unfinished at once, none after one of them failed; the flow Completed once every
Job did, Failed as soon as one failed; under FailFast a failure halts every flow.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jobflow_fakes import job, job_flow
from test_jobflow_planner import plan_through_state, world_of

from jobflow_controller.apis.params import MATRIX_INDEX_LABEL, MATRIX_PARAMS_ANNOTATION
from jobflow_controller.jobflow.world import JobCreate

UID = "uid-m"
UNFINISHED = ("Pending", "Running")


@st.composite
def pipelines(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str]:
    """Flows n0..nk (each after a random subset of the earlier ones), some with a matrix; a failure policy."""
    flows: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 4))):
        flow: dict[str, Any] = {"name": f"n{i}"}
        targets = draw(st.lists(st.integers(0, i - 1), unique=True, max_size=i)) if i else []
        if targets:
            flow["dependsOn"] = {"targets": [f"n{t}" for t in sorted(targets)]}
        if draw(st.booleans()):
            sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).filter(lambda s: s[0] * s[-1] <= 6))
            flow["matrix"] = {
                "params": [{"name": f"p{k}", "values": [f"v{k}{j}" for j in range(n)]} for k, n in enumerate(sizes)]
            }
            if draw(st.booleans()):
                flow["matrix"]["maxParallel"] = draw(st.integers(1, 3))
        flows.append(flow)
    return flows, draw(st.sampled_from(["FailFast", "RunToCompletion"]))


class Model:
    """The rules, written plainly: each flow's Jobs (names in index order) and their phases."""

    def __init__(self, flows: list[dict[str, Any]], policy: str) -> None:
        self.flows = flows
        self.policy = policy
        self.targets = {f["name"]: (f.get("dependsOn") or {}).get("targets", []) for f in flows}
        self.jobs: dict[str, list[str]] = {}
        self.parallel: dict[str, int] = {}
        self.values: dict[str, list[dict[str, str]]] = {}
        for f in flows:
            matrix = f.get("matrix")
            if matrix is None:
                self.jobs[f["name"]] = [f"jf-{f['name']}"]
                self.parallel[f["name"]] = 1
                continue
            combos: list[dict[str, str]] = [{}]
            for p in matrix["params"]:
                combos = [{**c, p["name"]: v} for c in combos for v in p["values"]]
            self.values[f["name"]] = combos
            self.jobs[f["name"]] = [f"jf-{f['name']}-{i}" for i in range(len(combos))]
            self.parallel[f["name"]] = matrix.get("maxParallel", len(combos))
        self.phases: dict[str, str] = {}  # Job name -> phase, once created

    def outcome(self, flow: str) -> str | None:
        phases = [self.phases.get(n) for n in self.jobs[flow]]
        if any(p in ("Failed", "Terminated") for p in phases):
            return "Failed"
        if all(p == "Completed" for p in phases):
            return "Completed"
        targets = [self.outcome(t) for t in self.targets[flow]]
        if not any(p is not None for p in phases) and any(t in ("Failed", "Skipped") for t in targets):
            return "Skipped"
        return None

    def halted(self) -> bool:
        return self.policy == "FailFast" and any(self.outcome(f["name"]) == "Failed" for f in self.flows)

    def due(self) -> list[str]:
        """The Jobs the next sync creates, in spec order then index order."""
        if self.halted():
            return []
        out: list[str] = []
        for f in self.flows:
            name = f["name"]
            if self.outcome(name) is not None or not all(self.outcome(t) == "Completed" for t in self.targets[name]):
                continue
            names = self.jobs[name]
            unfinished = sum(1 for n in names if self.phases.get(n) in UNFINISHED)
            room = self.parallel[name] - unfinished
            out.extend([n for n in names if n not in self.phases][: max(room, 0)])
        return out

    def final_phase(self) -> str | None:
        """Succeed or Failed once nothing more can run; None before."""
        if self.halted():
            return "Failed"
        outcomes = [self.outcome(f["name"]) for f in self.flows]
        if any(o is None for o in outcomes):
            return None
        return "Failed" if "Failed" in outcomes else "Succeed"


@settings(max_examples=150, deadline=None)
@given(
    pipeline=pipelines(),
    results=st.lists(st.sampled_from(["Running", "Completed", "Completed", "Failed"]), max_size=40),
)
def test_matrices_fan_out_in_index_order_within_max_parallel_and_end_by_the_outcome_rules(
    pipeline: tuple[list[dict[str, Any]], str], results: list[str]
) -> None:
    flows, policy = pipeline
    model = Model(flows, policy)
    spec_flows = [dict(f) for f in flows]
    status: dict[str, Any] = {}
    phase = ""
    for step, result in enumerate([*results, *["Completed"] * 40]):
        obj = job_flow("jf", flows=spec_flows, uid=UID, status=status)
        obj["spec"]["failurePolicy"] = policy
        jobs = [job(n, flow="jf", owner_uid=UID, phase=p) for n, p in model.phases.items()]
        plan = plan_through_state(world_of(obj, jobs))
        if plan is None:
            break
        assert plan.status is not None
        created = [s for s in plan.deploy.steps if isinstance(s, JobCreate)]
        assert [s.job_name for s in created] == model.due()
        for create in created:
            assert create.body is not None
            model.phases[create.job_name] = "Pending"
            flow = create.flow
            if flow in model.values:
                index = model.jobs[flow].index(create.job_name)
                metadata = create.body["metadata"]
                assert metadata["labels"][MATRIX_INDEX_LABEL] == str(index)
                assert json.loads(metadata["annotations"][MATRIX_PARAMS_ANNOTATION]) == model.values[flow][index]
        for f in flows:
            unfinished = sum(1 for n in model.jobs[f["name"]] if model.phases.get(n) in UNFINISHED)
            assert unfinished <= model.parallel[f["name"]]
        final = model.final_phase()
        phase = plan.status.phase
        if final is not None:
            assert phase == final
        else:
            assert phase in ("Pending", "Running")
        status = plan.status_body()
        unfinished_jobs = sorted(n for n, p in model.phases.items() if p in UNFINISHED)
        if unfinished_jobs:
            model.phases[unfinished_jobs[step % len(unfinished_jobs)]] = result
    assert phase in ("Succeed", "Failed")
    assert phase == model.final_phase()
