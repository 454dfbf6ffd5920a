"""Without the CronJobFlow CRD (docs/cron.md, "Operating it"): the controller logs one line and waits,
nothing else of the process waits for it, and it starts once the CRD is installed.

A file of its own: it deletes the CRD from the session's control plane (and installs it again), which
no other CronJobFlow test may see.
"""

from __future__ import annotations

import time
from pathlib import Path

from e2e_helpers import ControllerProcess, wait_for
from jobflows import chain, create_all, flow, phase_of, template
from test_e2e_cronjobflow import cron_events, cron_job_flow

from jobflow_controller.cronjobflow.crd_wait import MESSAGE_WAITING
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.kubectl import install_crds, kubectl
from jobflow_controller.local.simulator import JobSimulator


def test_without_the_crd_the_controller_logs_once_waits_and_holds_nothing_back(
    kubeconfig: Path, tmp_path: Path, clientset: Clientset, namespace: str, simulator: JobSimulator
) -> None:
    kubectl(kubeconfig, "delete", "crd", "cronjobflows.flow.volcano.sh", "--wait=true")
    proc = ControllerProcess(str(kubeconfig), tmp_path, "--leader-elect=false")
    try:
        wait_for(lambda: proc.get("/readyz") == (200, "ok"), 60, what="/readyz without the CronJobFlow CRD")
        create_all(clientset, [template("a", namespace)])
        create_all(clientset, [flow("still-runs", namespace, chain("a"))])
        wait_for(lambda: phase_of(clientset, namespace, "still-runs") == "Succeed", 60, what="a JobFlow to run")
        time.sleep(11)  # past one more look at discovery
        assert proc.log().count(MESSAGE_WAITING) == 1
        install_crds(kubeconfig)
        doc = cron_job_flow("late", namespace, {"timeZone": "Mars/Olympus"})  # CEL passes the shape
        clientset.cron_job_flows(namespace).create(doc)
        expected = ("Warning", "UnknownTimeZone", 'invalid timeZone: "Mars/Olympus": unknown time zone Mars/Olympus')
        wait_for(lambda: expected in cron_events(clientset, namespace, "late"), 40, what="the controller to start")
        assert "the CronJobFlow CRD is installed; cronjobflow-controller starts" in proc.log()
    finally:
        proc.stop()
        install_crds(kubeconfig)
