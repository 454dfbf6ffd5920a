"""Failure-aware DAGs (docs/rules.md): each rule against every combination of target outcomes, the
planner's scenarios, and random DAGs with random rules and outcomes against a reference model."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jobflow_fakes import job, job_flow, job_template
from test_jobflow_planner import UID, plan_through_state, world_of

from jobflow_controller.apis.rules import OUTCOME_ANNOTATION, Rule
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.outcomes import MET, NEVER, WAITING, rule_state
from jobflow_controller.jobflow.world import JobCreate, SyncPlan

C, F, S = "Completed", "Failed", "Skipped"

#: The issue's words, over targets that all have an outcome or not (None).
MET_NOW = {
    Rule.ALL_COMPLETED: lambda o: all(x == C for x in o),
    Rule.ANY_COMPLETED: lambda o: any(x == C for x in o),
    Rule.ALL_FAILED: lambda o: all(x == F for x in o),
    Rule.ANY_FAILED: lambda o: any(x == F for x in o),
    Rule.ALL_DONE: lambda o: all(x is not None for x in o),
    Rule.NONE_FAILED: lambda o: all(x is not None for x in o) and not any(x == F for x in o),
}


def reference_rule_state(rule: str, outcomes: tuple[str | None, ...]) -> str:
    """Met if it holds now; never if no way the targets without an outcome could end makes it hold."""
    if MET_NOW[rule](outcomes):
        return MET
    open_at = [i for i, o in enumerate(outcomes) if o is None]
    for ends in itertools.product((C, F, S), repeat=len(open_at)):
        filled = list(outcomes)
        for i, end in zip(open_at, ends, strict=True):
            filled[i] = end
        if MET_NOW[rule](filled):
            return WAITING
    return NEVER


COMBINATIONS = [combo for n in (1, 2, 3) for combo in itertools.product((None, C, F, S), repeat=n)]


@pytest.mark.parametrize("rule", list(Rule))
@pytest.mark.parametrize("outcomes", COMBINATIONS, ids=lambda o: "-".join(x or "none" for x in o))
def test_every_rule_against_every_combination_of_target_outcomes(rule: str, outcomes: tuple[str | None, ...]) -> None:
    assert rule_state(rule, outcomes) == reference_rule_state(rule, outcomes)


@pytest.mark.parametrize(
    ("rule", "outcomes", "expected"),
    [
        (Rule.ALL_COMPLETED, (C, S), NEVER),  # skips propagate down an AllCompleted chain
        (Rule.ALL_DONE, (S, F), MET),  # a Skipped target is done
        (Rule.NONE_FAILED, (S, C), MET),
        (Rule.NONE_FAILED, (None, F), NEVER),
        (Rule.ANY_COMPLETED, (None, C), MET),  # runs as soon as one Completed
        (Rule.ANY_FAILED, (S, C), NEVER),
        (Rule.ALL_FAILED, (F, None), WAITING),
    ],
)
def test_rules_read_as_the_issue_says(rule: str, outcomes: tuple[str | None, ...], expected: str) -> None:
    assert rule_state(rule, outcomes) == expected


# -- the planner's scenarios -------------------------------------------------------------------------
def flow(name: str, *targets: str, rule: str | None = None, cont: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if targets:
        out["dependsOn"] = {"targets": list(targets)}
        if rule:
            out["dependsOn"]["rule"] = rule
    if cont:
        out["continueOnFailure"] = True
    return out


def sync(
    flows: list[dict[str, Any]],
    phases: dict[str, str],
    *,
    policy: str | None = None,
    finally_: Sequence[str] = (),
    status: dict[str, Any] | None = None,
    phase: str = "",
) -> SyncPlan:
    obj = job_flow("f", flows=flows, uid=UID, status=status, phase=phase)
    if policy:
        obj["spec"]["failurePolicy"] = policy
    if finally_:
        obj["spec"]["finally"] = [{"name": n} for n in finally_]
    jobs = [job(f"f-{name}", flow="f", owner_uid=UID, phase=p) for name, p in phases.items()]
    world = world_of(obj, jobs)
    world = replace(world, templates={**world.templates, **{n: job_template(n) for n in finally_}})
    plan = plan_through_state(world)
    assert plan is not None and plan.status is not None
    return plan


def created(plan: SyncPlan) -> list[str]:
    return [s.flow for s in plan.deploy.steps if isinstance(s, JobCreate)]


def test_skips_propagate_three_levels_and_each_is_told_once() -> None:
    flows = [flow("a"), flow("b", "a"), flow("c", "b"), flow("d", "c"), flow("alert", "a", rule=Rule.ANY_FAILED)]
    plan = sync(flows, {"a": "Failed"}, phase="Running")
    assert created(plan) == ["alert"]
    body = plan.status_body()
    assert body["skippedJobs"] == ["f-b", "f-c", "f-d"]
    assert body["state"] == {"phase": "Running"}  # a's failure is handled by alert's AnyFailed
    assert [(n.reason, n.args[0]) for n in plan.notices] == [("Skipped", "b"), ("Skipped", "c"), ("Skipped", "d")]
    assert plan.notices[0].message_fmt % plan.notices[0].args == (
        "Flow b is skipped: its rule AllCompleted can no longer be met (a: Failed)"
    )
    again = sync(flows, {"a": "Failed", "alert": "Running"}, status=body, phase="Running")
    assert again.notices == [] and again.status_body()["skippedJobs"] == ["f-b", "f-c", "f-d"]
    done = sync(flows, {"a": "Failed", "alert": "Completed"}, status=body, phase="Running")
    assert done.status_body()["state"] == {"phase": "Succeed"}


def test_an_unhandled_failure_under_fail_fast_fails_at_once_without_finally() -> None:
    flows = [flow("a"), flow("b"), flow("c", "a", "b")]
    plan = sync(flows, {"a": "Failed", "b": "Running"}, phase="Running", policy="FailFast")
    assert plan.status_body()["state"] == {"phase": "Failed"} and created(plan) == []


def test_fail_fast_with_finally_waits_for_the_running_jobs_then_runs_finally_then_fails() -> None:
    flows = [flow("a"), flow("b"), flow("c", "a", "b")]
    waiting = sync(flows, {"a": "Failed", "b": "Running"}, phase="Running", finally_=["notify"])
    assert waiting.status_body()["state"] == {"phase": "Running"} and created(waiting) == []
    due = sync(flows, {"a": "Failed", "b": "Completed"}, phase="Running", finally_=["notify"])
    assert created(due) == ["notify"]
    body = next(s.body for s in due.deploy.steps if isinstance(s, JobCreate))
    assert body is not None and body["metadata"]["annotations"][OUTCOME_ANNOTATION] == "Failed"
    assert due.status_body()["state"] == {"phase": "Running"}
    end = sync(flows, {"a": "Failed", "b": "Completed", "notify": "Completed"}, phase="Running", finally_=["notify"])
    assert end.status_body()["state"] == {"phase": "Failed"}
    assert end.status_body()["skippedJobs"] == ["f-c"]


def test_finally_after_success_is_annotated_succeed_and_a_failed_finally_fails_the_job_flow() -> None:
    flows = [flow("a"), flow("b", "a")]
    due = sync(flows, {"a": "Completed", "b": "Completed"}, phase="Running", finally_=["n1", "n2"])
    assert created(due) == ["n1", "n2"]
    for step in due.deploy.steps:
        assert isinstance(step, JobCreate) and step.body is not None
        assert step.body["metadata"]["annotations"][OUTCOME_ANNOTATION] == "Succeed"
    half = sync(flows, {"a": "Completed", "b": "Completed", "n1": "Completed", "n2": "Running"}, finally_=["n1", "n2"])
    assert half.status_body()["state"] == {"phase": "Running"}
    ok = sync(flows, {"a": "Completed", "b": "Completed", "n1": "Completed", "n2": "Completed"}, finally_=["n1", "n2"])
    assert ok.status_body()["state"] == {"phase": "Succeed"}
    bad = sync(flows, {"a": "Completed", "b": "Completed", "n1": "Completed", "n2": "Failed"}, finally_=["n1", "n2"])
    assert bad.status_body()["state"] == {"phase": "Failed"}


def test_continue_on_failure_handles_the_failure_and_the_job_flow_succeeds() -> None:
    flows = [flow("flaky", cont=True), flow("main"), flow("report", "flaky", "main", rule=Rule.ALL_DONE)]
    plan = sync(flows, {"flaky": "Failed", "main": "Completed"}, phase="Running")
    assert created(plan) == ["report"]
    end = sync(flows, {"flaky": "Failed", "main": "Completed", "report": "Completed"}, phase="Running")
    assert end.status_body()["state"] == {"phase": "Succeed"}


def test_run_to_completion_runs_what_it_can_then_fails() -> None:
    flows = [flow("a"), flow("b", "a"), flow("x"), flow("y", "x")]
    plan = sync(flows, {"a": "Failed", "x": "Completed"}, phase="Running", policy="RunToCompletion")
    assert created(plan) == ["y"] and plan.status_body()["state"] == {"phase": "Running"}
    end = sync(flows, {"a": "Failed", "x": "Completed", "y": "Completed"}, phase="Running", policy="RunToCompletion")
    assert end.status_body()["state"] == {"phase": "Failed"} and end.status_body()["skippedJobs"] == ["f-b"]


def test_an_aborted_job_is_no_outcome() -> None:
    flows = [flow("a", cont=True), flow("b", "a", rule=Rule.ALL_DONE)]
    plan = sync(flows, {"a": "Aborted"}, phase="Running")
    assert created(plan) == [] and plan.status_body()["state"] == {"phase": "Running"}


def test_a_job_flow_without_the_new_fields_writes_no_skipped_jobs_and_fails_as_upstream() -> None:
    flows = [flow("a"), flow("b", "a"), flow("c")]
    plan = sync(flows, {"a": "Failed", "c": "Running"}, phase="Running")
    assert "skippedJobs" not in plan.status_body() and plan.notices == []
    assert plan.status_body()["state"] == {"phase": "Failed"}


def test_a_failed_job_with_retries_left_is_no_outcome_yet() -> None:
    flows = [{**flow("a"), "retry": {"maxRetries": 2}}, flow("b", "a", rule=Rule.ANY_FAILED)]
    plan = sync(flows, {"a": "Failed"}, phase="Running")
    assert created(plan) == [] and [r.attempt for r in plan.retries] == [1]
    assert "skippedJobs" not in plan.status_body()


def test_fail_fast_halt_drops_the_retries_of_other_flows() -> None:
    flows = [{**flow("a"), "retry": {"maxRetries": 2}}, flow("b"), flow("c", "a", "b")]
    plan = sync(flows, {"a": "Failed", "b": "Failed"}, phase="Running", finally_=["n"])
    assert plan.retries == [] and created(plan) == ["n"]


def test_skipped_event_reason_is_pinned() -> None:
    assert (c.REASON_SKIPPED, c.MESSAGE_SKIPPED) == (
        "Skipped",
        "Flow %s is skipped: its rule %s can no longer be met (%s)",
    )


# -- random DAGs, random rules and outcomes, both policies, against a reference model ---------------
@st.composite
def rule_dags(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str, list[str]]:
    n = draw(st.integers(1, 6))
    flows = []
    for i in range(n):
        targets = draw(st.lists(st.integers(0, i - 1), unique=True, max_size=i)) if i else []
        rule = draw(st.sampled_from([None, *list(Rule)])) if targets else None
        flows.append(flow(f"n{i}", *[f"n{t}" for t in sorted(targets)], rule=rule, cont=draw(st.booleans())))
    policy = draw(st.sampled_from(["FailFast", "RunToCompletion"]))
    finals = [f"z{i}" for i in range(draw(st.integers(0, 2)))]
    return flows, policy, finals


class Reference:
    """docs/rules.md written as plainly as possible, recursively, for one moment of a run."""

    def __init__(self, flows: list[dict[str, Any]], policy: str, finals: list[str], phases: dict[str, str]) -> None:
        self.flows = {f["name"]: f for f in flows}
        self.policy, self.finals, self.phases = policy, finals, phases

    def targets(self, name: str) -> list[str]:
        return list((self.flows[name].get("dependsOn") or {}).get("targets", []))

    def rule(self, name: str) -> str:
        return str((self.flows[name].get("dependsOn") or {}).get("rule") or Rule.ALL_COMPLETED)

    def ended(self, name: str) -> str | None:
        phase = self.phases.get(name)
        return C if phase == "Completed" else F if phase in ("Failed", "Terminated") else None

    def outcome(self, name: str) -> str | None:
        if name in self.phases:
            return self.ended(name)
        seen = tuple(self.outcome(t) for t in self.targets(name))
        return S if self.targets(name) and reference_rule_state(self.rule(name), seen) == NEVER else None

    def handled(self, name: str) -> bool:
        handling = {Rule.ANY_COMPLETED, Rule.ALL_FAILED, Rule.ANY_FAILED, Rule.ALL_DONE}
        users = [n for n in self.flows if name in self.targets(n)]
        return bool(self.flows[name].get("continueOnFailure")) or any(self.rule(u) in handling for u in users)

    def unhandled(self) -> bool:
        return any(self.outcome(n) == F and not self.handled(n) for n in self.flows)

    def halted(self) -> bool:
        return self.policy == "FailFast" and self.unhandled()

    def due(self) -> list[str]:
        if self.halted():
            return []
        out = []
        for name in self.flows:
            seen = tuple(self.outcome(t) for t in self.targets(name))
            if name not in self.phases and (not seen or reference_rule_state(self.rule(name), seen) == MET):
                out.append(name)
        return out

    def settled(self) -> bool:
        if self.halted():
            return all(self.ended(n) is not None for n in self.phases if n in self.flows)
        return all(self.outcome(n) is not None for n in self.flows)

    def phase(self, previous: str) -> str:
        if self.halted() and not self.finals:
            return "Failed"
        if self.settled() and all(self.ended(z) is not None for z in self.finals):
            ok = not self.unhandled() and all(self.ended(z) == C for z in self.finals)
            return "Succeed" if ok else "Failed"
        started = previous == "Running" or any(p == "Running" for p in self.phases.values())
        return "Running" if started or any(self.outcome(n) for n in self.flows) else "Pending"


@settings(max_examples=200, deadline=None)
@given(dag=rule_dags(), ends=st.lists(st.sampled_from(["Running", "Completed", "Failed", "Terminated"]), max_size=40))
def test_random_rule_dags_against_the_reference_model(
    dag: tuple[list[dict[str, Any]], str, list[str]], ends: list[str]
) -> None:
    flows, policy, finals = dag
    phases: dict[str, str] = {}
    status: dict[str, Any] = {}
    flow_phase = ""
    for step, end in enumerate([*ends, *["Completed"] * (3 * (len(flows) + len(finals)) + 2)]):
        plan = sync(flows, phases, policy=policy, finally_=finals, status=status, phase=flow_phase)
        model = Reference(flows, policy, finals, phases)
        expected = model.due()
        if model.settled():
            expected += [z for z in finals if z not in phases]
        if flow_phase in ("Succeed", "Failed"):
            expected = []
        assert created(plan) == expected
        want = flow_phase if flow_phase in ("Succeed", "Failed") else model.phase(flow_phase)
        assert plan.status is not None and plan.status.phase == want
        skipped = [f"f-{n}" for n in model.flows if model.outcome(n) == S]
        assert plan.status_body().get("skippedJobs", []) == skipped
        status, flow_phase = plan.status_body(), want
        if flow_phase in ("Succeed", "Failed"):
            break
        for name in created(plan):
            phases[name] = "Pending"
        going = sorted(n for n, p in phases.items() if p in ("Pending", "Running"))
        if going:
            phases[going[step % len(going)]] = end
    assert flow_phase in ("Succeed", "Failed")
