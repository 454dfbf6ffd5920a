"""`kubectl jobflow`: the view of a JobFlow, its tree, its DOT, colour on a terminal and plain otherwise."""

from __future__ import annotations

import datetime
import io
import re
from typing import Any

import pytest

from kubectl_jobflow.dot import render_dot
from kubectl_jobflow.render import (
    ASCII,
    GREEN,
    RED,
    RESET,
    branches_for,
    human_duration,
    render_tree,
    use_color,
)
from kubectl_jobflow.view import NOT_CREATED, WAITING, FlowView, build_view

NOW = datetime.datetime(2026, 1, 1, 0, 10, 0, tzinfo=datetime.UTC)
UID = "uid-1"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def job_flow(flows: list[dict[str, Any]], phase: str = "Running", **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": UID, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"flows": flows},
        "status": {"state": {"phase": phase}, **status},
    }


def job(name: str, phase: str, created: str, *, owner: str = UID, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": created,
            "ownerReferences": [{"kind": "JobFlow", "name": "p", "uid": owner, "controller": True}],
        },
        "status": {"state": {"phase": phase}, **status},
    }


def after(name: str, *targets: str) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": list(targets)}}


DIAMOND = [{"name": "a"}, after("b", "a"), after("c", "a"), after("d", "b", "c")]


def diamond_view() -> FlowView:
    flow = job_flow(
        DIAMOND,
        jobStatusList=[
            {
                "name": "p-a",
                "state": "Completed",
                "startTimestamp": "2026-01-01T00:00:00Z",
                "endTimestamp": "2026-01-01T00:00:30Z",
            },
            {"name": "p-b", "state": "Running", "startTimestamp": "2026-01-01T00:01:00Z", "restartCount": 2},
        ],
    )
    jobs = [job("p-c", "Failed", "2026-01-01T00:05:00Z", runningDuration="1m5s")]
    return build_view(flow, jobs, NOW)


def plain(text: str) -> str:
    return ANSI.sub("", text)


# -- the view ----------------------------------------------------------------------------------
def test_a_finished_job_lasts_from_its_creation_to_its_end() -> None:
    row = diamond_view().row("a")
    assert row is not None
    assert (row.phase, row.duration, row.restarts) == ("Completed", 30.0, 0)


def test_a_running_job_lasts_until_now_and_shows_the_restart_count_of_the_status() -> None:
    row = diamond_view().row("b")
    assert row is not None
    assert (row.phase, row.duration, row.restarts) == ("Running", 540.0, 2)


def test_the_job_is_fresher_than_the_status_and_its_running_duration_ends_it() -> None:
    flow = job_flow([{"name": "a"}], jobStatusList=[{"name": "p-a", "state": "Running"}])
    view = build_view(flow, [job("p-a", "Failed", "2026-01-01T00:05:00Z", runningDuration="1m5s", retryCount=3)], NOW)
    row = view.row("a")
    assert row is not None
    assert (row.phase, row.duration, row.restarts) == ("Failed", 65.0, 0)  # restarts: the status entry's


def test_without_a_status_entry_the_restarts_are_the_jobs_retry_count() -> None:
    view = build_view(job_flow([{"name": "a"}]), [job("p-a", "Running", "2026-01-01T00:09:00Z", retryCount=3)], NOW)
    row = view.row("a")
    assert row is not None
    assert (row.phase, row.duration, row.restarts) == ("Running", 60.0, 3)


def test_a_job_the_jobflow_does_not_control_is_ignored() -> None:
    view = build_view(job_flow([{"name": "a"}]), [job("p-a", "Running", "2026-01-01T00:09:00Z", owner="other")], NOW)
    row = view.row("a")
    assert row is not None
    assert (row.phase, row.duration, row.restarts) == (WAITING, None, None)


def test_a_deleted_job_is_shown_from_the_status() -> None:
    entry = {
        "name": "p-a",
        "state": "Completed",
        "startTimestamp": "2026-01-01T00:00:00Z",
        "endTimestamp": "2026-01-01T00:02:00Z",
    }
    view = build_view(job_flow([{"name": "a"}], phase="Succeed", jobStatusList=[entry]), [], NOW)
    row = view.row("a")
    assert row is not None
    assert (row.phase, row.duration) == ("Completed", 120.0)


def test_a_flow_never_created_waits_while_the_jobflow_runs_and_is_not_created_once_it_ended() -> None:
    running = build_view(job_flow(DIAMOND), [], NOW).row("d")
    failed = build_view(job_flow(DIAMOND, phase="Failed"), [], NOW).row("d")
    assert running is not None and failed is not None
    assert (running.phase, failed.phase) == (WAITING, NOT_CREATED)


def test_targets_keep_their_order_without_duplicates() -> None:
    row = build_view(job_flow([{"name": "a"}, {"name": "b"}, after("c", "b", "a", "b")]), [], NOW).row("c")
    assert row is not None
    assert row.targets == ("b", "a")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "-"),
        (0, "0s"),
        (119, "119s"),
        (125, "2m5s"),
        (180, "3m"),
        (45 * 60, "45m"),
        (5 * 3600 + 600, "5h10m"),
        (30 * 3600, "30h"),
        (3 * 86400 + 4 * 3600, "3d4h"),
        (400 * 86400, "400d"),
    ],
)
def test_durations_read_like_kubectl_ages(seconds: float | None, text: str) -> None:
    assert human_duration(seconds) == text


# -- the tree ----------------------------------------------------------------------------------
def test_the_tree_puts_dependents_under_their_targets_and_marks_a_second_appearance() -> None:
    assert render_tree(diamond_view()) == (
        "JobFlow ns/p   Running   4 flows   age 10m\n"
        "FLOW        PHASE       DURATION   RESTARTS\n"
        "a           Completed   30s        0\n"
        "├── b       Running     9m         2\n"
        "│   └── d   Waiting     -          -\n"
        "└── c       Failed      65s        0\n"
        "    └── d (see above)\n"
    )


def test_a_chain_is_one_branch() -> None:
    view = build_view(job_flow([{"name": "a"}, after("b", "a"), after("c", "b")]), [], NOW)
    assert render_tree(view).splitlines()[2:] == [
        "a           Waiting   -          -",
        "└── b       Waiting   -          -",
        "    └── c   Waiting   -          -",
    ]


def test_several_roots_are_drawn_in_spec_order() -> None:
    view = build_view(job_flow([{"name": "x"}, {"name": "y", "dependsOn": {"targets": []}}, after("z", "y")]), [], NOW)
    assert render_tree(view).splitlines()[2:] == [
        "x       Waiting   -          -",
        "y       Waiting   -          -",
        "└── z   Waiting   -          -",
    ]


def test_flows_no_root_reaches_are_listed_apart_with_what_they_wait_for() -> None:
    view = build_view(job_flow([{"name": "a"}, after("b", "c"), after("c", "b"), after("x", "nope")]), [], NOW)
    assert render_tree(view).splitlines()[2:] == [
        "a                 Waiting   -          -",
        "not reachable from a root (a target names no flow, or the flows form a cycle):",
        "b (needs c)       Waiting   -          -",
        "└── c             Waiting   -          -",
        "    └── b (see above)",
        "x (needs nope?)   Waiting   -          -",
    ]


def test_a_jobflow_without_flows_says_so() -> None:
    assert render_tree(build_view(job_flow([]), [], NOW)).splitlines()[-1] == "(no flows)"


def test_plain_output_has_no_escape_codes() -> None:
    assert "\x1b" not in render_tree(diamond_view(), color=False)


def test_colour_paints_each_phase_and_keeps_the_columns_aligned() -> None:
    coloured = render_tree(diamond_view(), color=True)
    assert f"{GREEN}Completed{RESET}" in coloured
    assert f"{RED}Failed{RESET}" in coloured
    assert plain(coloured) == render_tree(diamond_view(), color=False)


def test_ascii_connectors_for_a_stream_that_cannot_encode_box_drawing() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert branches_for(stream) is ASCII
    text = render_tree(diamond_view(), branches=ASCII)
    assert "|-- b" in text and "`-- c" in text
    text.encode("ascii")


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("tty", "mode", "environ", "expected"),
    [
        (True, "auto", {}, True),
        (False, "auto", {}, False),
        (True, "auto", {"NO_COLOR": "1"}, False),
        (True, "auto", {"NO_COLOR": ""}, True),
        (True, "auto", {"TERM": "dumb"}, False),
        (False, "always", {"NO_COLOR": "1"}, True),
        (True, "never", {}, False),
    ],
)
def test_colour_on_a_terminal_plain_when_piped_and_no_color_honoured(
    tty: bool, mode: str, environ: dict[str, str], expected: bool
) -> None:
    assert use_color(_Stream(tty), mode, environ) is expected


# -- DOT ---------------------------------------------------------------------------------------
def test_dot_has_a_node_per_flow_and_an_edge_from_each_target() -> None:
    dot = render_dot(diamond_view())
    assert dot.startswith('digraph "p" {\n') and dot.endswith("}\n")
    assert '  "a" [label="a\\nCompleted, 30s", fillcolor="#c8e6c9"];' in dot
    assert '  "b" [label="b\\nRunning, 9m\\nrestarts: 2", fillcolor="#b3e5fc"];' in dot
    assert '  "d" [label="d\\nWaiting", fillcolor="#eeeeee"];' in dot
    edges = [ln.strip() for ln in dot.splitlines() if "->" in ln]
    assert edges == ['"a" -> "b";', '"a" -> "c";', '"b" -> "d";', '"c" -> "d";']
    assert 'label="ns/p: Running"' in dot


def test_dot_draws_an_unknown_target_dashed() -> None:
    dot = render_dot(build_view(job_flow([after("x", "nope")]), [], NOW))
    assert '  "nope" [label="nope\\n(no such flow)", style=dashed];' in dot
    assert '  "nope" -> "x";' in dot


def test_dot_quotes_are_escaped() -> None:
    flow = job_flow([{"name": 'we"ird\\'}])
    flow["metadata"]["name"] = 'q"'
    dot = render_dot(build_view(flow, [], NOW))
    assert dot.startswith('digraph "q\\"" {')
    assert '"we\\"ird\\\\" [label="we\\"ird\\\\\\nWaiting"' in dot


# -- lifecycle (docs/lifecycle.md) ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "status", "heading"),
    [
        ({}, {}, "JobFlow ns/p   Running   1 flow   age 10m"),
        ({"suspend": True}, {}, "JobFlow ns/p   Running   1 flow   age 10m   suspended"),
        (
            {"suspend": True},
            {"suspendedSince": "2026-01-01T00:07:00Z"},
            "JobFlow ns/p   Running   1 flow   age 10m   suspended 3m",
        ),
        ({"suspend": False}, {}, "JobFlow ns/p   Running   1 flow   age 10m"),
        ({"shutdown": "Stop"}, {}, "JobFlow ns/p   Running   1 flow   age 10m   shutdown Stop"),
        (
            {"suspend": True, "shutdown": "Terminate"},
            {},
            "JobFlow ns/p   Running   1 flow   age 10m   suspended   shutdown Terminate",
        ),
    ],
)
def test_the_heading_says_suspended_since_when_and_the_shutdown(
    spec: dict[str, Any], status: dict[str, Any], heading: str
) -> None:
    flow = job_flow([{"name": "a"}], **status)
    flow["spec"].update(spec)
    assert render_tree(build_view(flow, [], NOW)).splitlines()[0] == heading
