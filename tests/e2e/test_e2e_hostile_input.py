"""Hostile tenant input against the real control plane (issue 33 items 2 and 6, docs/hostile-input.md).

* A JobFlow whose `flow.volcano.sh/retry-request` and `flow.volcano.sh/retry` annotations hold
  5,000 `[`, touched ten times a second, under the real `jobflow-controller` command: one Warning per
  cause, a few log lines, no traceback, and the bystander JobFlows Succeed as usual.
* What the CRD and its CEL Component (the session's control plane installs both) now refuse without
  any webhook: `retry.maxRetries` past 100, a `finally` name that is not a DNS-1123 subdomain.
* The retain policy's delete of a Job the cache holds stale: the real API server refuses the uid
  precondition (409) and the Job re-created under the name stays.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import ControllerProcess, wait_for
from jobflows import chain, create_all, events_of, flow, phase_of, template

from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION
from jobflow_controller.apis.retry import RETRY_ANNOTATION
from jobflow_controller.jobflow import JobFlowController
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ApiStatusError
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.local.simulator import JobSimulator
from jobflow_controller.record import FakeRecorder

HOSTILE = "[" * 5000
BYSTANDERS = 5


@pytest.fixture
def controller(kubeconfig: Path, tmp_path: Path) -> Iterator[ControllerProcess]:
    proc = ControllerProcess(str(kubeconfig), tmp_path, "--leader-elect=false")
    try:
        wait_for(lambda: proc.get("/readyz")[0] == 200, 60, what="/readyz")
        yield proc
    finally:
        proc.stop()


def _hostile(namespace: str) -> dict[str, Any]:
    doc = flow("hostile", namespace, chain("a"))
    doc["metadata"]["annotations"] = {RETRY_REQUEST_ANNOTATION: HOSTILE, RETRY_ANNOTATION: HOSTILE}
    return doc


def test_5000_brackets_in_the_annotations_touched_ten_times_a_second_give_one_warning_each_and_spare_the_rest(
    controller: ControllerProcess, simulator: JobSimulator, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [template("a", namespace), template("b", namespace), _hostile(namespace)])
    jobflows = clientset.job_flows(namespace)
    for i in range(40):  # ten touches a second for four seconds
        jobflows.patch("hostile", {"metadata": {"annotations": {"touched": str(i)}}})
        if i == 10:
            create_all(clientset, [flow(f"bystander-{n}", namespace, chain("a", "b")) for n in range(BYSTANDERS)])
        time.sleep(0.1)
    for n in range(BYSTANDERS):
        wait_for(lambda n=n: phase_of(clientset, namespace, f"bystander-{n}") == "Succeed", 60, what=f"bystander-{n}")
    wait_for(lambda: phase_of(clientset, namespace, "hostile") == "Succeed", 60, what="the hostile JobFlow's flows")

    warnings = [e for e in events_of(clientset, namespace, "hostile") if e[0] == "Warning"]
    assert sorted(warnings) == [
        (
            "Warning",
            "InvalidRetryPolicy",
            "No retries for these flows: annotation flow.volcano.sh/retry: not valid JSON: nested deeper than 8 levels",
            1,
        ),
        (
            "Warning",
            "InvalidRetryRequest",
            "Re-run request ignored: annotation flow.volcano.sh/retry-request: not valid JSON: "
            "nested deeper than 8 levels",
            1,
        ),
    ]
    log = controller.log()
    assert "Traceback" not in log
    assert "RecursionError" not in log
    about_it = [line for line in log.splitlines() if f"{namespace}/hostile" in line]
    # One line per cause (the event's own "Event occurred"), whatever the number of touches.
    assert len([line for line in about_it if "InvalidRetry" in line]) == 2, about_it
    assert len(about_it) <= 10, about_it


# -- what the CRD refuses without the webhook -------------------------------------------------------------


def _refusal(clientset: Clientset, doc: dict[str, Any]) -> str:
    with pytest.raises(ApiStatusError) as refused:
        clientset.job_flows(doc["metadata"]["namespace"]).create(doc, dry_run=True)
    return refused.value.message


def test_the_crd_refuses_max_retries_past_100_and_takes_100(clientset: Clientset, namespace: str) -> None:
    doc = flow("retries", namespace, [{"name": "a", "retry": {"maxRetries": 1_000_000}}])
    assert _refusal(clientset, doc) == (
        'JobFlow.flow.volcano.sh "retries" is invalid: spec.flows[0].retry.maxRetries: Invalid value: 1000000: '
        "spec.flows[0].retry.maxRetries in body should be less than or equal to 100"
    )
    doc["spec"]["flows"][0]["retry"]["maxRetries"] = 100
    assert clientset.job_flows(namespace).create(doc, dry_run=True)["metadata"]["name"] == "retries"


@pytest.mark.parametrize("name", ["Notify", "-notify", "notify-", "no_tify", "a..b", "notify."])
def test_the_cel_component_refuses_a_finally_name_the_webhook_refuses(
    clientset: Clientset, namespace: str, name: str
) -> None:
    doc = flow("bad-finally", namespace, [{"name": "a"}])
    doc["spec"]["finally"] = [{"name": "cleanup"}, {"name": name}]
    assert _refusal(clientset, doc) == (
        f'JobFlow.flow.volcano.sh "bad-finally" is invalid: spec.finally[1].name: Invalid value: "{name}": '
        "jobflow Finally name must be a lowercase RFC 1123 subdomain: lowercase letters, digits, '-' and '.',"
        " with every '.'-separated part starting and ending with a letter or digit"
    )


def test_the_cel_component_takes_a_finally_name_that_is_a_subdomain(clientset: Clientset, namespace: str) -> None:
    doc = flow("good-finally", namespace, [{"name": "a"}])
    doc["spec"]["finally"] = [{"name": "notify"}, {"name": "clean.up-2"}]
    assert clientset.job_flows(namespace).create(doc, dry_run=True)["metadata"]["name"] == "good-finally"


# -- deletes by uid -------------------------------------------------------------------------------------


def test_the_retain_delete_of_a_stale_cached_job_spares_the_job_recreated_under_its_name(
    clientset: Clientset, namespace: str
) -> None:
    """The real API server's answer to a uid precondition that fails (409) is "already gone"."""
    jobs = clientset.jobs(namespace)
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "f-a"}, "spec": {}}
    ours = jobs.create({**job, "metadata": {"name": "f-a", "namespace": namespace}})
    jobs.delete("f-a")
    wait_for(lambda: "f-a" not in [j["metadata"]["name"] for j in jobs.list()], 30, what="f-a gone")
    foreign = jobs.create({**job, "metadata": {"name": "f-a", "namespace": namespace}})
    assert foreign["metadata"]["uid"] != ours["metadata"]["uid"]

    controller = JobFlowController(clientset, VolcanoInformerFactory(clientset), FakeRecorder())
    succeeded = flow("f", namespace, chain("a"), retain="delete")
    controller.sync.delete_all_jobs_created_by_job_flow(succeeded, [ours])  # the cache's stale copy: no error
    assert jobs.get("f-a")["metadata"]["uid"] == foreign["metadata"]["uid"]
    controller.sync.delete_all_jobs_created_by_job_flow(succeeded, [foreign])
    wait_for(lambda: "f-a" not in [j["metadata"]["name"] for j in jobs.list()], 30, what="the foreign f-a gone")
