"""Fairness to bystanders on a real control plane (docs/fairness.md, issue 42 item 9).

Three JobFlows of one tenant with a backlog of Job creates hold all three workers and the client's
tokens (a low `--kube-api-qps`, so the backlog lasts); another tenant's JobFlow created meanwhile
gets its first Job after a bounded number of the busy tenant's creates, derived from the mechanism
(each busy worker gives way after its slice, the new tenant's sync and its create request take the
next turns), not after the backlog. Order is read from the Jobs' resourceVersions, which a real etcd
assigns from one revision counter: a Job with a lower one was created first. No simulator: Jobs
stay as created, so each Job's first resourceVersion is its creation's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_helpers import EventLog, RunningManager, wait_for
from jobflows import flow, template

from jobflow_controller.jobflow.fairness import CREATE_SLICE_SECONDS
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.resources import NAMESPACES

QPS = 10.0
WORKERS = 3
BUSY_JOBFLOWS = 3
BUSY_FLOWS = 40
#: Busy creates that may come between the bystander's JobFlow and its first Job: each worker's
#: slice (the creates its tokens allow in CREATE_SLICE_SECONDS, and the one under way), then one
#: turn of the tokens for each worker still in a busy sync.
BOUND = WORKERS * (math.ceil(CREATE_SLICE_SECONDS * QPS) + 1) + WORKERS


@pytest.fixture(scope="module")
def controller(kubeconfig: Path) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=WORKERS, kube_api_qps=QPS, kube_api_burst=int(QPS))
    yield running
    running.stop()


@pytest.fixture
def bystander_namespace(clientset: Clientset, namespace: str) -> Iterator[str]:
    name = f"{namespace}-b"
    clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    clientset.resource(NAMESPACES).delete(name)


def test_a_new_tenants_first_job_is_created_beside_another_tenants_backlog_not_after_it(
    controller: RunningManager, clientset: Clientset, namespace: str, bystander_namespace: str
) -> None:
    names = [f"f{i:02d}" for i in range(BUSY_FLOWS)]
    for name in names:
        clientset.job_templates(namespace).create(template(name, namespace))
    clientset.job_templates(bystander_namespace).create(template("a", bystander_namespace))
    jobs = EventLog(clientset.jobs().lister_watcher())
    try:
        for i in range(BUSY_JOBFLOWS):
            clientset.job_flows(namespace).create(flow(f"busy-{i}", namespace, [{"name": n} for n in names]))

        def busy_jobs() -> list[int]:
            return [
                int(o["metadata"]["resourceVersion"])
                for k, o in jobs.snapshot()
                if k == "ADDED" and o["metadata"]["namespace"] == namespace
            ]

        wait_for(lambda: len(busy_jobs()) >= 2 * WORKERS, 60, what="the busy tenant's backlog to start")
        created = clientset.job_flows(bystander_namespace).create(
            flow("bystander", bystander_namespace, [{"name": "a"}])
        )
        asked = int(created["metadata"]["resourceVersion"])

        def first_job() -> int | None:
            found = [
                int(o["metadata"]["resourceVersion"])
                for k, o in jobs.snapshot()
                if k == "ADDED" and o["metadata"]["namespace"] == bystander_namespace
            ]
            return found[0] if found else None

        wait_for(lambda: first_job() is not None, 60, what="the bystander's first Job")
        wait_for(lambda: len(busy_jobs()) == BUSY_JOBFLOWS * BUSY_FLOWS, 120, what="the busy tenant's backlog")
    finally:
        jobs.close()
    made = first_job()
    assert made is not None
    pending = [rv for rv in busy_jobs() if rv > asked]
    between = [rv for rv in pending if rv < made]
    assert len(pending) >= BUSY_JOBFLOWS * BUSY_FLOWS // 2, "a backlog was pending when the bystander came"
    assert len(between) <= BOUND, f"{len(between)} of the busy tenant's Jobs were created first (bound {BOUND})"
