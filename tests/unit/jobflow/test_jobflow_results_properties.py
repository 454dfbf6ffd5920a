"""Reference resolution of results (docs/results.md), driven to the end against a reference model.

Random DAGs (test_jobflow_matrix_planner.py's generator), some flows declaring results, some with a
matrix, some with a `when` reading an ancestor's result; each Job, once it ends, reports a random subset
of its flow's names (its pod read through the real ResultsReader). At every sync the planner's output
is compared with a small independent model:

- each created Job's template holds every `$(flows.F.results.N)` and `$(flows.F.results.N[*])` there
  could be; the model says what each becomes: the value (a matrix F's `[*]`: the JSON array in index
  order) when F is an ancestor of the flow, declares N, is written with `[*]` exactly when F has a matrix,
  and every Job of F reported N; else it stays as written;
- a Completed Job that left a declared name out counts as Failed (the model's outcome, so which Jobs are
  created and the JobFlow's phase follow), with one `InvalidResult` Warning naming it; a Failed Job's
  missing names warn not;
- a `when` on a result skips the flow (and its dependents) exactly when the model's value is not in
  its values.

A second test draws any recorded state (not only what a run reaches: a matrix flow some of whose Jobs
reported a name and some not) and compares each flow's variables with the model's.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st
from jobflow_fakes import job, job_flow, job_template
from test_jobflow_matrix_planner import UNFINISHED, Model, pipelines
from test_jobflow_planner import plan_through_state, world_of

from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.policies import choose_policy
from jobflow_controller.jobflow.results_policy import ResultsPolicy
from jobflow_controller.jobflow.results_reader import ResultsReader
from jobflow_controller.jobflow.world import JobCreate

UID = "uid-r"
NAMES = ["r0", "r1"]
VALUES = ["a", "b"]


def ancestors(targets: dict[str, list[str]], flow: str) -> set[str]:
    seen: set[str] = set()
    stack = list(targets[flow])
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(targets[name])
    return seen


def references(flows: list[dict[str, Any]]) -> list[str]:
    """Every reference a template could write: each flow (and one that does not exist), each name, both forms."""
    out = []
    for flow in [*(f["name"] for f in flows), "zz"]:
        for name in [*NAMES, "r9"]:
            out += [f"$(flows.{flow}.results.{name})", f"$(flows.{flow}.results.{name}[*])"]
    return out


class ResultsModel(Model):
    """The matrix planner's model, with each Job's report, Completed Jobs that left a name out Failed,
    and `when` on results."""

    def __init__(self, flows: list[dict[str, Any]], policy: str) -> None:
        super().__init__(flows, policy)
        self.declared = {f["name"]: f["results"]["names"] for f in flows if "results" in f}
        self.when = {f["name"]: f["when"][0] for f in flows if "when" in f}
        self.reports: dict[str, dict[str, str]] = {}  # Job name -> what its pod reported

    def value(self, consumer: str | None, variable: str) -> str | None:
        """What `$(variable)` becomes in `consumer`'s Job (None: left as written)."""
        flow, _, rest = variable.removeprefix("flows.").partition(".results.")
        name, array = rest.removesuffix("[*]"), rest.endswith("[*]")
        if flow not in self.declared or name not in self.declared[flow]:
            return None
        if consumer is not None and flow not in ancestors(self.targets, consumer):
            return None
        if array != (flow in self.values):
            return None
        found = [self.reports.get(j, {}).get(name) for j in self.jobs[flow]]
        if any(v is None for v in found):
            return None
        return json.dumps(found) if array else str(found[0])

    def expanded(self, consumer: str, text: str) -> str:
        variable = text[2:-1]
        found = self.value(consumer, variable)
        return text if found is None else found

    def invalid(self, job_name: str) -> bool:
        """A Completed Job of a declaring flow that left a declared name out."""
        flow = next(f for f, names in self.jobs.items() if job_name in names)
        names = self.declared.get(flow, [])
        return self.phases.get(job_name) == "Completed" and any(n not in self.reports[job_name] for n in names)

    def outcome(self, flow: str) -> str | None:
        phases = [self.phases.get(n) for n in self.jobs[flow]]
        if any(p in ("Failed", "Terminated") for p in phases) or any(self.invalid(n) for n in self.jobs[flow]):
            return "Failed"
        found = super().outcome(flow)
        if found is not None or flow not in self.when or any(p is not None for p in phases):
            return found
        if all(self.outcome(t) == "Completed" for t in self.targets[flow]):
            item = self.when[flow]
            value = self.value(flow, item["input"][2:-1])
            if value is not None and (value in item["values"]) != (item["operator"] == "in"):
                return "Skipped"
        return None


@st.composite
def result_pipelines(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str]:
    """A matrix pipeline; some flows declare results; some non-matrix flows test an ancestor's result."""
    flows, policy = draw(pipelines())
    targets = {f["name"]: (f.get("dependsOn") or {}).get("targets", []) for f in flows}
    for flow in flows:
        if draw(st.sampled_from([True, True, False])):
            flow["results"] = {"names": draw(st.lists(st.sampled_from(NAMES), min_size=1, unique=True))}
    for flow in flows:
        sources = [f for f in flows if f["name"] in ancestors(targets, flow["name"]) and "results" in f]
        if "matrix" in flow or not sources or not draw(st.booleans()):
            continue
        source = draw(st.sampled_from(sources))
        name = draw(st.sampled_from(source["results"]["names"]))
        suffix = "[*]" if "matrix" in source else ""
        choices = [*VALUES, json.dumps(["a"]), json.dumps(["a", "a"])]
        flow["when"] = [
            {
                "input": f"$(flows.{source['name']}.results.{name}{suffix})",
                "operator": draw(st.sampled_from(["in", "notin"])),
                "values": draw(st.lists(st.sampled_from(choices), min_size=1, unique=True)),
            }
        ]
    return flows, policy


def reported(data: st.DataObject) -> dict[str, str]:
    """A Job's report: each name four times in five (so most flows report in full and references resolve)."""
    return {n: data.draw(st.sampled_from(VALUES)) for n in NAMES if data.draw(st.sampled_from([True] * 4 + [False]))}


class Pods:
    """The pods' termination messages, from the model's reports (each Job's pod 0; its task is '')."""

    def __init__(self, model: ResultsModel) -> None:
        self.model = model

    def __call__(self, namespace: str, name: str) -> dict[str, Any] | None:
        job_name = name.removesuffix("--0")
        if job_name not in self.model.reports:
            return None
        message = json.dumps(self.model.reports[job_name])
        owner = {"kind": "Job", "uid": f"uid-{job_name}", "controller": True}
        terminated = {"name": "main", "state": {"terminated": {"message": message}}}
        return {"metadata": {"ownerReferences": [owner]}, "status": {"containerStatuses": [terminated]}}


def vc_job(name: str, phase: str) -> dict[str, Any]:
    out = job(name, flow="jf", owner_uid=UID, phase=phase)
    out["metadata"]["uid"] = f"uid-{name}"
    return out


@settings(max_examples=150, deadline=None)
@given(
    pipeline=result_pipelines(),
    outcomes=st.lists(st.sampled_from(["Completed", "Completed", "Running", "Failed"]), max_size=30),
    data=st.data(),
)
def test_references_expand_and_bad_results_fail_as_the_model_says(
    pipeline: tuple[list[dict[str, Any]], str], outcomes: list[str], data: st.DataObject
) -> None:
    flows, policy = pipeline
    model = ResultsModel(flows, policy)
    args = references(flows)
    task = {"name": "", "template": {"spec": {"containers": [{"name": "c", "image": "b", "args": args}]}}}
    status: dict[str, Any] = {}
    warned: list[str] = []
    expected: set[str] = set()
    phase = ""
    for step, outcome in enumerate([*outcomes, *["Completed"] * 40]):
        obj = job_flow("jf", flows=[dict(f) for f in flows], uid=UID, status=status)
        obj["spec"]["failurePolicy"] = policy
        world = world_of(obj, [vc_job(n, p) for n, p in model.phases.items()])
        world = replace(world, templates={f["name"]: job_template(f["name"], spec={"tasks": [task]}) for f in flows})
        plan = plan_through_state(ResultsReader(Pods(model)).read(world))
        if plan is None:
            break
        assert plan.status is not None
        expected = {n for n in model.phases if model.invalid(n)}  # what this sync saw ended
        created = [s for s in plan.deploy.steps if isinstance(s, JobCreate)]
        assert [s.job_name for s in created] == model.due()
        for create in created:
            assert create.body is not None
            got = create.body["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"]
            assert got == [model.expanded(create.flow, a) for a in args], create.job_name
            event(f"a Job with {sum(g != a for g, a in zip(got, args, strict=True))} references resolved")
            model.phases[create.job_name] = "Pending"
        warned += [n.args[1] for n in plan.notices if n.reason == c.REASON_INVALID_RESULT]
        final = model.final_phase()
        phase = plan.status.phase
        assert phase == final if final is not None else phase in ("Pending", "Running")
        status = plan.status_body()
        unfinished = sorted(n for n, p in model.phases.items() if p in UNFINISHED)
        if unfinished:
            ended = unfinished[step % len(unfinished)]
            model.phases[ended] = outcome
            if outcome in ("Completed", "Failed"):
                model.reports[ended] = reported(data)
    assert phase in ("Succeed", "Failed") and phase == model.final_phase()
    assert sorted(warned) == sorted(expected)
    event(f"{len(warned)} InvalidResult; skipped by when: {len((status or {}).get('skippedJobs') or [])}")
    assert len(warned) == len(set(warned))  # once per Job


@settings(max_examples=200, deadline=None)
@given(pipeline=result_pipelines(), data=st.data())
def test_each_flows_variables_are_the_models_whatever_was_recorded(
    pipeline: tuple[list[dict[str, Any]], str], data: st.DataObject
) -> None:
    """Any recorded state, not only one a run reaches (a target that Failed under a rule that still runs
    its dependents, a matrix flow some of whose Jobs reported a name and some not): the variables each
    flow's Jobs and `when` inputs are expanded with (`ResultsPolicy.result_variables`) are exactly the
    model's values, and nothing else of `flows.`."""
    flows, policy = pipeline
    model = ResultsModel(flows, policy)
    entries = []
    for names in model.jobs.values():
        for name in names:
            if data.draw(st.sampled_from([True, True, False])):
                model.reports[name] = reported(data)
                entries.append({"name": name, "state": "Completed", "results": model.reports[name]})
    obj = job_flow("jf", flows=[dict(f) for f in flows], uid=UID, status={"jobStatusList": entries})
    policy_obj = choose_policy(world_of(obj, []))
    if not isinstance(policy_obj, ResultsPolicy):
        assert not model.declared
        return
    for flow in flows:
        variables = policy_obj.result_variables(flow["name"])
        expected = {
            v: found
            for v in (r[2:-1] for r in references(flows))
            if (found := model.value(flow["name"], v)) is not None
        }
        assert variables == expected, flow["name"]
