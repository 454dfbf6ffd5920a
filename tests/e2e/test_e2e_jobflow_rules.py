"""Failure-aware DAGs (docs/rules.md) against a real API server: every rule, both failure policies,
`continueOnFailure`, finally flows after success and after failure, and skips three levels deep.

Simulated Jobs end as their template's script says (FAST completes, FAILS fails, SLOW runs longer),
so each JobFlow's outcome is known before it starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import RunningManager, wait_for
from jobflows import FAILS, FAST, create_all, events_of, flow, job_names, phase_of, template

from jobflow_controller.apis.rules import OUTCOME_ANNOTATION
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.simulator import JobSimulator

SLOW = "Pending:0.2s,Running:4s,Completed"


@pytest.fixture
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=3)
    yield running
    running.stop()


def on(*targets: str, rule: str | None = None) -> dict[str, Any]:
    depends: dict[str, Any] = {"targets": list(targets)}
    if rule:
        depends["rule"] = rule
    return {"dependsOn": depends}


def status_of(clientset: Clientset, namespace: str, name: str) -> dict[str, Any]:
    return dict(clientset.job_flows(namespace).get(name).get("status") or {})


def final(clientset: Clientset, namespace: str, name: str, timeout: float = 60) -> str:
    wait_for(lambda: phase_of(clientset, namespace, name) in ("Succeed", "Failed"), timeout, what=f"{name} final")
    return phase_of(clientset, namespace, name)


def skipped_events(clientset: Clientset, namespace: str, name: str) -> list[str]:
    return sorted(m for t, r, m, _ in events_of(clientset, namespace, name) if (t, r) == ("Normal", "Skipped"))


def templates(namespace: str) -> list[dict[str, Any]]:
    return [
        template("ok", namespace, FAST),
        template("bad", namespace, FAILS),
        template("slow", namespace, SLOW),
        template("notify", namespace, FAST),
        template("notify-bad", namespace, FAILS),
    ]


def use(name: str, template_name: str, **more: Any) -> dict[str, Any]:
    """A flow named `name` whose Job comes from `template_name` (a patch-free alias: its own template)."""
    return {"name": name, **more, "_template": template_name}


def job_flow(
    name: str, namespace: str, flows: list[dict[str, Any]], *, with_templates: bool = True, **spec: Any
) -> list[dict[str, Any]]:
    """The JobFlow, and one JobTemplate per flow name copied from the template each flow names."""
    base = {t["metadata"]["name"]: t for t in templates(namespace)}
    docs = []
    for f in [*flows, *spec.get("finally", [])]:
        copy = dict(base[f.pop("_template")])
        copy["metadata"] = {"name": f["name"], "namespace": namespace}
        docs.append(copy)
    obj = flow(name, namespace, flows)
    obj["spec"].update(spec)
    return [*docs, obj] if with_templates else [obj]


def test_every_rule_met_and_never_met_in_one_run_to_completion_job_flow(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    flows = [
        use("a", "bad"),
        use("b", "ok"),
        use("c", "bad"),
        use("d", "ok"),
        use("all-completed-ab", "ok", **on("a", "b", rule="AllCompleted")),
        use("all-completed-bd", "ok", **on("b", "d")),
        use("any-completed-ab", "ok", **on("a", "b", rule="AnyCompleted")),
        use("any-completed-ac", "ok", **on("a", "c", rule="AnyCompleted")),
        use("all-failed-ab", "ok", **on("a", "b", rule="AllFailed")),
        use("all-failed-ac", "ok", **on("a", "c", rule="AllFailed")),
        use("any-failed-ab", "ok", **on("a", "b", rule="AnyFailed")),
        use("any-failed-bd", "ok", **on("b", "d", rule="AnyFailed")),
        use("all-done-ab", "ok", **on("a", "b", rule="AllDone")),
        use("none-failed-ab", "ok", **on("a", "b", rule="NoneFailed")),
        use("none-failed-bd", "ok", **on("b", "d", rule="NoneFailed")),
    ]
    create_all(clientset, job_flow("r", namespace, flows, failurePolicy="RunToCompletion"))
    # a and c fail; each is handled (AnyCompleted, AllFailed, AnyFailed, AllDone wait on them).
    assert final(clientset, namespace, "r") == "Succeed"
    ran = {"a", "b", "c", "d", "all-completed-bd", "any-completed-ab", "all-failed-ac", "any-failed-ab"}
    ran |= {"all-done-ab", "none-failed-bd"}
    assert job_names(clientset, namespace) == sorted(f"r-{n}" for n in ran)
    skipped = ["all-completed-ab", "any-completed-ac", "all-failed-ab", "any-failed-bd", "none-failed-ab"]
    assert status_of(clientset, namespace, "r")["skippedJobs"] == [f"r-{n}" for n in skipped]
    # A flow is skipped as soon as its rule can no longer be met: a target may have no outcome yet.
    maybe = "(none yet|Completed)"
    patterns = [
        rf"Flow all-completed-ab is skipped: its rule AllCompleted can no longer be met \(a: Failed, b: {maybe}\)",
        r"Flow any-completed-ac is skipped: its rule AnyCompleted can no longer be met \(a: Failed, c: Failed\)",
        r"Flow all-failed-ab is skipped: its rule AllFailed can no longer be met \(a: (none yet|Failed), b: Completed\)",  # noqa: E501
        r"Flow any-failed-bd is skipped: its rule AnyFailed can no longer be met \(b: Completed, d: Completed\)",
        rf"Flow none-failed-ab is skipped: its rule NoneFailed can no longer be met \(a: Failed, b: {maybe}\)",
    ]
    told = skipped_events(clientset, namespace, "r")
    assert len(told) == len(patterns)
    for pattern in patterns:
        assert any(re.fullmatch(pattern, m) for m in told), (pattern, told)


def test_fail_fast_with_finally_waits_for_the_running_job_then_runs_finally_annotated_failed_then_fails(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    flows = [use("a", "bad"), use("b", "slow"), use("c", "ok", **on("a", "b"))]
    create_all(clientset, job_flow("ff", namespace, flows, **{"finally": [use("notify", "notify")]}))
    wait_for(lambda: "ff-a" in status_of(clientset, namespace, "ff").get("failedJobs", []), 30, what="a Failed")
    assert phase_of(clientset, namespace, "ff") == "Running"  # b still runs; notify waits for it
    assert "ff-notify" not in job_names(clientset, namespace)
    assert final(clientset, namespace, "ff") == "Failed"
    notify = clientset.jobs(namespace).get("ff-notify")
    assert notify["metadata"]["annotations"][OUTCOME_ANNOTATION] == "Failed"
    b_done = status_of(clientset, namespace, "ff")["conditions"]["ff-b"]["phase"]
    assert b_done == "Completed"
    assert "ff-c" not in job_names(clientset, namespace)
    assert status_of(clientset, namespace, "ff")["skippedJobs"] == ["ff-c"]
    assert "ff-notify" in status_of(clientset, namespace, "ff")["completedJobs"]


def test_continue_on_failure_skips_three_levels_and_finally_runs_after_success_annotated_succeed(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    flows = [
        use("flaky", "bad", continueOnFailure=True),
        use("x1", "ok", **on("flaky")),
        use("x2", "ok", **on("x1")),
        use("x3", "ok", **on("x2")),
        use("main", "ok"),
        use("report", "ok", **on("flaky", "main", rule="AllDone")),
    ]
    create_all(clientset, job_flow("co", namespace, flows, **{"finally": [use("notify", "notify")]}))
    assert final(clientset, namespace, "co") == "Succeed"
    status = status_of(clientset, namespace, "co")
    assert status["skippedJobs"] == ["co-x1", "co-x2", "co-x3"]
    assert status["failedJobs"] == ["co-flaky"]
    assert clientset.jobs(namespace).get("co-notify")["metadata"]["annotations"][OUTCOME_ANNOTATION] == "Succeed"
    assert skipped_events(clientset, namespace, "co") == [
        "Flow x1 is skipped: its rule AllCompleted can no longer be met (flaky: Failed)",
        "Flow x2 is skipped: its rule AllCompleted can no longer be met (x1: Skipped)",
        "Flow x3 is skipped: its rule AllCompleted can no longer be met (x2: Skipped)",
    ]


def test_a_failed_finally_job_fails_the_job_flow(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    flows = [use("a", "ok")]
    create_all(clientset, job_flow("fb", namespace, flows, **{"finally": [use("n", "notify-bad")]}))
    assert final(clientset, namespace, "fb") == "Failed"
    assert status_of(clientset, namespace, "fb")["failedJobs"] == ["fb-n"]


def test_run_to_completion_runs_the_other_branch_then_fails(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    flows = [use("a", "bad"), use("b", "ok", **on("a")), use("x", "slow"), use("y", "ok", **on("x"))]
    create_all(clientset, job_flow("rc", namespace, flows, failurePolicy="RunToCompletion"))
    assert final(clientset, namespace, "rc") == "Failed"
    assert job_names(clientset, namespace) == ["rc-a", "rc-x", "rc-y"]
    assert status_of(clientset, namespace, "rc")["completedJobs"] == ["rc-x", "rc-y"]


def test_fail_fast_without_finally_fails_at_once_as_a_job_flow_without_the_new_fields_does(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    flows = [use("a", "bad"), use("x", "slow"), use("y", "ok", **on("x"))]
    create_all(clientset, job_flow("explicit", namespace, [dict(f) for f in flows], failurePolicy="FailFast"))
    create_all(clientset, job_flow("plain", namespace, [dict(f) for f in flows], with_templates=False))
    for name in ("explicit", "plain"):
        assert final(clientset, namespace, name, timeout=30) == "Failed"
        status = status_of(clientset, namespace, name)
        assert f"{name}-x" in status.get("runningJobs", []) + status.get("pendingJobs", [])  # failed at once
        assert "skippedJobs" not in status
    assert "plain-y" not in job_names(clientset, namespace)
    assert skipped_events(clientset, namespace, "plain") == []
