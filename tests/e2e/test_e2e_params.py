"""`params`, `when` and `matrix` with `maxParallel` (docs/params.md) against a real API server.

A 2x3 sweep with `maxParallel: 2` (every Job watched: never three unfinished at once; each with its
`$(matrix.*)` values in its container's env and args), a failing index under FailFast and under
RunToCompletion, a re-run of a matrix flow, `when` true and false with each dependent rule, and a
JobFlow without the new fields whose templates hold `$(...)` text, made as today. The simulator ends
each Job as its pod template's script says; a matrix value can be that script (`$(matrix.result)`),
so one index fails and the others complete.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import EventLog, RunningManager, wait_for
from jobflows import FAST, SIM, create_all, events_of, flow, job_names, phase_of, template

from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION, retry_request_value
from jobflow_controller.apis.params import MATRIX_INDEX_LABEL, MATRIX_PARAMS_ANNOTATION
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.phase_script import RETRY_PHASES_ANNOTATION_PREFIX
from jobflow_controller.local.simulator import JobSimulator

FINISHED = ("Completed", "Failed", "Terminated")
#: A Job that runs long enough for two to overlap, then ends as the matrix value `result` says.
BY_RESULT = "Pending:0.2s,Running:0.8s,$(matrix.result)"


@pytest.fixture
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=3)
    yield running
    running.stop()


def final(clientset: Clientset, namespace: str, name: str, timeout: float = 90) -> str:
    wait_for(lambda: phase_of(clientset, namespace, name) in ("Succeed", "Failed"), timeout, what=f"{name} final")
    return phase_of(clientset, namespace, name)


def status_of(clientset: Clientset, namespace: str, name: str) -> dict[str, Any]:
    return dict(clientset.job_flows(namespace).get(name).get("status") or {})


def trainer(name: str, namespace: str, script: str = FAST) -> dict[str, Any]:
    """A template whose container reads the sweep's values from env and args."""
    doc = template(name, namespace, script)
    container = doc["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    container["env"] = [
        {"name": "LR", "value": "$(matrix.lr)"},
        {"name": "SEED", "value": "$(matrix.seed)"},
        {"name": "RUN", "value": "$(context.jobflow.name)/$(context.flow.name)/$(context.matrix.index)"},
    ]
    container["args"] = ["--lr=$(matrix.lr)", "--seed=$(matrix.seed)", "--data=$(params.dataset)", "$$(HOME)"]
    return doc


def matrix(*lists: tuple[str, list[str]], max_parallel: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"params": [{"name": n, "values": v} for n, v in lists]}
    if max_parallel is not None:
        out["maxParallel"] = max_parallel
    return out


def most_unfinished_at_once(log: EventLog, prefix: str) -> int:
    """The most Jobs named `prefix*` that existed unfinished at the same time, over every watch event."""
    phases: dict[str, str] = {}
    most = 0
    for kind, obj in log.snapshot():
        name = obj["metadata"]["name"]
        if not name.startswith(prefix):
            continue
        if kind == "DELETED":
            phases.pop(name, None)
        else:
            phases[name] = ((obj.get("status") or {}).get("state") or {}).get("phase") or ""
        most = max(most, sum(1 for p in phases.values() if p not in FINISHED))
    return most


def test_a_2x3_sweep_runs_each_combination_in_index_order_never_more_than_max_parallel_at_once(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    try:
        docs = [
            template("prepare", namespace),
            trainer("train", namespace, "Pending:0.2s,Running:1s,Completed"),
            template("report", namespace),
        ]
        obj = flow(
            "tune",
            namespace,
            [
                {
                    "name": "prepare",
                    "when": [{"input": "$(params.mode)", "operator": "in", "values": ["full", "incr"]}],
                },
                {
                    "name": "train",
                    "dependsOn": {"targets": ["prepare"]},
                    "matrix": matrix(("lr", ["0.1", "0.01"]), ("seed", ["1", "2", "3"]), max_parallel=2),
                },
                {"name": "report", "dependsOn": {"targets": ["train"]}},
            ],
        )
        obj["spec"]["params"] = [
            {"name": "dataset", "value": "s3://bucket/2026-12-05"},
            {"name": "mode", "value": "full"},
        ]
        create_all(clientset, [*docs, obj])
        assert final(clientset, namespace, "tune") == "Succeed"
        assert most_unfinished_at_once(log, "tune-train-") == 2
        created = [
            o["metadata"]["name"] for k, o in log.snapshot() if k == "ADDED" and "-train-" in o["metadata"]["name"]
        ]
        assert created == [f"tune-train-{i}" for i in range(6)]  # index order
    finally:
        log.close()
    assert job_names(clientset, namespace) == sorted(
        ["tune-prepare", "tune-report", *(f"tune-train-{i}" for i in range(6))]
    )
    product = [(lr, seed) for lr in ("0.1", "0.01") for seed in ("1", "2", "3")]
    for index, (lr, seed) in enumerate(product):
        job = clientset.jobs(namespace).get(f"tune-train-{index}")
        assert job["metadata"]["labels"][MATRIX_INDEX_LABEL] == str(index)
        assert job["metadata"]["annotations"][MATRIX_PARAMS_ANNOTATION] == json.dumps(
            {"lr": lr, "seed": seed}, separators=(",", ":")
        )
        container = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
        assert container["env"] == [
            {"name": "LR", "value": lr},
            {"name": "SEED", "value": seed},
            {"name": "RUN", "value": f"tune/train/{index}"},
        ]
        assert container["args"] == [f"--lr={lr}", f"--seed={seed}", "--data=s3://bucket/2026-12-05", "$(HOME)"]
    # The JobTemplate is never modified.
    stored = clientset.job_templates(namespace).get("train")["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert stored["args"][0] == "--lr=$(matrix.lr)"
    status = status_of(clientset, namespace, "tune")
    assert sorted(status["completedJobs"]) == job_names(clientset, namespace)
    assert {e["name"] for e in status["jobStatusList"]} == set(job_names(clientset, namespace))
    assert "skippedJobs" not in status


def failing_sweep(name: str, namespace: str, policy: str) -> list[dict[str, Any]]:
    """`train` over four results, the second Failed, one at a time; `after` waits on it, `other` does not."""
    train = template("train", namespace, BY_RESULT)
    obj = flow(
        name,
        namespace,
        [
            {
                "name": "train",
                "matrix": matrix(("result", ["Completed", "Failed", "Completed", "Completed"]), max_parallel=1),
            },
            {"name": "after", "dependsOn": {"targets": ["train"]}},
            {"name": "other"},
        ],
    )
    obj["spec"]["failurePolicy"] = policy
    return [train, template("after", namespace), template("other", namespace, "Pending:0.2s,Running:6s,Completed"), obj]


def test_a_failing_index_under_fail_fast_fails_the_job_flow_and_creates_no_further_index(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, failing_sweep("ff", namespace, "FailFast"))
    assert final(clientset, namespace, "ff") == "Failed"
    names = job_names(clientset, namespace)
    assert [n for n in names if n.startswith("ff-train-")] == ["ff-train-0", "ff-train-1"]
    assert "ff-after" not in names
    status = status_of(clientset, namespace, "ff")
    assert status["failedJobs"] == ["ff-train-1"]
    assert "ff-other" in status.get("runningJobs", []) + status.get("pendingJobs", [])  # failed at once


def test_a_failing_index_under_run_to_completion_stops_its_flow_and_dependents_only(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, failing_sweep("rtc", namespace, "RunToCompletion"))
    assert final(clientset, namespace, "rtc") == "Failed"
    names = job_names(clientset, namespace)
    assert [n for n in names if n.startswith("rtc-train-")] == ["rtc-train-0", "rtc-train-1"]
    status = status_of(clientset, namespace, "rtc")
    assert "rtc-other" in status["completedJobs"]  # the other branch ran to its end
    assert status["skippedJobs"] == ["rtc-after"]
    told = [m for t, r, m, _ in events_of(clientset, namespace, "rtc") if (t, r) == ("Normal", "Skipped")]
    assert told == ["Flow after is skipped: its rule AllCompleted can no longer be met (train: Failed)"]


def test_a_re_run_of_a_matrix_flow_re_runs_only_its_failed_and_never_created_indexes(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    docs = failing_sweep("again", namespace, "FailFast")
    annotations = docs[0]["spec"]["tasks"][0]["template"]["metadata"]["annotations"]
    annotations[f"{RETRY_PHASES_ANNOTATION_PREFIX}1"] = FAST  # the re-created Job completes
    create_all(clientset, docs)
    assert final(clientset, namespace, "again") == "Failed"
    first = clientset.jobs(namespace).get("again-train-0")["metadata"]["uid"]
    patch = {"metadata": {"annotations": {RETRY_REQUEST_ANNOTATION: retry_request_value("r1")}}}
    clientset.job_flows(namespace).patch("again", patch)
    wait_for(lambda: phase_of(clientset, namespace, "again") == "Succeed", 90, what="the re-run to succeed")
    assert clientset.jobs(namespace).get("again-train-0")["metadata"]["uid"] == first  # kept
    assert [n for n in job_names(clientset, namespace) if "-train-" in n] == [f"again-train-{i}" for i in range(4)]
    entries = {e["name"]: e for e in status_of(clientset, namespace, "again")["jobStatusList"]}
    assert entries["again-train-1"]["restartCount"] == 1
    assert "restartCount" not in entries["again-train-0"]


@pytest.mark.parametrize(("mode", "holds"), [("full", True), ("dry", False)])
def test_when_true_and_false_with_each_dependent_rule(
    controller: RunningManager, clientset: Clientset, namespace: str, mode: str, holds: bool
) -> None:
    gate = {"name": "gate", "when": [{"input": "$(params.mode)", "operator": "in", "values": ["full", "incremental"]}]}
    flows = [
        gate,
        {"name": "all-completed", "dependsOn": {"targets": ["gate"]}},
        {"name": "all-done", "dependsOn": {"targets": ["gate"], "rule": "AllDone"}},
        {"name": "none-failed", "dependsOn": {"targets": ["gate"], "rule": "NoneFailed"}},
    ]
    obj = flow("w", namespace, flows)
    obj["spec"]["params"] = [{"name": "mode", "value": mode}]
    create_all(clientset, [*(template(f["name"], namespace) for f in flows), obj])
    assert final(clientset, namespace, "w") == "Succeed"  # a skip by when is not a failure
    names = job_names(clientset, namespace)
    status = status_of(clientset, namespace, "w")
    told = [m for t, r, m, _ in events_of(clientset, namespace, "w") if (t, r) == ("Normal", "Skipped")]
    if holds:
        assert names == ["w-all-completed", "w-all-done", "w-gate", "w-none-failed"]
        assert "skippedJobs" not in status
        assert told == []
    else:
        assert names == ["w-all-done", "w-none-failed"]
        assert status["skippedJobs"] == ["w-gate", "w-all-completed"]
        assert sorted(told) == [
            "Flow all-completed is skipped: its rule AllCompleted can no longer be met (gate: Skipped)",
            'flow gate skipped: when "$(params.mode)" (= "dry") in [full, incremental] is false',
        ]


def test_a_job_flow_without_the_new_fields_is_made_as_today(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    literal = ["$(params.mode)", "$$(HOME)", "$(context.jobflow.name)"]
    docs = [template("a", namespace), template("b", namespace)]
    docs[0]["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"] = literal
    create_all(
        clientset, [*docs, flow("plain", namespace, [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}])]
    )
    assert final(clientset, namespace, "plain") == "Succeed"
    job = clientset.jobs(namespace).get("plain-a")
    assert job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"] == literal  # not expanded
    assert MATRIX_INDEX_LABEL not in job["metadata"]["labels"]
    assert set(job["metadata"]["annotations"]) == {"volcano.sh/createdByJobFlow", "volcano.sh/createdByJobTemplate"}
    status = status_of(clientset, namespace, "plain")
    assert set(status) == {"completedJobs", "jobStatusList", "conditions", "state"}
    reasons = sorted(r for _, r, _, _ in events_of(clientset, namespace, "plain"))
    assert reasons == ["Created", "Created"]
    assert SIM in job["spec"]["tasks"][0]["template"]["metadata"]["annotations"]


def test_a_matrix_flow_with_job_retain_policy_delete_has_all_its_jobs_deleted_at_the_end(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    """`jobRetainPolicy: delete` deletes every Job of a matrix flow (one per combination) once the JobFlow Succeeded."""
    obj = flow("sweep", namespace, [{"name": "train", "matrix": matrix(("result", ["Completed", "Completed"]))}])
    obj["spec"]["jobRetainPolicy"] = "delete"
    create_all(clientset, [template("train", namespace, BY_RESULT), obj])
    wait_for(lambda: len(job_names(clientset, namespace)) == 2, 60, what="both matrix Jobs created")
    assert final(clientset, namespace, "sweep") == "Succeed"
    wait_for(lambda: job_names(clientset, namespace) == [], 60, what="every matrix Job deleted")
