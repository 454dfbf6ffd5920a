"""The Volcano job simulator drives real Jobs through their phase scripts, as Volcano would."""

from __future__ import annotations

from typing import Any

import pytest
from e2e_helpers import EventLog, wait_for
from jobflows import SIM

from jobflow_controller.apis import job as vcjob
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.phase_script import parse_script
from jobflow_controller.local.simulator import JobSimulator


def _job(name: str, namespace: str, script: str, replicas: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "minAvailable": replicas,
            "tasks": [
                {
                    "name": "worker",
                    "replicas": replicas,
                    "template": {
                        "metadata": {"annotations": {SIM: script}},
                        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                    },
                }
            ],
        },
    }


@pytest.mark.parametrize(
    "script",
    [
        "Pending:0.2s,Running:0.3s,Completed",
        "Pending:0.1s,Running:0.2s,Restarting:0.1s,Running:0.2s,Completing:0.1s,Completed",
        "Pending:0.1s,Running:0.2s,Failed",
        "Running:0.2s,Terminating:0.1s,Terminated",
        "Pending:0.1s,Aborting:0.1s,Aborted",
    ],
)
def test_a_job_goes_through_exactly_the_phases_of_its_script(
    simulator: JobSimulator, clientset: Clientset, namespace: str, script: str
) -> None:
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    try:
        clientset.jobs(namespace).create(_job("scripted", namespace, script))
        final = parse_script(script)[-1].phase

        def seen() -> list[str]:
            phases: list[str] = []
            for _, job in log.snapshot():
                phase = vcjob.phase(job)
                if phase and (not phases or phases[-1] != phase):
                    phases.append(phase)
            return phases

        # The watch may deliver the last event after a GET already shows it: wait on the watch.
        wait_for(lambda: seen()[-1:] == [final], 30, what=f"the watch to show {final}")
        assert seen() == [step.phase for step in parse_script(script)]
        status = clientset.jobs(namespace).get("scripted")["status"]
        assert status["retryCount"] == script.count("Restarting")
        assert status["runningDuration"].endswith("s")
        assert status["minAvailable"] == 2
        if final == "Completed":
            assert status["succeeded"] == 2
            assert status["taskStatusCount"] == {"worker": {"phase": {"Succeeded": 2}}}
    finally:
        log.close()


def test_a_malformed_script_is_a_warning_on_the_job_which_is_left_alone(
    simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    clientset.jobs(namespace).create(_job("broken", namespace, "Pending:soon,Completed"))

    def warnings() -> list[str]:
        return [
            e["message"]
            for e in clientset.events(namespace).list()
            if e["involvedObject"]["name"] == "broken" and e["type"] == "Warning"
        ]

    messages = wait_for(warnings, 30, what="the InvalidPhaseScript warning")
    assert messages[0].startswith(f"{SIM}: bad duration 'soon' for Pending")
    assert vcjob.phase(clientset.jobs(namespace).get("broken")) == ""
