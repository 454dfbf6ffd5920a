"""Results (docs/results.md) against a real API server: a Job's pod reports values in its termination
message (the simulator writes it from `sim.jobflow.volcano.sh/results`), the controller reads them into
`status.jobStatusList[].results` once the Job ended; a missing one fails the flow with `InvalidResult`;
results survive `jobRetainPolicy: delete`, a controller restart and a re-run from failure (which reports anew).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import RunningManager, wait_for
from jobflows import FAST, create_all, events_of, flow, job_names, phase_of, template

from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION, retry_request_value
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.kubectl import kubectl_path, plugin_env
from jobflow_controller.local.simulated_pods import RESULTS_ANNOTATION, RETRY_RESULTS_ANNOTATION_PREFIX
from jobflow_controller.local.simulator import JobSimulator

TRAIN = [
    {"name": "train", "results": {"names": ["accuracy", "model"]}},
    {"name": "publish", "dependsOn": {"targets": ["train"]}},
]


@pytest.fixture
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=2)
    yield running
    running.stop()


def reporting(name: str, namespace: str, message: str, **per_attempt: str) -> dict[str, Any]:
    doc = template(name, namespace, FAST)
    annotations = doc["spec"]["tasks"][0]["template"]["metadata"]["annotations"]
    annotations[RESULTS_ANNOTATION] = message
    for attempt, text in per_attempt.items():
        annotations[f"{RETRY_RESULTS_ANNOTATION_PREFIX}{attempt.removeprefix('attempt')}"] = text
    return doc


def final(clientset: Clientset, namespace: str, name: str, timeout: float = 60) -> str:
    wait_for(lambda: phase_of(clientset, namespace, name) in ("Succeed", "Failed"), timeout, what=f"{name} final")
    return phase_of(clientset, namespace, name)


def results_of(clientset: Clientset, namespace: str, name: str) -> dict[str, Any]:
    status = clientset.job_flows(namespace).get(name).get("status") or {}
    return {e["name"]: e.get("results") for e in status.get("jobStatusList") or []}


GOOD = json.dumps({"accuracy": "0.93", "model": "s3://m/42"})


def test_results_go_from_the_pod_to_the_status_and_survive_retain_delete(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [reporting("train", namespace, GOOD), template("publish", namespace)])
    create_all(clientset, [flow("ml", namespace, TRAIN, retain="delete")])
    assert final(clientset, namespace, "ml") == "Succeed"
    wait_for(lambda: job_names(clientset, namespace) == [], 30, what="jobRetainPolicy: delete")
    assert results_of(clientset, namespace, "ml") == {
        "ml-train": {"accuracy": "0.93", "model": "s3://m/42"},
        "ml-publish": None,
    }


def test_results_survive_a_controller_restart(
    kubeconfig: Path, simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    slow = template("publish", namespace, "Pending:0.2s,Running:3s,Completed")
    create_all(clientset, [reporting("train", namespace, GOOD), slow])
    create_all(clientset, [flow("ml", namespace, TRAIN)])
    first = RunningManager(str(kubeconfig), worker_threads=2)
    try:
        wait_for(lambda: bool(results_of(clientset, namespace, "ml").get("ml-train")), 30, what="train's results")
    finally:
        first.stop()
    clientset.pods(namespace).delete("ml-train-main-0")  # nothing is read again after a restart
    second = RunningManager(str(kubeconfig), worker_threads=2)
    try:
        assert final(clientset, namespace, "ml") == "Succeed"
    finally:
        second.stop()
    assert results_of(clientset, namespace, "ml")["ml-train"] == {"accuracy": "0.93", "model": "s3://m/42"}
    assert [e for e in events_of(clientset, namespace, "ml") if e[1] == "InvalidResult"] == []


def test_a_missing_result_fails_the_flow_with_invalid_result_then_a_rerun_reports_anew(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    partial = json.dumps({"accuracy": "0.5"})
    create_all(clientset, [reporting("train", namespace, partial, attempt1=GOOD), template("publish", namespace)])
    create_all(clientset, [flow("bad", namespace, TRAIN)])
    assert final(clientset, namespace, "bad") == "Failed"
    assert "bad-publish" not in job_names(clientset, namespace)
    assert results_of(clientset, namespace, "bad")["bad-train"] == {"accuracy": "0.5"}
    warnings = [e for e in events_of(clientset, namespace, "bad") if e[1] == "InvalidResult"]
    assert len(warnings) == 1 and warnings[0][0] == "Warning"
    assert "Flow train, Job bad-train: result 'model': not reported by any container" in warnings[0][2]
    patch = {"metadata": {"annotations": {RETRY_REQUEST_ANNOTATION: retry_request_value("r1")}}}
    clientset.job_flows(namespace).patch("bad", patch)
    wait_for(lambda: phase_of(clientset, namespace, "bad") == "Succeed", 60, what="the re-run to succeed")
    assert results_of(clientset, namespace, "bad")["bad-train"] == {"accuracy": "0.93", "model": "s3://m/42"}


def test_a_failed_job_is_read_without_a_warning(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    doc = reporting("train", namespace, json.dumps({"accuracy": "0.1"}))
    doc["spec"]["tasks"][0]["template"]["metadata"]["annotations"]["sim.jobflow.volcano.sh/phases"] = (
        "Pending:0.2s,Running:0.4s,Failed"
    )
    create_all(clientset, [doc, template("publish", namespace)])
    create_all(clientset, [flow("f", namespace, TRAIN)])
    assert final(clientset, namespace, "f") == "Failed"
    wait_for(lambda: results_of(clientset, namespace, "f").get("f-train") is not None, 20, what="the read")
    assert results_of(clientset, namespace, "f")["f-train"] == {"accuracy": "0.1"}
    assert [e for e in events_of(clientset, namespace, "f") if e[1] == "InvalidResult"] == []


def test_results_reach_a_dependents_job_spec_and_its_when(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    publish = template("publish", namespace)
    container = publish["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    container["args"] = ["--model=$(flows.train.results.model)", "--acc=$(flows.train.results.accuracy)"]
    sweep = reporting("sweep", namespace, json.dumps({"loss": "0.$(matrix.x)"}))
    flows = [
        *TRAIN,
        {
            "name": "gate",
            "dependsOn": {"targets": ["train"]},
            "when": [{"input": "$(flows.train.results.accuracy)", "operator": "in", "values": ["0.93"]}],
        },
        {
            "name": "never",
            "dependsOn": {"targets": ["train"]},
            "when": [{"input": "$(flows.train.results.accuracy)", "operator": "notin", "values": ["0.93"]}],
        },
        {"name": "sweep", "matrix": {"params": [{"name": "x", "values": ["1", "2"]}]}, "results": {"names": ["loss"]}},
        {"name": "pick", "dependsOn": {"targets": ["sweep"]}},
    ]
    pick = template("pick", namespace)
    pick["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"] = ["$(flows.sweep.results.loss[*])"]
    docs = [reporting("train", namespace, GOOD), publish, template("gate", namespace), template("never", namespace)]
    create_all(clientset, [*docs, sweep, pick, flow("deps", namespace, flows)])
    assert final(clientset, namespace, "deps") == "Succeed"
    job = clientset.jobs(namespace).get("deps-publish")
    args = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"]
    assert args == ["--model=s3://m/42", "--acc=0.93"]
    names = job_names(clientset, namespace)
    assert "deps-gate" in names and "deps-never" not in names
    picked = clientset.jobs(namespace).get("deps-pick")["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert picked["args"] == ['["0.1", "0.2"]']


def test_the_jobflows_own_results_are_resolved_when_it_succeeds(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    """`spec.results` (stored through the real CRD schema) become `status.results` on Succeed; an entry
    whose reference has no value is left out and named in one `InvalidResult` Warning."""
    sweep = reporting("sweep", namespace, json.dumps({"loss": "0.$(matrix.x)"}))
    flows = [
        *TRAIN,
        {"name": "sweep", "matrix": {"params": [{"name": "x", "values": ["1", "2"]}]}, "results": {"names": ["loss"]}},
    ]
    doc = flow("own", namespace, flows)
    doc["spec"]["params"] = [{"name": "stage", "value": "prod"}]
    doc["spec"]["results"] = [
        {"name": "best-model", "value": "$(flows.train.results.model)"},
        {"name": "summary", "value": "$(params.stage): $(flows.train.results.accuracy) $(flows.sweep.results.loss[*])"},
        {"name": "missing", "value": "$(params.nope)"},
    ]
    create_all(clientset, [reporting("train", namespace, GOOD), template("publish", namespace), sweep, doc])
    assert final(clientset, namespace, "own") == "Succeed"
    status = clientset.job_flows(namespace).get("own")["status"]
    assert status["results"] == [
        {"name": "best-model", "value": "s3://m/42"},
        {"name": "summary", "value": 'prod: 0.93 ["0.1", "0.2"]'},
    ]
    wait_for(
        lambda: any(e[1] == "InvalidResult" for e in events_of(clientset, namespace, "own")), 20, what="the Warning"
    )
    (warning,) = [e for e in events_of(clientset, namespace, "own") if e[1] == "InvalidResult"]
    assert warning[0] == "Warning"
    assert warning[2] == "JobFlow results: result 'missing': $(params.nope) has no value; left out of status.results"


def kubectl_jobflow(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`kubectl jobflow ARGS` through kubectl itself, which finds the plugin on PATH."""
    command = [kubectl_path(), "jobflow", *args, "--kubeconfig", str(kubeconfig)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=plugin_env(kubeconfig), check=False)


def test_kubectl_jobflow_results_prints_every_jobs_results_and_the_jobflows_own(
    controller: RunningManager, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    doc = flow("shown", namespace, TRAIN)
    doc["spec"]["results"] = [{"name": "best-model", "value": "$(flows.train.results.model)"}]
    create_all(clientset, [reporting("train", namespace, GOOD), template("publish", namespace), doc])
    assert final(clientset, namespace, "shown") == "Succeed"
    table = kubectl_jobflow(kubeconfig, "results", "shown", "-n", namespace)
    assert table.returncode == 0, table.stderr
    assert [line.split() for line in table.stdout.splitlines()] == [
        ["JOB", "NAME", "VALUE"],
        ["shown-train", "accuracy", "0.93"],
        ["shown-train", "model", "s3://m/42"],
        ["(jobflow)", "best-model", "s3://m/42"],
    ]
    as_json = kubectl_jobflow(kubeconfig, "results", "shown", "-n", namespace, "-o", "json")
    assert json.loads(as_json.stdout) == {
        "jobs": {"shown-train": {"accuracy": "0.93", "model": "s3://m/42"}},
        "results": {"best-model": "s3://m/42"},
    }
    tree = kubectl_jobflow(kubeconfig, "tree", "shown", "-n", namespace, "--color", "never")
    assert tree.returncode == 0, tree.stderr
    assert tree.stdout.splitlines()[1].split()[-1] == "RESULTS"
    assert tree.stdout.splitlines()[2].endswith("accuracy=0.93 model=s3://m/42")
    gone = kubectl_jobflow(kubeconfig, "results", "gone", "-n", namespace)
    assert gone.returncode == 1 and gone.stdout == ""
    assert gone.stderr.strip().splitlines() == [
        f'error: jobflows.flow.volcano.sh "gone" not found in namespace "{namespace}"'
    ]
