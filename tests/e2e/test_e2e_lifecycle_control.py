"""Lifecycle control (docs/lifecycle.md) against a real API server and the Volcano job simulator:
suspend then resume, stop, terminate (Commands the simulator takes as Volcano does), a flow's
deadline with a retry, the JobFlow's deadline, TTL with each retain policy and across a controller
restart, and a re-run of the last of five steps after it failed."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import RunningManager, wait_for
from jobflows import FAST, create_all, events_of, failing_template, flow, job_names, phase_of, template

from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION as RETRY_REQUEST
from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION
from jobflow_controller.apis.rules import OUTCOME_ANNOTATION
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import NotFoundError
from jobflow_controller.local.kubectl import kubectl_path, plugin_env
from jobflow_controller.local.simulator import JobSimulator

SLOW = "Pending:0.2s,Running:3s,Completed"
LONG = "Pending:0.2s,Running:120s,Completed"


@pytest.fixture
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=3)
    yield running
    running.stop()


def status_of(clientset: Clientset, namespace: str, name: str) -> dict[str, Any]:
    return dict(clientset.job_flows(namespace).get(name).get("status") or {})


def patch_spec(clientset: Clientset, namespace: str, name: str, **spec: Any) -> None:
    clientset.job_flows(namespace).patch(name, {"spec": spec})


def reasons(clientset: Clientset, namespace: str, name: str) -> list[tuple[str, str]]:
    return [(t, r) for t, r, _, _ in events_of(clientset, namespace, name)]


def job_phase(clientset: Clientset, namespace: str, name: str) -> str:
    try:
        return str((clientset.jobs(namespace).get(name).get("status") or {}).get("state", {}).get("phase") or "")
    except NotFoundError:
        return ""


def test_suspend_then_resume_mid_run(controller: RunningManager, clientset: Clientset, namespace: str) -> None:
    flows = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    create_all(clientset, [template("a", namespace, SLOW), template("b", namespace), flow("s", namespace, flows)])
    wait_for(lambda: job_phase(clientset, namespace, "s-a") == "Running", 20, what="a Running")
    patch_spec(clientset, namespace, "s", suspend=True)
    wait_for(lambda: "suspendedSince" in status_of(clientset, namespace, "s"), 10, what="suspendedSince")
    wait_for(lambda: job_phase(clientset, namespace, "s-a") == "Completed", 20, what="a Completed")
    time.sleep(2)  # b is due now; suspended, it is not created (the running Job a went on)
    assert "s-b" not in job_names(clientset, namespace)
    assert phase_of(clientset, namespace, "s") == "Running"
    patch_spec(clientset, namespace, "s", suspend=False)
    wait_for(lambda: phase_of(clientset, namespace, "s") == "Succeed", 30, what="s Succeed")
    assert "suspendedSince" not in status_of(clientset, namespace, "s")
    told = reasons(clientset, namespace, "s")
    assert ("Normal", "Suspended") in told and ("Normal", "Resumed") in told


def test_stop_lets_the_running_job_finish_runs_finally_and_fails(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    templates = [template("a", namespace, SLOW), template("b", namespace), template("notify", namespace)]
    obj = flow("st", namespace, [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}])
    obj["spec"]["finally"] = [{"name": "notify"}]
    create_all(clientset, [*templates, obj])
    wait_for(lambda: job_phase(clientset, namespace, "st-a") == "Running", 20, what="a Running")
    patch_spec(clientset, namespace, "st", shutdown="Stop")
    wait_for(lambda: phase_of(clientset, namespace, "st") == "Failed", 30, what="st Failed")
    assert job_phase(clientset, namespace, "st-a") == "Completed"  # it ran to its end
    assert "st-b" not in job_names(clientset, namespace)
    assert clientset.jobs(namespace).get("st-notify")["metadata"]["annotations"][OUTCOME_ANNOTATION] == "Failed"
    assert ("Normal", "Stopped") in reasons(clientset, namespace, "st")


def test_terminate_sends_terminate_commands_the_jobs_end_terminated_and_no_finally_runs(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    templates = [template("a", namespace, LONG), template("x", namespace, LONG), template("notify", namespace)]
    obj = flow("t", namespace, [{"name": "a"}, {"name": "x"}])
    obj["spec"]["finally"] = [{"name": "notify"}]
    create_all(clientset, [*templates, obj])
    for job in ("t-a", "t-x"):
        wait_for(lambda job=job: job_phase(clientset, namespace, job) == "Running", 20, what=f"{job} Running")
    patch_spec(clientset, namespace, "t", shutdown="Terminate")
    wait_for(lambda: phase_of(clientset, namespace, "t") == "Failed", 30, what="t Failed")
    assert [job_phase(clientset, namespace, j) for j in ("t-a", "t-x")] == ["Terminated", "Terminated"]
    assert "t-notify" not in job_names(clientset, namespace)
    assert sorted(status_of(clientset, namespace, "t")["terminatedJobs"]) == ["t-a", "t-x"]
    assert ("Normal", "Terminated") in reasons(clientset, namespace, "t")
    # The simulator, as Volcano's job controller, recorded each Command on its Job and deleted it.
    issued = [
        e
        for e in clientset.events(namespace).list()
        if e["reason"] == "CommandIssued" and "TerminateJob" in e["message"]
    ]
    assert sorted(e["involvedObject"]["name"] for e in issued) == ["t-a", "t-x"]
    assert clientset.commands(namespace).list() == []


def test_a_flow_past_its_deadline_is_terminated_and_retried(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    slow_then_fast = template("a", namespace, LONG)
    annotations = slow_then_fast["spec"]["tasks"][0]["template"]["metadata"]["annotations"]
    annotations["sim.jobflow.volcano.sh/phases-retry-1"] = FAST
    flows = [{"name": "a", "activeDeadlineSeconds": 2, "retry": {"maxRetries": 1, "backoff": "1s"}}]
    create_all(clientset, [slow_then_fast, flow("d", namespace, flows)])
    wait_for(lambda: phase_of(clientset, namespace, "d") == "Succeed", 40, what="d Succeed")
    (entry,) = status_of(clientset, namespace, "d")["jobStatusList"]
    assert entry["restartCount"] == 1
    assert clientset.jobs(namespace).get("d-a")["metadata"]["annotations"][ATTEMPT_ANNOTATION] == "1"
    warnings = [m for t, r, m, _ in events_of(clientset, namespace, "d") if (t, r) == ("Warning", "DeadlineExceeded")]
    assert warnings == ["Job d-a of flow a ran past its activeDeadlineSeconds (2s): terminating it"]


def test_the_job_flow_deadline_terminates_its_jobs_and_fails_it_without_finally(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    obj = flow("dl", namespace, [{"name": "a"}])
    obj["spec"].update(activeDeadlineSeconds=3, **{"finally": [{"name": "notify"}]})
    create_all(clientset, [template("a", namespace, LONG), template("notify", namespace), obj])
    wait_for(lambda: phase_of(clientset, namespace, "dl") == "Failed", 30, what="dl Failed")
    assert job_phase(clientset, namespace, "dl-a") == "Terminated"
    assert "dl-notify" not in job_names(clientset, namespace)
    warnings = [r for t, r in reasons(clientset, namespace, "dl") if t == "Warning"]
    assert "DeadlineExceeded" in warnings


def gone(clientset: Clientset, namespace: str, name: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            clientset.job_flows(namespace).get(name)
        except NotFoundError:
            return True
        return False

    return check


def test_ttl_deletes_a_finished_job_flow_and_its_jobs_follow_the_retain_policy(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    kept = flow("kept", namespace, [{"name": "a"}], retain="retain")
    kept["spec"]["ttlSecondsAfterFinished"] = 2
    dropped = flow("dropped", namespace, [{"name": "a"}], retain="delete")
    dropped["spec"]["ttlSecondsAfterFinished"] = 2
    create_all(clientset, [template("a", namespace), kept, dropped])
    wait_for(lambda: "finishedAt" in status_of(clientset, namespace, "kept"), 20, what="kept finished")
    finished = time.monotonic()
    wait_for(gone(clientset, namespace, "kept"), 20, what="kept deleted")
    assert time.monotonic() - finished >= 1.0
    wait_for(gone(clientset, namespace, "dropped"), 20, what="dropped deleted")
    # retain: the Job stays, orphaned (the garbage collector removed its owner reference).
    wait_for(lambda: not clientset.jobs(namespace).get("kept-a")["metadata"].get("ownerReferences"), 60, what="orphan")
    assert "dropped-a" not in job_names(clientset, namespace)


def test_ttl_counts_from_the_recorded_finish_across_a_controller_restart(
    kubeconfig: Path, simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    first = RunningManager(str(kubeconfig), worker_threads=2)
    try:
        obj = flow("r", namespace, [{"name": "a"}])
        obj["spec"]["ttlSecondsAfterFinished"] = 6
        create_all(clientset, [template("a", namespace), obj])
        wait_for(lambda: "finishedAt" in status_of(clientset, namespace, "r"), 20, what="r finished")
    finally:
        first.stop()
    stamped = status_of(clientset, namespace, "r")["finishedAt"]
    time.sleep(6)  # the TTL passes while no controller runs
    second = RunningManager(str(kubeconfig), worker_threads=2)
    try:
        started = time.monotonic()
        wait_for(gone(clientset, namespace, "r"), 10, what="r deleted by the restarted controller")
        assert time.monotonic() - started < 5  # from the recorded finish, not from the restart
    finally:
        second.stop()
    assert stamped


def test_kubectl_jobflow_retry_after_a_failure_in_the_last_of_five_steps_reruns_only_that_step(
    controller: RunningManager, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    names = ["s1", "s2", "s3", "s4", "s5"]
    templates = [template(n, namespace) for n in names[:4]] + [failing_template("s5", namespace, then=FAST)]
    flows = [{"name": n, **({"dependsOn": {"targets": [names[i - 1]]}} if i else {})} for i, n in enumerate(names)]
    create_all(clientset, [*templates, flow("five", namespace, flows)])
    wait_for(lambda: phase_of(clientset, namespace, "five") == "Failed", 40, what="five Failed")
    uids = {n: clientset.jobs(namespace).get(f"five-{n}")["metadata"]["uid"] for n in names[:4]}
    done = subprocess.run(
        [kubectl_path(), "jobflow", "retry", "five", "-n", namespace, f"--kubeconfig={kubeconfig}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=plugin_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "retry requested" in done.stdout
    wait_for(lambda: phase_of(clientset, namespace, "five") == "Succeed", 40, what="five Succeed after the re-run")
    assert {n: clientset.jobs(namespace).get(f"five-{n}")["metadata"]["uid"] for n in names[:4]} == uids
    status = status_of(clientset, namespace, "five")
    request = json.loads(clientset.job_flows(namespace).get("five")["metadata"]["annotations"][RETRY_REQUEST])
    assert status["retryRequest"] == request["id"]
    restarts = {e["name"]: e.get("restartCount", 0) for e in status["jobStatusList"]}
    assert restarts == {"five-s1": 0, "five-s2": 0, "five-s3": 0, "five-s4": 0, "five-s5": 1}
    retried = [m for t, r, m, _ in events_of(clientset, namespace, "five") if (t, r) == ("Normal", "Retried")]
    assert retried == ["Re-running flows: s5"]
