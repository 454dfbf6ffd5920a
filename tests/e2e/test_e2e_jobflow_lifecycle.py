"""Controller lifecycles: giving up on a missing template and resuming, restarting mid-flow."""

from __future__ import annotations

import time
from pathlib import Path

from e2e_helpers import EventLog, RunningManager, wait_for
from jobflows import chain, create_all, events_of, flow, job_names, phase_of, template

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.simulator import JobSimulator


def test_a_missing_template_warns_after_max_requeue_num_and_resumes_when_created(
    kubeconfig: Path, simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    controller = RunningManager(str(kubeconfig), max_requeue_num=2)
    try:
        create_all(clientset, [template("a", namespace)])
        create_all(clientset, [flow("waiting", namespace, chain("a", "late"))])
        expected = (
            "Warning",
            "SyncJobFlow",
            'SyncJobFlow JobFlow failed for sync jobflow waiting failed for jobtemplate.flow.volcano.sh "late" '
            "not found, event is OutOfSync, action is SyncJobFlow",
        )
        wait_for(
            lambda: any(e[:3] == expected for e in events_of(clientset, namespace, "waiting")),
            60,
            what="the SyncJobFlow Warning",
        )
        assert phase_of(clientset, namespace, "waiting") != "Succeed"
        create_all(clientset, [template("late", namespace)])
        wait_for(lambda: phase_of(clientset, namespace, "waiting") == "Succeed", 60, what="the flow to resume")
        assert job_names(clientset, namespace) == ["waiting-a", "waiting-late"]
    finally:
        controller.stop()


def test_restarting_the_controller_mid_flow_neither_duplicates_nor_loses_progress(
    kubeconfig: Path, simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    first = RunningManager(str(kubeconfig))
    second = None
    try:
        create_all(clientset, [template(n, namespace, "Pending:0.2s,Running:1.5s,Completed") for n in "abc"])
        create_all(clientset, [flow("restarted", namespace, chain("a", "b", "c"))])
        wait_for(lambda: "restarted-b" in job_names(clientset, namespace), 60, what="the second Job")
        first.stop()
        second = RunningManager(str(kubeconfig))
        wait_for(lambda: phase_of(clientset, namespace, "restarted") == "Succeed", 60)

        def added() -> list[str]:
            return [job["metadata"]["name"] for kind, job in log.snapshot() if kind == "ADDED"]

        wait_for(lambda: len(added()) >= 3, 30, what="our watch to see the three Jobs")
        time.sleep(0.5)  # a duplicate, were there one, would arrive right behind
        added_jobs = added()
        assert added_jobs == ["restarted-a", "restarted-b", "restarted-c"]
        created = sorted(e for e in events_of(clientset, namespace, "restarted") if e[1] == "Created")
        assert [e[2] for e in created] == [f"create a job named restarted-{n}!" for n in "abc"]
        status = clientset.job_flows(namespace).get("restarted")["status"]
        assert sorted(status["completedJobs"]) == ["restarted-a", "restarted-b", "restarted-c"]
    finally:
        log.close()
        first.stop()
        if second is not None:
            second.stop()
