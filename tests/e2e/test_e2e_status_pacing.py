"""The status bucket on a real control plane (urgency.py, deviations row 38).

With a bucket of one token a second, a burst of JobFlows has its intermediate statuses paced while
its Jobs are created as soon as they are due; every JobFlow still ends with exactly the status
upstream computes, and no write ever shows a Job in an earlier phase than a write before it.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import EventLog, RunningManager, wait_for
from jobflows import chain, create_all, flow, job_names, phase_of, template

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.simulator import JobSimulator

FLOWS = 8
STEPS = ("one", "two", "three")
#: Each phase a Job goes through, in order; a later write must never show an earlier one.
ORDER = {"": 0, "Pending": 1, "Running": 2, "Completed": 3}


@pytest.fixture(scope="module")
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=3, status_write_qps=1.0, status_write_burst=1)
    yield running
    running.stop()


def _states(status: dict[str, Any]) -> dict[str, int]:
    return {e["name"]: ORDER.get(e.get("state") or "", 0) for e in status.get("jobStatusList") or []}


def test_a_burst_is_paced_and_every_job_flow_still_ends_with_upstreams_status(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [template(n, namespace) for n in STEPS])
    log = EventLog(clientset.job_flows(namespace).lister_watcher())
    names = [f"paced-{i}" for i in range(FLOWS)]
    try:
        started = time.monotonic()
        create_all(clientset, [flow(n, namespace, chain(*STEPS)) for n in names])
        wait_for(lambda: all(phase_of(clientset, namespace, n) == "Succeed" for n in names), 90, what="all Succeed")
        elapsed = time.monotonic() - started
        time.sleep(1.5)  # a paced write still on its way would show now
        events = log.snapshot()
    finally:
        log.close()

    assert job_names(clientset, namespace) == sorted(f"{n}-{s}" for n in names for s in STEPS)
    writes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for kind, obj in events:
        if kind == "MODIFIED":
            writes[obj["metadata"]["name"]].append(obj.get("status") or {})

    for name in names:
        final = clientset.job_flows(namespace).get(name)["status"]
        jobs = [f"{name}-{s}" for s in STEPS]
        assert final["state"] == {"phase": "Succeed"}
        assert sorted(final["completedJobs"]) == sorted(jobs)
        assert {e["name"]: e["state"] for e in final["jobStatusList"]} == dict.fromkeys(jobs, "Completed")
        for entry in final["jobStatusList"]:
            histories = entry["runningHistories"]
            assert histories[-1]["state"] == "Completed" and histories[-1].get("startTimestamp")
            assert all(h.get("endTimestamp") for h in histories[:-1])
        # Written statuses only ever move forward: a paced write carries everything seen before it.
        seen: dict[str, int] = {}
        for status in writes[name]:
            for job, state in _states(status).items():
                assert state >= seen.get(job, 0), (name, job, writes[name])
                seen[job] = state

    # Without pacing, every JobFlow gets a write for about every Job phase a sync sees (up to 9
    # here, plus the first); with one token a second the intermediate ones share the bucket.
    total = sum(len(w) for w in writes.values())
    finals = FLOWS
    assert total <= finals + elapsed + 2, (total, elapsed)
