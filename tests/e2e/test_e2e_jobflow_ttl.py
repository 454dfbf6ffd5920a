"""`ttlSecondsAfterFinished`: a flow's finished Jobs are deleted and none of them ever runs again.

The simulator plays Volcano's garbage collector too: a finished Job whose spec sets
`ttlSecondsAfterFinished` is deleted that long after its last transition, Foreground, as Volcano's
`gc-controller` does. Upstream's deploy re-creates any missing Job whose targets are Completed, even
in Succeed, so such a flow ran again at each sync; ours never re-creates a Job its status records
as Completed, and a Succeeded JobFlow creates nothing (issue 14, docs/deviations.md row 8).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from e2e_helpers import EventLog, RunningManager, wait_for, wait_for_foreground_deletes
from jobflows import FAST, create_all, events_of, flow, job_names, phase_of, template

from jobflow_controller.apis import meta
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.simulator import JobSimulator

TTL = 1
RESYNC = 1.0
#: Long enough for `a` to complete and be deleted while `b` still runs, so that `c` (which needs
#: both) can only be created from the record of `a`.
SLOW = "Pending:0.2s,Running:6s,Completed"


def ttl_template(name: str, namespace: str, script: str) -> dict[str, Any]:
    doc = template(name, namespace, script)
    doc["spec"]["ttlSecondsAfterFinished"] = TTL
    return doc


def syncs_done(controller: RunningManager) -> float:
    """How many requests the JobFlow controller's workers have finished (workqueue metrics)."""
    value = controller.manager.registry.get_sample_value("workqueue_work_duration_seconds_count", {"name": "jobflow"})
    return value or 0.0


def test_a_flow_whose_jobs_expire_succeeds_once_and_never_runs_a_job_again(
    kubeconfig: Path, simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    wait_for_foreground_deletes(clientset, namespace)
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    controllers = [RunningManager(str(kubeconfig), resync_period=RESYNC)]
    names = ["expiring-a", "expiring-b", "expiring-c"]

    def events(kind: str) -> list[dict[str, Any]]:
        return [job for k, job in log.snapshot() if k == kind]

    def first(kind: str, name: str) -> int:
        return next(i for i, (k, job) in enumerate(log.snapshot()) if k == kind and meta.name(job) == name)

    try:
        create_all(clientset, [ttl_template("a", namespace, FAST), ttl_template("b", namespace, SLOW)])
        create_all(clientset, [ttl_template("c", namespace, FAST)])
        flows = [{"name": "a"}, {"name": "b"}, {"name": "c", "dependsOn": {"targets": ["a", "b"]}}]
        create_all(clientset, [flow("expiring", namespace, flows)])

        wait_for(lambda: phase_of(clientset, namespace, "expiring") == "Succeed", 60, what="the flow to Succeed")
        wait_for(lambda: job_names(clientset, namespace) == [], 60, what="the TTL to delete every Job")
        wait_for(lambda: len(events("DELETED")) == 3, 30, what="our watch to see the three deletes")
        # While the flow was Running, `a` was deleted before `c` was created: `c` ran on a's record.
        assert first("DELETED", "expiring-a") < first("ADDED", "expiring-c")

        time.sleep(4 * RESYNC)  # a few resync periods with every Job gone
        # A restart syncs every JobFlow (its initial list): upstream's Succeed sync re-creates `a` here.
        controllers[0].stop()
        controllers.append(RunningManager(str(kubeconfig), resync_period=RESYNC))
        restarted = controllers[-1]
        wait_for(lambda: syncs_done(restarted) >= 1, 30, what="the restarted controller to sync the JobFlow")
        time.sleep(4 * RESYNC)

        added = events("ADDED")
        assert sorted(meta.name(j) for j in added) == names  # each Job created once, none again
        assert len({meta.uid(j) for j in added}) == 3
        assert job_names(clientset, namespace) == []
        created = sorted(e for e in events_of(clientset, namespace, "expiring") if e[1] == "Created")
        assert [(e[2], e[3]) for e in created] == [(f"create a job named {n}!", 1) for n in names]

        job_flow = clientset.job_flows(namespace).get("expiring")
        status = job_flow["status"]
        assert status["state"] == {"phase": "Succeed"}
        # The lists name the Jobs that exist (none); jobStatusList keeps what ran, as upstream's does.
        assert not any(key.endswith("Jobs") for key in status), status
        assert "conditions" not in status
        assert [(e["name"], e["state"]) for e in status["jobStatusList"]] == [(n, "Completed") for n in names]
        assert restarted.manager.controllers[0].metrics.succeed_count(namespace) == 0  # counted before the restart
    finally:
        log.close()
        for controller in controllers:
            controller.stop()  # a second stop of a stopped manager returns at once
