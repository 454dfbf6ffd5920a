"""`kubectl jobflow tree` shows each flow's results (docs/results.md) in a RESULTS column, escaped and cut,
only when a flow reported some: a JobFlow without results draws the tree it always did."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from kubectl_jobflow.render import RESULTS_WIDTH, render_tree
from kubectl_jobflow.view import build_view, results_note

NOW = datetime.datetime(2026, 1, 1, 0, 10, 0, tzinfo=datetime.UTC)


def job_flow(entries: list[dict[str, Any]]) -> dict[str, Any]:
    flows = [
        {"name": "train", "results": {"names": ["acc", "model"]}},
        {"name": "publish", "dependsOn": {"targets": ["train"]}},
        {"name": "sweep", "matrix": {"params": [{"name": "x", "values": ["1", "2"]}]}, "results": {"names": ["loss"]}},
    ]
    return {
        "metadata": {"name": "ml", "namespace": "ns", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"flows": flows},
        "status": {"state": {"phase": "Running"}, "jobStatusList": entries},
    }


def entry(name: str, results: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "state": "Completed", "startTimestamp": "2026-01-01T00:01:00Z"}
    if results is not None:
        out["results"] = results
    return out


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()[1:]]


def test_each_flow_shows_what_its_jobs_reported() -> None:
    entries = [
        entry("ml-train", {"acc": "0.93", "model": "s3://m/42"}),
        entry("ml-publish"),
        entry("ml-sweep-0", {"loss": "0.1"}),
    ]
    text = render_tree(build_view(job_flow(entries), [], NOW))
    assert rows(text)[0] == ["FLOW", "PHASE", "DURATION", "RESTARTS", "RESULTS"]
    lines = text.splitlines()
    assert lines[2].endswith("acc=0.93 model=s3://m/42")
    assert "publish" in lines[3] and "=" not in lines[3]
    assert lines[4].endswith("loss=[0.1,?]")


def test_no_results_no_column() -> None:
    text = render_tree(build_view(job_flow([entry("ml-train"), entry("ml-publish")]), [], NOW))
    assert "RESULTS" not in text


def test_a_long_or_hostile_value_is_escaped_and_cut() -> None:
    text = render_tree(build_view(job_flow([entry("ml-train", {"acc": "\x1b[2J" + "x" * 200})]), [], NOW))
    line = text.splitlines()[2]
    assert "\x1b" not in line and line.endswith("…")
    assert len(line.split("   ")[-1].strip()) == RESULTS_WIDTH


@pytest.mark.parametrize(
    ("entries", "matrix", "note"),
    [
        ([None], False, ""),
        ([{"name": "j"}], False, ""),
        ([{"results": {}}], False, ""),
        ([{"results": {"a": "1", "b": "2"}}], False, "a=1 b=2"),
        ([{"results": {"a": "1"}}, None, {"results": {"a": "3"}}], True, "a=[1,?,3]"),
    ],
)
def test_results_note(entries: list[Any], matrix: bool, note: str) -> None:
    assert results_note(entries, matrix=matrix) == note
