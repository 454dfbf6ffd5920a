"""`kubectl jobflow` on a matrix flow (issue 37, docs/params.md): one node with its Jobs' counts by phase,
in the tree, in DOT and in the web view's documents (with each Job, for the opened node)."""

from __future__ import annotations

import datetime
import tracemalloc
from typing import Any

from kubectl_jobflow.dot import render_dot
from kubectl_jobflow.render import render_tree
from kubectl_jobflow.ui.detail import flow_rows, node
from kubectl_jobflow.ui.rows import progress
from kubectl_jobflow.view import INVALID, SKIPPED, WAITING, build_view

NOW = datetime.datetime(2026, 1, 1, 0, 10, 0, tzinfo=datetime.UTC)
UID = "uid-1"
SWEEP = {"params": [{"name": "lr", "values": ["0.1", "0.01"]}, {"name": "seed", "values": ["1", "2", "3"]}]}


def job_flow(phase: str = "Running", **status: Any) -> dict[str, Any]:
    flows = [
        {"name": "prepare"},
        {"name": "train", "dependsOn": {"targets": ["prepare"]}, "matrix": {**SWEEP, "maxParallel": 2}},
        {"name": "report", "dependsOn": {"targets": ["train"]}},
    ]
    return {
        "metadata": {"name": "tune", "namespace": "ml", "uid": UID, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"flows": flows},
        "status": {"state": {"phase": phase}, **status},
    }


def job(name: str, phase: str, created: str = "2026-01-01T00:01:00Z", **status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": created,
            "ownerReferences": [{"kind": "JobFlow", "name": "tune", "uid": UID, "controller": True}],
        },
        "status": {"state": {"phase": phase}, **status},
    }


RUNNING = [
    job("tune-prepare", "Completed", "2026-01-01T00:00:00Z", runningDuration="1m0s"),
    job("tune-train-0", "Completed", runningDuration="2m0s"),
    job("tune-train-1", "Completed", runningDuration="3m0s"),
    job("tune-train-2", "Running"),
    job("tune-train-3", "Pending"),
]


def test_the_tree_shows_a_matrix_flow_as_one_node_with_its_jobs_counts_by_phase() -> None:
    text = render_tree(build_view(job_flow(), RUNNING, NOW))
    lines = text.splitlines()
    train = next(line for line in lines if "train" in line)
    assert train.split()[:8] == ["└──", "train", "(6", "Jobs:", "2", "Completed,", "1", "Running,"]
    assert "1 Pending, 2 Waiting)" in train
    assert train.split()[-3:] == ["Running", "9m", "0"]  # the longest Job's duration, the restarts' sum
    assert not any("tune-train-" in line for line in lines)


def test_a_matrix_flow_ends_failed_as_soon_as_one_job_failed_and_completed_once_all_did() -> None:
    failed = build_view(job_flow(), [*RUNNING[:3], job("tune-train-2", "Failed")], NOW).row("train")
    assert failed is not None and failed.phase == "Failed"
    done = [RUNNING[0], *(job(f"tune-train-{i}", "Completed", runningDuration="1m0s") for i in range(6))]
    completed = build_view(job_flow(), done, NOW).row("train")
    assert completed is not None and (completed.phase, completed.counts) == ("Completed", (("Completed", 6),))
    waiting = build_view(job_flow(), RUNNING[:1], NOW).row("train")
    assert waiting is not None and (waiting.phase, waiting.counts_note) == (WAITING, "6 Jobs: 6 Waiting")


def test_a_skipped_matrix_flow_is_one_skipped_node() -> None:
    view = build_view(job_flow(skippedJobs=["tune-train", "tune-report"]), [job("tune-prepare", "Failed")], NOW)
    row = view.row("train")
    assert row is not None and (row.phase, row.counts_note) == (SKIPPED, "6 Jobs: 6 Skipped")


def test_dot_labels_the_matrix_node_with_its_counts() -> None:
    dot = render_dot(build_view(job_flow(), RUNNING, NOW))
    assert '"train" [label="train\\nRunning, 9m\\n6 Jobs: 2 Completed, 1 Running, 1 Pending, 2 Waiting"' in dot


def test_the_web_view_sends_the_counts_and_each_job_of_a_matrix_node() -> None:
    obj = job_flow(completedJobs=["tune-prepare", "tune-train-0", "tune-train-1"])
    rows = {row.name: row for row, _ in flow_rows(obj, RUNNING, NOW)}
    sent = node(rows["train"], False, {}, {})
    assert sent["counts"] == [["Completed", 2], ["Running", 1], ["Pending", 1], ["Waiting", 2]]
    assert [(j["job"], j["phase"]) for j in sent["jobs"]] == [
        ("tune-train-0", "Completed"),
        ("tune-train-1", "Completed"),
        ("tune-train-2", "Running"),
        ("tune-train-3", "Pending"),
        ("tune-train-4", "Waiting"),
        ("tune-train-5", "Waiting"),
    ]
    assert node(rows["prepare"], False, {}, {})["jobs"] == []
    assert progress(obj) == (1, 3)
    every = [f"tune-train-{i}" for i in range(6)]
    assert progress(job_flow(completedJobs=["tune-prepare", *every])) == (2, 3)
    assert progress(job_flow(skippedJobs=["tune-train", "tune-report"], failedJobs=["tune-prepare"])) == (3, 3)


def test_an_oversized_matrix_is_one_invalid_node_and_no_job_is_listed() -> None:
    """3 lists of 256 values (16.7 M combinations): `kubectl jobflow tree` reached 1 GiB and never
    returned; now the tree, DOT, the list row and the detail page are drawn without listing one."""
    big = job_flow()
    lists = [{"name": f"p{i}", "values": [str(v) for v in range(256)]} for i in range(3)]
    big["spec"]["flows"][1]["matrix"] = {"params": lists}
    tracemalloc.start()
    view = build_view(big, RUNNING, NOW)
    tree, dot, done = render_tree(view), render_dot(view), progress(big)
    rows = flow_rows(big, RUNNING, NOW)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 5 * 1024 * 1024
    train = view.row("train")
    assert train.phase == INVALID and train.jobs == ()
    assert "Invalid" in tree and "train" in dot
    assert done == (0, 3)
    assert rows
