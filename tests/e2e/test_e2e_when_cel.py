"""`when[].cel` (docs/results.md) against a real API server: a cel reading a flow's result runs its flow
when true and skips it when false; one that cannot be judged at run time fails the flow with one
`InvalidWhen` Warning; the webhook refuses an expression that does not compile, with the library's
message naming the flow and the item; the CRD's rule (the session's Component) refuses an item with
both `cel` and `input`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import RunningManager, wait_for
from jobflows import FAST, create_all, events_of, flow, job_names, phase_of, template
from test_e2e_admission import (  # noqa: F401 - fixtures used by name
    Cluster,
    crd_rule_refusal,
    labelled_namespace,
    session_registration,
    upstream_crd_cluster,
    upstream_crd_registration,
    webhook,
    webhook_namespace,
    webhook_refusal,
)
from test_e2e_results import reporting

from informers.errors import ApiStatusError
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.simulator import JobSimulator

GOOD = json.dumps({"accuracy": "0.93"})


@pytest.fixture
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=2)
    yield running
    running.stop()


def gated(cel: str) -> list[dict[str, Any]]:
    return [
        {"name": "train", "results": {"names": ["accuracy"]}},
        {"name": "publish", "dependsOn": {"targets": ["train"]}, "when": [{"cel": cel}]},
    ]


def final(clientset: Clientset, namespace: str, name: str) -> str:
    wait_for(lambda: phase_of(clientset, namespace, name) in ("Succeed", "Failed"), 60, what=f"{name} final")
    return phase_of(clientset, namespace, name)


def run(clientset: Clientset, namespace: str, name: str, cel: str) -> str:
    create_all(clientset, [reporting("train", namespace, GOOD), template("publish", namespace, FAST)])
    create_all(clientset, [flow(name, namespace, gated(cel))])
    return final(clientset, namespace, name)


def test_a_true_cel_reading_a_result_runs_its_flow(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    assert run(clientset, namespace, "ok", "double(flows['train'].results['accuracy']) >= 0.9") == "Succeed"
    assert sorted(job_names(clientset, namespace)) == ["ok-publish", "ok-train"]


def test_a_false_cel_skips_its_flow_quoting_the_expression(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    assert run(clientset, namespace, "no", "double(flows['train'].results['accuracy']) > 0.99") == "Succeed"
    assert job_names(clientset, namespace) == ["no-train"]
    status = clientset.job_flows(namespace).get("no")["status"]
    assert status["skippedJobs"] == ["no-publish"]
    skipped = [e[2] for e in events_of(clientset, namespace, "no") if e[1] == "Skipped"]
    assert skipped == ["flow publish skipped: when cel \"double(flows['train'].results['accuracy']) > 0.99\" is false"]


def test_a_cel_that_fails_at_run_time_fails_the_flow_with_one_invalid_when(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    assert run(clientset, namespace, "bad", "flows['train'].results['accuracy'] == flows['nope']") == "Failed"
    assert job_names(clientset, namespace) == ["bad-train"]
    warnings = [e for e in events_of(clientset, namespace, "bad") if e[1] == "InvalidWhen"]
    assert len(warnings) == 1 and warnings[0][0] == "Warning" and warnings[0][3] == 1
    assert warnings[0][2] == (
        "Flow publish, when[0].cel \"flows['train'].results['accuracy'] == flows['nope']\": no such key: 'nope';"
        " the flow counts as Failed"
    )


def test_the_webhook_refuses_a_cel_that_does_not_compile(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    cluster: Cluster = request.getfixturevalue("upstream_crd_cluster")
    namespace = str(request.getfixturevalue("webhook_namespace"))
    applied = cluster.apply(flow("jobflow", namespace, gated("flows['train'] ==")), tmp_path)
    assert applied.returncode == 1
    prefix = webhook_refusal(applied, 'jobflow Flow "publish": when[0].cel: Failed to parse expression').rstrip("\n")
    assert applied.stderr.startswith(prefix), applied.stderr
    assert "Syntax error" in applied.stderr


def test_the_crd_rule_refuses_cel_beside_input_without_the_webhook(clientset: Clientset, namespace: str) -> None:
    both = [{"name": "a", "when": [{"cel": "true", "input": "x", "operator": "in", "values": ["x"]}]}]
    with pytest.raises(ApiStatusError) as refused:
        clientset.job_flows(namespace).create(flow("both", namespace, both), dry_run=True)
    assert "jobflow Flow when item sets cel, or input, operator and values, not both" in refused.value.message
