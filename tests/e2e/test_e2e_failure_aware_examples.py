"""The three failure-aware examples of docs/rules.md (manifests/examples/failure-aware), run on the real
control plane by the controller and the simulator: each ends as its comment says, flow by flow."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import RunningManager, wait_for
from jobflows import create_all, phase_of

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.kubectl import EXAMPLES_DIR
from jobflow_controller.local.simulator import JobSimulator

DIRECTORY = EXAMPLES_DIR / "failure-aware"
OUTCOME_ANNOTATION = "flow.volcano.sh/jobflow-outcome"


@pytest.fixture(scope="module")
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=3)
    yield running
    running.stop()


def example(name: str, namespace: str) -> list[dict[str, Any]]:
    """The example's JobTemplates, then its JobFlow, moved to ``namespace``."""
    docs = []
    for kind in ("jobtemplates", "jobflow"):
        text = (DIRECTORY / f"{name}-{kind}.yaml").read_text(encoding="utf-8")
        docs.extend(d for d in yaml.safe_load_all(text) if d)
    for doc in docs:
        doc["metadata"]["namespace"] = namespace
    return docs


def outcomes(clientset: Clientset, namespace: str, name: str) -> dict[str, list[str]]:
    """The status lists of the ended JobFlow, by flow name (the Job name without ``<jobflow>-``)."""
    status = clientset.job_flows(namespace).get(name).get("status") or {}
    lists = ("completedJobs", "failedJobs", "skippedJobs")
    return {key: sorted(j.removeprefix(f"{name}-") for j in status.get(key) or []) for key in lists}


EXPECTED: dict[str, tuple[str, dict[str, list[str]]]] = {
    "on-failure-alerting": (
        "Succeed",
        {
            "completedJobs": ["page-oncall", "prepare-data"],
            "failedJobs": ["train-model"],
            "skippedJobs": ["publish-model"],
        },
    ),
    "flaky-optional-step": (
        "Succeed",
        {
            "completedJobs": ["build-index", "crawl-pages", "publish-index"],
            "failedJobs": ["enrich-metadata"],
            "skippedJobs": [],
        },
    ),
    "nightly-report": (
        "Failed",
        {
            "completedJobs": ["extract-apac", "extract-eu", "notify-team", "report-apac", "report-eu", "summarize"],
            "failedJobs": ["extract-us"],
            "skippedJobs": ["report-us"],
        },
    ),
}


@pytest.mark.parametrize(("name", "phase", "lists"), [(n, *e) for n, e in EXPECTED.items()], ids=list(EXPECTED))
def test_the_example_ends_as_its_comment_says(
    controller: RunningManager,
    clientset: Clientset,
    namespace: str,
    name: str,
    phase: str,
    lists: dict[str, list[str]],
) -> None:
    create_all(clientset, example(name, namespace))
    wait_for(lambda: phase_of(clientset, namespace, name) == phase, 90, what=f"{name} {phase}")
    assert outcomes(clientset, namespace, name) == lists


def test_the_nightly_reports_notifier_is_told_the_jobflow_failed(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, example("nightly-report", namespace))
    wait_for(lambda: phase_of(clientset, namespace, "nightly-report") == "Failed", 90, what="nightly-report Failed")
    notify = clientset.jobs(namespace).get("nightly-report-notify-team")
    assert notify["metadata"]["annotations"][OUTCOME_ANNOTATION] == "Failed"
