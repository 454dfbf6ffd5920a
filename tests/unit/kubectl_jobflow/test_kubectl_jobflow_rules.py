"""`kubectl jobflow` on the failure-aware fields (issue 22, docs/rules.md): Skipped flows, each edge's
rule when it is not the default, and the `finally` branch, in the tree and in DOT."""

from __future__ import annotations

import datetime
import re
from typing import Any

from kubectl_jobflow.dot import render_dot
from kubectl_jobflow.render import BLUE, RESET, render_tree
from kubectl_jobflow.view import NOT_CREATED, SKIPPED, WAITING, FlowView, build_view

NOW = datetime.datetime(2026, 1, 1, 0, 10, 0, tzinfo=datetime.UTC)
UID = "uid-1"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def job_flow(
    flows: list[dict[str, Any]], phase: str = "Running", finally_: tuple[str, ...] = (), **status: Any
) -> dict[str, Any]:
    spec: dict[str, Any] = {"flows": flows}
    if finally_:
        spec["finally"] = [{"name": n} for n in finally_]
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": UID, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec,
        "status": {"state": {"phase": phase}, **status},
    }


def job(name: str, phase: str, created: str, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": created,
            "ownerReferences": [{"kind": "JobFlow", "name": "p", "uid": UID, "controller": True}],
        },
        "status": {"state": {"phase": phase}, **status},
    }


def after(name: str, *targets: str, rule: str | None = None) -> dict[str, Any]:
    depends_on: dict[str, Any] = {"targets": list(targets)}
    if rule is not None:
        depends_on["rule"] = rule
    return {"name": name, "dependsOn": depends_on}


def entry(name: str, state: str, start: str, end: str | None = None) -> dict[str, Any]:
    out = {"name": name, "state": state, "startTimestamp": start}
    if end:
        out["endTimestamp"] = end
    return out


#: train fails; alert (AnyFailed) runs; deploy (AllCompleted) and publish (after deploy) are Skipped;
#: report (AllDone) runs; notify is the finally JobTemplate.
ALERTING = [
    {"name": "train"},
    after("alert", "train", rule="AnyFailed"),
    after("deploy", "train", rule="AllCompleted"),
    after("publish", "deploy"),
    after("report", "alert", "deploy", rule="AllDone"),
]


def alerting_view(phase: str = "Running", **extra: Any) -> FlowView:
    status = {
        "jobStatusList": [
            entry("p-train", "Failed", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"),
            entry("p-alert", "Completed", "2026-01-01T00:01:00Z", "2026-01-01T00:01:30Z"),
        ],
        "skippedJobs": ["p-deploy", "p-publish"],
        **extra,
    }
    flow = job_flow(ALERTING, phase, ("notify", "cleanup"), **status)
    return build_view(flow, [job("p-report", "Running", "2026-01-01T00:09:00Z")], NOW)


# -- the view ----------------------------------------------------------------------------------
def test_a_flow_listed_in_skipped_jobs_without_a_job_is_skipped_while_running_and_after() -> None:
    for phase in ("Running", "Failed", "Succeed"):
        row = alerting_view(phase).row("deploy")
        assert row is not None
        assert (row.phase, row.duration, row.restarts) == (SKIPPED, None, None)


def test_a_job_wins_over_skipped_jobs() -> None:
    # A stale status (a Job created after a sync read it): the fresher Job is what is shown.
    flow = job_flow([{"name": "a"}], skippedJobs=["p-a"])
    row = build_view(flow, [job("p-a", "Running", "2026-01-01T00:09:00Z")], NOW).row("a")
    assert row is not None and row.phase == "Running"


def test_each_flow_carries_its_rule_unless_it_is_the_default() -> None:
    view = alerting_view()
    assert {f.name: f.rule for f in view.flows} == {
        "train": None,
        "alert": "AnyFailed",
        "deploy": None,  # AllCompleted spelled out is the default
        "publish": None,
        "report": "AllDone",
    }


def test_finally_rows_are_read_like_flows_from_jobs_and_status() -> None:
    view = alerting_view(
        jobStatusList=[entry("p-notify", "Completed", "2026-01-01T00:05:00Z", "2026-01-01T00:05:10Z")],
    )
    notify, cleanup = view.finally_flows
    assert (notify.name, notify.job, notify.phase, notify.duration, notify.targets) == (
        "notify",
        "p-notify",
        "Completed",
        10.0,
        (),
    )
    assert (cleanup.phase, view.finally_row("cleanup")) == (WAITING, cleanup)
    assert view.row("notify") is None  # not a flow


def test_a_finally_never_created_is_not_created_once_the_jobflow_ended() -> None:
    (notify,) = build_view(job_flow([{"name": "a"}], "Failed", ("notify",)), [], NOW).finally_flows
    assert notify.phase == NOT_CREATED


# -- the tree ----------------------------------------------------------------------------------
def test_the_tree_shows_rules_skipped_flows_and_the_finally_branch() -> None:
    assert render_tree(alerting_view()) == (
        "JobFlow ns/p   Running   5 flows, 2 finally   age 10m\n"
        "FLOW                       PHASE       DURATION   RESTARTS\n"
        "train                      Failed      60s        0\n"
        "├── alert [AnyFailed]      Completed   30s        0\n"
        "│   └── report [AllDone]   Running     60s        0\n"
        "└── deploy                 Skipped     -          -\n"
        "    ├── publish            Skipped     -          -\n"
        "    └── report [AllDone] (see above)\n"
        "finally\n"
        "├── notify                 Waiting     -          -\n"
        "└── cleanup                Waiting     -          -\n"
    )


def test_skipped_is_blue_with_colour_and_the_columns_stay_aligned() -> None:
    coloured = render_tree(alerting_view(), color=True)
    assert f"{BLUE}Skipped{RESET}" in coloured
    assert ANSI.sub("", coloured) == render_tree(alerting_view())


def test_a_jobflow_without_the_new_fields_is_drawn_as_before() -> None:
    view = build_view(job_flow([{"name": "a"}, after("b", "a")]), [], NOW)
    assert render_tree(view) == (
        "JobFlow ns/p   Running   2 flows   age 10m\n"
        "FLOW    PHASE     DURATION   RESTARTS\n"
        "a       Waiting   -          -\n"
        "└── b   Waiting   -          -\n"
    )


# -- DOT ---------------------------------------------------------------------------------------
def test_dot_labels_the_edges_of_a_rule_other_than_the_default() -> None:
    edges = [ln.strip() for ln in render_dot(alerting_view()).splitlines() if "->" in ln and "dotted" not in ln]
    assert edges == [
        '"train" -> "alert" [label="AnyFailed"];',
        '"train" -> "deploy";',
        '"deploy" -> "publish";',
        '"alert" -> "report" [label="AllDone"];',
        '"deploy" -> "report" [label="AllDone"];',
    ]


def test_dot_draws_a_skipped_flow_dashed() -> None:
    dot = render_dot(alerting_view())
    assert '  "deploy" [label="deploy\\nSkipped", fillcolor="#eeeeee", style="rounded,filled,dashed"];' in dot


def test_dot_puts_finally_in_a_cluster_reached_from_every_sink() -> None:
    dot = render_dot(alerting_view())
    assert "compound=true" in dot
    assert '  subgraph "cluster_finally" {\n    graph [label="finally", style=dashed];\n' in dot
    assert '    "notify" [label="notify\\nWaiting", fillcolor="#eeeeee"];' in dot
    dotted = [ln.strip() for ln in dot.splitlines() if "dotted" in ln]
    assert dotted == [
        '"publish" -> "notify" [style=dotted];',
        '"publish" -> "cleanup" [style=dotted];',
        '"report" -> "notify" [style=dotted];',
        '"report" -> "cleanup" [style=dotted];',
    ]


def test_dot_without_finally_has_no_cluster() -> None:
    dot = render_dot(build_view(job_flow([{"name": "a"}]), [], NOW))
    assert "cluster" not in dot and "compound" not in dot
