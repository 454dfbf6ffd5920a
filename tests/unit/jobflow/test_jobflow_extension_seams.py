"""A JobFlow's extension seams are skipped, not called, when it does not use the extension.

The sync decides once which extensions a JobFlow uses (apis/jobflow.py `extensions`, kept in
`JobFlowSpec.uses`); policies.py composes only their hooks, and `JobFlowSpec.of` parses only their fields.
"""

from __future__ import annotations

from typing import Any

import pytest
from jobflow_fakes import job, job_flow
from test_jobflow_lifecycle_rules import world
from test_jobflow_planner import UID, world_of

from jobflow_controller.apis.jobflow import Extension
from jobflow_controller.apis.lifecycle import RetryRequest
from jobflow_controller.jobflow import action, lifecycle, outcomes, patch, rerun, retry
from jobflow_controller.jobflow.flow_policy import UPSTREAM, FlowPolicy
from jobflow_controller.jobflow.policies import choose_policy, hooks_for


def _world(flows: list[dict[str, Any]], **spec: Any) -> Any:
    obj = job_flow("f", flows=flows, uid=UID, phase="Running")
    obj["spec"].update(spec)
    return world_of(obj, [job("f-a", flow="f", owner_uid=UID, phase="Running")])


def test_a_plain_job_flow_gets_upstreams_rule_with_no_hook() -> None:
    w = _world([{"name": "a"}])
    assert w.spec.uses == frozenset()
    policy = choose_policy(w)
    assert type(policy) is FlowPolicy and policy.hooks is UPSTREAM


@pytest.mark.parametrize(
    ("uses", "hooks"),
    [
        (frozenset(), (None, None, None)),
        (frozenset({Extension.LIFECYCLE}), (lifecycle.HOOK, None, None)),
        (frozenset({Extension.ATTEMPTS, Extension.RETRY}), (None, retry.HOOK, None)),
        (frozenset({Extension.PATCH}), (None, None, patch.HOOK)),
        (frozenset({Extension.PARAMS, Extension.RULES, Extension.PROBES}), (None, None, None)),
    ],
)
def test_only_the_hooks_of_the_extensions_used_are_composed(uses: frozenset[Extension], hooks: tuple[Any, ...]) -> None:
    found = hooks_for(uses)
    assert (found.lifecycle, found.attempts, found.patch) == hooks


def test_a_plain_job_flows_sync_calls_no_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    def called(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an extension's seam ran for a JobFlow that does not use it")

    for module, name in [
        (retry, "plan_retries"),
        (retry, "record_retries"),
        (lifecycle, "apply"),
        (patch, "check_patch"),
    ]:
        monkeypatch.setattr(module, name, called)
    w = _world([{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}])
    plan = action.sync_job_flow(w, lambda status, total: None, choose_policy(w))
    assert plan.status is not None and plan.retries == [] and plan.notices == []


def test_a_job_flow_with_a_retry_still_plans_its_retries() -> None:
    w = _world([{"name": "a", "retry": {"maxRetries": 1}}])
    assert {Extension.RETRY, Extension.ATTEMPTS} <= w.spec.uses
    assert choose_policy(w).hooks.attempts is retry.HOOK and "a" in w.spec.retry.policies


def test_a_rerun_evaluates_the_outcomes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The re-run picks its flows from the sync's one policy (`flow_outcomes`), never evaluating them again."""
    evaluations: list[object] = []
    evaluate = outcomes.evaluate

    def counted(*args: Any, **kwargs: Any) -> outcomes.Outcomes:
        evaluations.append(args)
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(outcomes, "evaluate", counted)
    w = world({"a": "Failed"}, [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}], phase="Failed")
    policy = choose_policy(w, rerun=True)
    assert rerun.chosen_flows(w, RetryRequest("r", ()), policy) == ["a", "b"]
    rerun.plan_rerun(w, RetryRequest("r", ()), policy)
    assert len(evaluations) == 1
