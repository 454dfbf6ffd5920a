"""A run deleted and re-created by someone else under the same name, on the real control plane (issue 42,
item 3; docs/cron.md, "Whose run it is").

The state the issue measured, built while no controller runs (as a controller running behind): each
CronJobFlow's `status.active` records its run by uid; the run is deleted and another user creates a
JobFlow of the same name (no owner). Each status also records the minute before last as its
`lastScheduleTime`, so the current minute is due (as for a controller that was down across it, as
CronJob counts): once the controller starts, `Replace` must not delete the foreign JobFlow, and
`Forbid` must not be blocked by it. Before the fix, Replace deleted it (the uid precondition was the
uid it had just read) and Forbid made no run. (No wait for a minute boundary: the due time is
already there.)
"""

from __future__ import annotations

import contextlib
import datetime
import time
from collections.abc import Iterator
from typing import Any

import pytest
from e2e_helpers import RunningManager, wait_for
from jobflows import template

from informers.errors import NotFoundError
from jobflow_controller.apis.cronjobflow import controller_reference, object_reference, time_hash_in_minutes
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.resources import NAMESPACES
from jobflow_controller.local.simulator import JobSimulator

LONG = "Pending:0.5s,Running:600s,Completed"
POLICIES = {"replace": "Replace", "forbid": "Forbid"}
#: A name a scheduled run of this minute could never have (minutes since the epoch, long past).
STALE_MINUTES = 29_000_000


def _cron_job_flow(name: str, namespace: str, policy: str) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "CronJobFlow",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedule": "* * * * *",
            "concurrencyPolicy": policy,
            "jobFlowTemplate": {"spec": {"jobRetainPolicy": "retain", "flows": [{"name": "step"}]}},
        },
    }


def _job_flow(name: str, namespace: str, owner: dict[str, Any] | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if owner is not None:
        metadata["ownerReferences"] = [controller_reference(owner)]
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": metadata,
        "spec": {"jobRetainPolicy": "retain", "flows": [{"name": "step"}]},
    }


def _minute(offset: int) -> datetime.datetime:
    """The start of the current minute, moved by `offset` minutes."""
    now = datetime.datetime.now(datetime.UTC).replace(second=0, microsecond=0)
    return now + datetime.timedelta(minutes=offset)


def _format(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _gone(clientset: Clientset, namespace: str, name: str) -> bool:
    try:
        clientset.job_flows(namespace).get(name)
    except NotFoundError:
        return True
    return False


def _events(clientset: Clientset, namespace: str, name: str) -> list[tuple[str, str]]:
    return [
        (e["reason"], e["message"])
        for e in clientset.events(namespace).list()
        if e["involvedObject"].get("kind") == "CronJobFlow" and e["involvedObject"].get("name") == name
    ]


@pytest.fixture
def stale(clientset: Clientset, kubeconfig: Any, simulator: JobSimulator) -> Iterator[tuple[str, dict[str, str]]]:
    """A namespace whose CronJobFlows record a run that someone else has since re-created: the
    foreign JobFlows' uids by CronJobFlow name."""
    namespace = f"e2e-cron-foreign-{int(time.time()) % 100000}"
    clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    try:
        clientset.job_templates(namespace).create(template("step", namespace, LONG))
        foreign: dict[str, str] = {}
        for name, policy in POLICIES.items():
            owner = clientset.cron_job_flows(namespace).create(_cron_job_flow(name, namespace, policy))
            run_name = f"{name}-{STALE_MINUTES}"
            ours = clientset.job_flows(namespace).create(_job_flow(run_name, namespace, owner))
            status = {"active": [object_reference(ours)], "lastScheduleTime": _format(_minute(-1))}
            clientset.cron_job_flows(namespace).update_status({**owner, "status": status})
            clientset.job_flows(namespace).delete(run_name, propagation_policy="Background")
            wait_for(lambda n=run_name: _gone(clientset, namespace, n), 30, what=f"{run_name} to go")
            other = clientset.job_flows(namespace).create(_job_flow(run_name, namespace, None))
            foreign[name] = other["metadata"]["uid"]
        yield namespace, foreign
    finally:
        with contextlib.suppress(NotFoundError):
            clientset.resource(NAMESPACES).delete(namespace)


def test_replace_and_forbid_leave_a_foreign_jobflow_of_the_runs_name_alone(
    stale: tuple[str, dict[str, str]], clientset: Clientset, kubeconfig: Any
) -> None:
    namespace, foreign = stale
    manager = RunningManager(str(kubeconfig), worker_threads=2)
    try:
        # The run of the minute due at the start (or of the next, if one begins before the sync).
        due = [time_hash_in_minutes(_minute(k)) for k in (0, 1)]
        for name in POLICIES:
            scheduled = [f"{name}-{minutes}" for minutes in due]
            wait_for(
                lambda s=scheduled: any(not _gone(clientset, namespace, n) for n in s),
                30,
                what=f"{scheduled}, not blocked",
            )
        for name, uid in foreign.items():
            stale_name = f"{name}-{STALE_MINUTES}"
            assert clientset.job_flows(namespace).get(stale_name)["metadata"]["uid"] == uid  # never deleted
            events = _events(clientset, namespace, name)
            assert ("MissingJob", f"Active jobflow went missing: {stale_name}") in events
            assert ("SuccessfulDelete", f"Deleted jobflow {stale_name}") not in events
            active = clientset.cron_job_flows(namespace).get(name)["status"].get("active") or []
            assert uid not in [r.get("uid") for r in active]
    finally:
        manager.stop()
