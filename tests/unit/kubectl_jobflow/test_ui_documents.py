"""`kubectl jobflow ui`: what the list and a JobFlow's page show, and which actions apply when."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION
from kubectl_jobflow.ui import actions
from kubectl_jobflow.ui.detail import flow_rows, layout_json, page, shape
from kubectl_jobflow.ui.layout import layout
from kubectl_jobflow.ui.rows import finished_at, list_row, progress

NOW = datetime.datetime(2026, 1, 1, 0, 10, 0, tzinfo=datetime.UTC)
UID = "uid-1"


def job_flow(
    flows: list[dict[str, Any]], phase: str = "Running", spec: dict[str, Any] | None = None, **status: Any
) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": UID, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"flows": flows, **(spec or {})},
        "status": {"state": {"phase": phase}, **status},
    }


def job(name: str, phase: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "creationTimestamp": "2026-01-01T00:01:00Z",
            "ownerReferences": [{"kind": "JobFlow", "name": "p", "uid": UID, "controller": True}],
        },
        "status": {"state": {"phase": phase}},
    }


def after(name: str, *targets: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": list(targets), **extra}}


def no_events(kind: str, namespace: str, name: str) -> list[dict[str, Any]]:
    return []


# -- the list ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({}, (0, 3)),
        ({"completedJobs": ["p-a"]}, (1, 3)),
        # Failed, Terminated and Skipped flows have an outcome too
        ({"completedJobs": ["p-a"], "failedJobs": ["p-b"], "skippedJobs": ["p-c"]}, (3, 3)),
        ({"terminatedJobs": ["p-a"]}, (1, 3)),
        # a finally Job is in the lists but not among spec.flows
        ({"completedJobs": ["p-a", "p-notify"]}, (1, 3)),
        # running and pending Jobs are not done
        ({"runningJobs": ["p-a"], "pendingJobs": ["p-b"]}, (0, 3)),
    ],
)
def test_progress_counts_the_flows_with_an_outcome_over_spec_flows(
    status: dict[str, Any], expected: tuple[int, int]
) -> None:
    flows = [{"name": "a"}, after("b", "a"), after("c", "a")]
    assert progress(job_flow(flows, spec={"finally": [{"name": "notify"}]}, **status)) == expected


@pytest.mark.parametrize(
    ("phase", "status", "expected"),
    [
        ("Running", {"finishedAt": "2026-01-01T00:05:00Z"}, None),
        ("Succeed", {"finishedAt": "2026-01-01T00:05:00Z"}, "2026-01-01T00:05:00Z"),
        (
            "Failed",
            {
                "jobStatusList": [
                    {"name": "p-a", "endTimestamp": "2026-01-01T00:02:00Z"},
                    {"name": "p-b", "endTimestamp": "2026-01-01T00:04:00Z"},
                ]
            },
            "2026-01-01T00:04:00Z",
        ),
        ("Succeed", {}, None),
    ],
)
def test_a_jobflow_finishes_at_finished_at_else_at_its_last_jobs_end(
    phase: str, status: dict[str, Any], expected: str | None
) -> None:
    assert finished_at(job_flow([{"name": "a"}], phase, **status)) == expected


def test_a_list_row_says_suspended_and_shutting_down() -> None:
    row = list_row(job_flow([{"name": "a"}], spec={"suspend": True, "shutdown": "Stop"}))
    assert row["key"] == "ns/p" and row["suspended"] is True and row["shutdown"] == "Stop"
    assert list_row(job_flow([{"name": "a"}], suspendedSince="2026-01-01T00:01:00Z"))["suspended"] is True


# -- the page ----------------------------------------------------------------------------------
def phases(flow: dict[str, Any], jobs: list[dict[str, Any]] | None = None) -> dict[str, tuple[str, bool]]:
    return {row.name: (row.phase, final) for row, final in flow_rows(flow, jobs or [], NOW)}


def test_every_flow_gets_its_phase_waiting_skipped_and_finally_apart() -> None:
    flows = [{"name": "a"}, after("b", "a"), after("c", "a", rule="AnyFailed"), after("d", "c")]
    flow = job_flow(
        flows,
        spec={"finally": [{"name": "notify"}, {"name": "cleanup"}]},
        skippedJobs=["p-c", "p-d"],
        completedJobs=["p-a"],
        jobStatusList=[{"name": "p-a", "state": "Completed"}, {"name": "p-notify", "state": "Running"}],
    )
    assert phases(flow, [job("p-b", "Running")]) == {
        "a": ("Completed", False),
        "b": ("Running", False),
        "c": ("Skipped", False),
        "d": ("Skipped", False),
        "notify": ("Running", True),
        "cleanup": ("Waiting", True),
    }


def test_a_skipped_name_does_not_hide_a_job_that_exists() -> None:
    flow = job_flow([{"name": "a"}], skippedJobs=["p-a"])
    assert phases(flow, [job("p-a", "Pending")])["a"] == ("Pending", False)


def test_a_finally_name_that_repeats_a_flow_is_drawn_once() -> None:
    flow = job_flow([{"name": "a"}], spec={"finally": [{"name": "a"}, {"name": "z"}, {"name": "z"}]})
    assert shape(flow).finally_flows == ("z",)


def test_edges_carry_the_rule_of_the_flow_they_lead_to_unless_it_is_the_default() -> None:
    flows = [
        {"name": "a"},
        {"name": "b"},
        after("c", "a", "b", rule="AnyCompleted"),
        after("d", "c", rule="AllCompleted"),
        after("e", "c"),
    ]
    flow = job_flow(flows)
    drawing = layout_json(layout(shape(flow).flows, dict(shape(flow).targets)), flow)
    labels = {(e["from"], e["to"]): e["label"] for e in drawing["edges"]}
    assert labels == {("a", "c"): "AnyCompleted", ("b", "c"): "AnyCompleted", ("c", "d"): "", ("c", "e"): ""}
    assert set(drawing["boxes"]) == {"a", "b", "c", "d", "e"}


def test_a_node_shows_its_jobs_record_and_events() -> None:
    history = [{"state": "Running", "startTimestamp": "2026-01-01T00:01:00Z"}]
    flow = job_flow(
        [{"name": "a", "continueOnFailure": True, "activeDeadlineSeconds": 60}],
        jobStatusList=[{"name": "p-a", "state": "Running", "restartCount": 2, "runningHistories": history}],
        conditions={"p-a": {"phase": "Running", "createTime": "2026-01-01T00:01:00Z"}},
    )

    def events(kind: str, namespace: str, name: str) -> list[dict[str, Any]]:
        if (kind, namespace, name) == ("Job", "ns", "p-a"):
            return [
                {"type": "Normal", "reason": "Restarted", "message": "again", "lastTimestamp": "2026-01-01T00:02:00Z"}
            ]
        if (kind, name) == ("JobFlow", "p"):
            return [
                {"type": "Normal", "reason": "Created", "message": "late", "lastTimestamp": "2026-01-01T00:03:00Z"},
                {"type": "Normal", "reason": "Created", "message": "early", "lastTimestamp": "2026-01-01T00:01:00Z"},
            ]
        return []

    doc = page(flow, [], events, {}, {}, NOW)
    (node,) = doc["nodes"]
    assert node["record"]["restartCount"] == 2 and node["record"]["runningHistories"] == history
    assert node["record"]["condition"]["phase"] == "Running"
    assert [e["reason"] for e in node["record"]["events"]] == ["Restarted"]
    assert node["continueOnFailure"] is True and node["activeDeadlineSeconds"] == 60
    assert [e["message"] for e in doc["events"]] == ["early", "late"]


def test_the_page_carries_the_lifecycle_fields() -> None:
    request = json.dumps({"id": "r1", "flows": []})
    flow = job_flow(
        [{"name": "a"}],
        spec={"suspend": True, "failurePolicy": "RunToCompletion", "activeDeadlineSeconds": 7200},
        suspendedSince="2026-01-01T00:02:00Z",
        retryRequest="r0",
    )
    flow["metadata"]["annotations"] = {RETRY_REQUEST_ANNOTATION: request}
    doc = page(flow, [], no_events, {}, {}, NOW)
    assert doc["suspend"] is True and doc["suspendedSince"] == "2026-01-01T00:02:00Z"
    assert doc["failurePolicy"] == "RunToCompletion" and doc["activeDeadlineSeconds"] == 7200
    assert doc["retryRequest"] == "r0" and doc["retryRequested"] == request
    assert page(job_flow([{"name": "a"}]), [], no_events, {}, {}, NOW)["failurePolicy"] == "FailFast"


# -- actions -----------------------------------------------------------------------------------
ENABLED = ""


@pytest.mark.parametrize(
    ("phase", "spec", "status", "expected"),
    [
        (
            "Running",
            {},
            {},
            {"suspend": ENABLED, "resume": "not suspended", "stop": ENABLED, "terminate": ENABLED, "retry": "no flow"},
        ),
        (
            "Running",
            {"suspend": True},
            {},
            {
                "suspend": "already suspended",
                "resume": ENABLED,
                "stop": ENABLED,
                "terminate": ENABLED,
                "retry": "no flow",
            },
        ),
        (
            "Running",
            {"shutdown": "Stop"},
            {},
            {
                "suspend": "shutting down",
                "resume": "not suspended",
                "stop": "already Stop",
                "terminate": ENABLED,
                "retry": "no flow",
            },
        ),
        (
            "Terminating",
            {"shutdown": "Terminate"},
            {},
            {
                "suspend": "shutting down",
                "resume": "not suspended",
                "stop": "already Terminate",
                "terminate": "already Terminate",
                "retry": "no flow",
            },
        ),
        (
            "Failed",
            {},
            {"failedJobs": ["p-a"]},
            {
                "suspend": "finished",
                "resume": "not suspended",
                "stop": "finished",
                "terminate": "finished",
                "retry": ENABLED,
            },
        ),
        (
            "Succeed",
            {},
            {"skippedJobs": ["p-b"]},
            {
                "suspend": "finished",
                "resume": "not suspended",
                "stop": "finished",
                "terminate": "finished",
                "retry": ENABLED,
            },
        ),
    ],
)
def test_which_actions_apply(
    phase: str, spec: dict[str, Any], status: dict[str, Any], expected: dict[str, str]
) -> None:
    got = actions.availability(job_flow([{"name": "a"}], phase, spec, **status), None)
    for action, reason in expected.items():
        assert got[action]["enabled"] is (reason == ENABLED), action
        assert reason in got[action]["reason"], action


def test_a_user_who_may_not_patch_gets_every_action_disabled_with_the_reason() -> None:
    got = actions.availability(job_flow([{"name": "a"}], "Failed", failedJobs=["p-a"]), "no patch for you")
    assert {a: (v["enabled"], v["reason"]) for a, v in got.items()} == {
        a: (False, "no patch for you") for a in actions.ACTIONS
    }


@pytest.mark.parametrize(
    ("action", "patch"),
    [
        ("suspend", {"spec": {"suspend": True}}),
        ("resume", {"spec": {"suspend": False}}),
        ("stop", {"spec": {"shutdown": "Stop"}}),
        ("terminate", {"spec": {"shutdown": "Terminate"}}),
    ],
)
def test_each_action_is_the_plugins_merge_patch(action: str, patch: dict[str, Any]) -> None:
    assert actions.patch_for(action) == patch


def test_retry_writes_the_request_annotation_with_a_fresh_id_and_the_flows() -> None:
    patch = actions.patch_for("retry", ["b", "c"], request_id="r-1")
    assert json.loads(patch["metadata"]["annotations"][RETRY_REQUEST_ANNOTATION]) == {
        "id": "r-1",
        "flows": ["b", "c"],
    }
    first = json.loads(actions.patch_for("retry")["metadata"]["annotations"][RETRY_REQUEST_ANNOTATION])
    second = json.loads(actions.patch_for("retry")["metadata"]["annotations"][RETRY_REQUEST_ANNOTATION])
    assert first["id"] and first["id"] != second["id"] and "flows" not in first  # every Failed and Skipped flow
    with pytest.raises(ValueError, match="unknown verb"):
        actions.patch_for("delete")


@pytest.mark.parametrize(
    ("status", "denied"),
    [
        ({"allowed": True}, None),
        ({"allowed": False}, 'your RBAC does not allow patch on jobflows in namespace "ns"'),
        (
            {"allowed": False, "reason": "no RBAC policy matched"},
            'your RBAC does not allow patch on jobflows in namespace "ns" (no RBAC policy matched)',
        ),
        ({}, 'your RBAC does not allow patch on jobflows in namespace "ns"'),
    ],
)
def test_an_access_review_decides_whether_actions_are_allowed(status: dict[str, Any], denied: str | None) -> None:
    review = actions.access_review("ns")
    assert review["spec"]["resourceAttributes"] == {
        "namespace": "ns",
        "verb": "patch",
        "group": "flow.volcano.sh",
        "resource": "jobflows",
    }
    assert actions.denied_reason({"status": status}, "ns") == denied
