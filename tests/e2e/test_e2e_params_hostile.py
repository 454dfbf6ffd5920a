"""Hostile params, `when` and matrix values against the real control plane with the default install's
CRDs only (no webhook, no CEL Component): issue 42 items 1 and 2, docs/hostile-input.md.

* A matrix of 3 lists of 256 values (16.7 M combinations; the CRD alone admits 16 lists): before, the
  controller listed every Job name and passed 1.5 GiB in 4 s, and `kubectl jobflow tree` on it never
  returned. Now: `InvalidJobFlow` at once, the controller's peak RSS unmoved, the tree drawn.
* A template reading a 4 KiB param 100 times (a 400 KB expansion): no Job, a Warning `InvalidParams`
  naming the flow; before, the Job was sent at every retry and refused, with no Warning.
* A `when` input expanding to 1.5 MB: no Job, an `InvalidParams` Warning, nothing quoted whole.

The session's control plane carries the CEL Component (which now refuses the matrix above); these
tests put the plain CRDs of `kubectl apply -k manifests/` back for their duration, and the
Component's again after.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import ControllerProcess, wait_for
from jobflows import chain, create_all, events_of, flow, phase_of, template

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ApiStatusError
from jobflow_controller.local.kubectl import CRDS_DIR, install_crds, kubectl_path, plugin_env
from jobflow_controller.local.simulator import JobSimulator

BIG = "v" * 4096


@pytest.fixture
def default_crds(kubeconfig: Path) -> Iterator[None]:
    """The CRDs as `kubectl apply -k manifests/` installs them, without the CEL Component, for one test."""
    install_crds(kubeconfig, CRDS_DIR)
    try:
        yield
    finally:
        install_crds(kubeconfig)


@pytest.fixture
def controller(kubeconfig: Path, tmp_path: Path, default_crds: None) -> Iterator[ControllerProcess]:
    proc = ControllerProcess(str(kubeconfig), tmp_path, "--leader-elect=false")
    try:
        wait_for(lambda: proc.get("/readyz")[0] == 200, 60, what="/readyz")
        yield proc
    finally:
        proc.stop()


def peak_rss_mib(proc: ControllerProcess) -> float:
    for line in Path(f"/proc/{proc.popen.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def create_when_admitted(clientset: Clientset, doc: dict[str, Any]) -> None:
    """Create `doc`, waiting out the API server's switch to the plain CRDs (it may still refuse with the
    Component's rules for a moment after the apply)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            create_all(clientset, [doc])
            return
        except ApiStatusError as err:
            if time.monotonic() > deadline or err.code != 422:
                raise
            time.sleep(0.2)


def warnings_of(clientset: Clientset, namespace: str, name: str, reason: str) -> list[tuple[str, str, str, int]]:
    return [e for e in events_of(clientset, namespace, name) if e[0] == "Warning" and e[1] == reason]


def test_an_oversized_matrix_is_invalid_at_once_and_lists_nothing_in_the_controller_or_the_plugin(
    controller: ControllerProcess, simulator: JobSimulator, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    create_all(clientset, [template("a", namespace), template("b", namespace), template("m", namespace)])
    idle = peak_rss_mib(controller)
    lists = [{"name": f"p{i}", "values": [str(v) for v in range(256)]} for i in range(3)]
    create_when_admitted(clientset, flow("huge", namespace, [{"name": "m", "matrix": {"params": lists}}]))
    create_all(clientset, [flow("bystander", namespace, chain("a", "b"))])
    wait_for(lambda: warnings_of(clientset, namespace, "huge", "InvalidJobFlow"), 30, what="InvalidJobFlow")
    wait_for(lambda: phase_of(clientset, namespace, "bystander") == "Succeed", 60, what="the bystander")
    (warning,) = warnings_of(clientset, namespace, "huge", "InvalidJobFlow")
    assert "matrix: has 16777216 combinations, more than the 256 allowed" in warning[2]
    assert peak_rss_mib(controller) < idle + 50  # was past 1.5 GiB
    assert not [j for j in clientset.jobs(namespace).list() if j["metadata"]["name"].startswith("huge-")]

    started = time.monotonic()
    result = subprocess.run(
        [kubectl_path(), "jobflow", "tree", "huge", "-n", namespace, f"--kubeconfig={kubeconfig}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=plugin_env(kubeconfig),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Invalid" in result.stdout and time.monotonic() - started < 30


def test_a_job_over_its_expansion_budget_gets_invalid_params_naming_the_flow_and_the_rest_goes_on(
    controller: ControllerProcess, simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    reader = template("reader", namespace)
    reader["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"] = ["$(params.big)"] * 100
    create_all(clientset, [reader, template("a", namespace)])
    doc = flow("expands", namespace, [{"name": "reader"}, {"name": "a"}])
    doc["spec"]["params"] = [{"name": "big", "value": BIG}]
    create_when_admitted(clientset, doc)
    wait_for(lambda: warnings_of(clientset, namespace, "expands", "InvalidParams"), 30, what="InvalidParams")
    wait_for(lambda: "expands-a" in {j["metadata"]["name"] for j in clientset.jobs(namespace).list()}, 30, what="a")
    (warning,) = warnings_of(clientset, namespace, "expands", "InvalidParams")
    assert warning[2] == (
        'Job expands-reader is not created: the expansion of flow "reader" is over its budget: expansion would add'
        f" {100 * (4096 - 13)} characters to its Job, more than the 262144 allowed"
    )
    assert "expands-reader" not in {j["metadata"]["name"] for j in clientset.jobs(namespace).list()}
    assert "request is too large" not in controller.log()


def test_a_when_input_over_its_budget_is_never_expanded_nor_quoted_whole(
    controller: ControllerProcess, simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [template("a", namespace)])
    when = [{"input": "$(params.big)" * 315, "operator": "in", "values": ["x"]}]  # 4,095 characters
    doc = flow("judged", namespace, [{"name": "a", "when": when}])
    doc["spec"]["params"] = [{"name": "big", "value": BIG}]
    create_when_admitted(clientset, doc)
    wait_for(lambda: warnings_of(clientset, namespace, "judged", "InvalidParams"), 30, what="InvalidParams")
    events = events_of(clientset, namespace, "judged")
    assert all(len(message) < 4200 for _, _, message, _ in events)
    (warning,) = warnings_of(clientset, namespace, "judged", "InvalidParams")
    assert warning[2].endswith(f"when[0].input would expand to {315 * 4096} characters, more than the 65536 allowed")
    assert not clientset.jobs(namespace).list()
