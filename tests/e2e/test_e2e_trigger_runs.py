"""JobFlowTriggers starting runs that go to the end (docs/triggers.md, docs/templates.md), on the real
control plane: a manager running every controller (the JobFlow, JobTemplate and trigger controllers)
and the Volcano job simulator, so a triggered run is planned from its template and reaches Succeed.

An authorised POST binds `dataset` from the body and a ConfigMap's update binds it from
`object.data`; each run's Job carries the bound value. A trigger binding a param the template does
not declare, with the template webhook registered or without it: the trigger checks the bound params
against the template before creating the run, so the caller gets 400 naming the param, the trigger a
Warning `TriggerFailed`, and no run is made; under `Forbid` nothing is left active, so once the
trigger's binding is fixed the next POST gets 202 (issue 46: the run used to be created, refused by
the JobFlow controller, and kept Pending and active, so every later POST got 409).
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import RunningManager, wait_for
from jobflows import phase_of, template
from test_e2e_admission_templates import served_namespace, template_webhook  # noqa: F401 - fixtures
from test_e2e_triggers import CONFIG_MAPS, post, runs_of, service_account_token, wait_served

from jobflow_controller.jobflowtrigger import JobFlowTriggerController
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.certs import TinyCA, write
from jobflow_controller.local.processes import free_port
from jobflow_controller.local.simulator import JobSimulator

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def endpoint(
    kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory, simulator: JobSimulator
) -> Iterator[tuple[int, Any, JobFlowTriggerController]]:
    """A manager running all the controllers, the trigger endpoint on TLS, ConfigMaps watchable."""
    ca = TinyCA()
    pair = ca.issue("trigger", server=True, ips=("127.0.0.1",))
    root = tmp_path_factory.mktemp("trigger-runs-tls")
    cert, key = write(root / "tls.crt", pair.cert_pem), write(root / "tls.key", pair.key_pem, private=True)
    port = free_port()
    running = RunningManager(
        str(kubeconfig),
        worker_threads=2,
        trigger_address=f"127.0.0.1:{port}",
        trigger_tls_cert_file=str(cert),
        trigger_tls_private_key_file=str(key),
        trigger_watch_kinds=["v1/ConfigMap"],
    )
    context = ssl.create_default_context(cadata=ca.cert_pem.decode())
    controller = next(c for c in running.manager.controllers if isinstance(c, JobFlowTriggerController))
    wait_for(lambda: controller.server is not None, timeout=60, what="the trigger endpoint")
    yield port, context, controller
    running.stop()


def etl(clientset: Clientset, namespace: str) -> None:
    """JobTemplate `prep` reading `$(params.dataset)` in its env; JobFlowTemplate `etl` running it,
    `dataset` required (no default)."""
    job = template("prep", namespace)
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "DATASET", "value": "$(params.dataset)"}
    ]
    clientset.job_templates(namespace).create(job)
    clientset.job_flow_templates(namespace).create(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlowTemplate",
            "metadata": {"name": "etl", "namespace": namespace},
            "spec": {"params": [{"name": "dataset"}], "jobFlow": {"flows": [{"name": "prep"}]}},
        }
    )


def trigger(name: str, namespace: str, params: list[dict[str, str]], **source: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlowTrigger",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"jobFlowTemplateRef": {"name": "etl"}, "params": params, **(source or {"http": {}})},
    }


def succeeded(clientset: Clientset, namespace: str, run: str) -> str:
    wait_for(lambda: phase_of(clientset, namespace, run) in ("Succeed", "Failed"), 90, what=f"{run} final")
    return phase_of(clientset, namespace, run)


def dataset_of(clientset: Clientset, namespace: str, job: str) -> str:
    env = clientset.jobs(namespace).get(job)["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"]
    return str(next(e["value"] for e in env if e["name"] == "DATASET"))


def trigger_failed(clientset: Clientset, namespace: str, name: str) -> list[dict[str, Any]]:
    return [
        e
        for e in clientset.events(namespace).list()
        if e["reason"] == "TriggerFailed" and e["involvedObject"].get("name") == name
    ]


def test_a_post_starts_a_run_that_succeeds_with_the_bound_value(
    endpoint: Any, clientset: Clientset, namespace: str
) -> None:
    etl(clientset, namespace)
    token = service_account_token(clientset, namespace, "caller", may_create=True)
    clientset.job_flow_triggers(namespace).create(
        trigger("etl-http", namespace, [{"name": "dataset", "cel": "body.dataset"}])
    )
    wait_served(endpoint, namespace, "etl-http")

    code, body = post(endpoint, f"/triggers/{namespace}/etl-http", b'{"dataset": "daily"}', token)

    assert code == 202, body
    run = body["jobFlow"]
    assert succeeded(clientset, namespace, run) == "Succeed"
    assert dataset_of(clientset, namespace, f"{run}-prep") == "daily"
    wait_for(
        lambda: clientset.job_flow_triggers(namespace).get("etl-http")["status"].get("active") in (None, []),
        30,
        what="the finished run dropped from status.active",
    )


def test_a_configmap_update_starts_a_run_that_succeeds_with_a_value_from_its_data(
    endpoint: Any, clientset: Clientset, namespace: str
) -> None:
    etl(clientset, namespace)
    config_maps = clientset.resource(CONFIG_MAPS, namespace)
    labels = {"dataset": "daily"}
    config_maps.create({"metadata": {"name": "input", "labels": labels}, "data": {"dataset": "v0"}})
    resource = {"apiVersion": "v1", "kind": "ConfigMap", "labelSelector": {"matchLabels": labels}, "events": ["update"]}
    clientset.job_flow_triggers(namespace).create(
        trigger("etl-cm", namespace, [{"name": "dataset", "cel": "object.data.dataset"}], resource=resource)
    )
    controller = endpoint[2]
    wait_served(endpoint, namespace, "etl-cm")
    wait_for(lambda: controller.watches.has_synced("v1/ConfigMap"), timeout=30, what="the ConfigMap watch")

    config_maps.update({**config_maps.get("input"), "data": {"dataset": "2026-12-06"}})

    (run,) = wait_for(lambda: runs_of(clientset, namespace, "etl-cm"), what="the run of the update")
    name = run["metadata"]["name"]
    assert succeeded(clientset, namespace, name) == "Succeed"
    assert dataset_of(clientset, namespace, f"{name}-prep") == "2026-12-06"
    assert len(runs_of(clientset, namespace, "etl-cm")) == 1


def test_a_param_the_template_does_not_declare_is_refused_with_400_when_the_webhook_runs(
    endpoint: Any,
    clientset: Clientset,
    served_namespace: str,  # noqa: F811 - the fixture imported above
) -> None:
    ns = served_namespace
    etl(clientset, ns)
    token = service_account_token(clientset, ns, "caller", may_create=True)
    params = [{"name": "dataset", "cel": "body.dataset"}, {"name": "typo", "value": "x"}]
    clientset.job_flow_triggers(ns).create(trigger("etl-typo", ns, params))
    wait_served(endpoint, ns, "etl-typo")

    code, body = post(endpoint, f"/triggers/{ns}/etl-typo", b'{"dataset": "daily"}', token)

    assert code == 400, body
    cause = 'param "typo" is not declared by JobFlowTemplate "etl"'
    assert body["message"].startswith("the bound params do not fit the template: ") and cause in body["message"]
    (event,) = wait_for(lambda: trigger_failed(clientset, ns, "etl-typo"), what="TriggerFailed naming the cause")
    assert event["type"] == "Warning" and cause in event["message"]
    assert runs_of(clientset, ns, "etl-typo") == []
    assert not clientset.job_flow_triggers(ns).get("etl-typo").get("status", {}).get("triggeredCount")


def test_without_the_webhook_such_a_param_is_refused_with_400_and_forbid_does_not_block_itself(
    endpoint: Any, clientset: Clientset, namespace: str
) -> None:
    etl(clientset, namespace)
    token = service_account_token(clientset, namespace, "caller", may_create=True)
    params = [{"name": "dataset", "cel": "body.dataset"}, {"name": "typo", "value": "x"}]
    typo = trigger("etl-typo", namespace, params)
    typo["spec"]["concurrencyPolicy"] = "Forbid"
    triggers = clientset.job_flow_triggers(namespace)
    triggers.create(typo)
    wait_served(endpoint, namespace, "etl-typo")

    code, body = post(endpoint, f"/triggers/{namespace}/etl-typo", b'{"dataset": "daily"}', token)

    assert code == 400, body
    cause = 'param "typo" is not declared by JobFlowTemplate "etl"'
    assert cause in body["message"]
    (event,) = wait_for(lambda: trigger_failed(clientset, namespace, "etl-typo"), what="TriggerFailed naming it")
    assert event["type"] == "Warning" and cause in event["message"]
    assert runs_of(clientset, namespace, "etl-typo") == []
    assert not triggers.get("etl-typo").get("status", {}).get("active")

    # The binding fixed: nothing was left active, so Forbid lets the next POST through.
    triggers.update({**triggers.get("etl-typo"), "spec": {**typo["spec"], "params": params[:1]}})
    lister = endpoint[2].trigger_lister.job_flow_triggers(namespace)
    wait_for(lambda: len(lister.get("etl-typo")["spec"]["params"]) == 1, 30, what="the fixed trigger cached")
    code, body = post(endpoint, f"/triggers/{namespace}/etl-typo", b'{"dataset": "daily"}', token)
    assert code == 202, body
    assert [r["metadata"]["name"] for r in runs_of(clientset, namespace, "etl-typo")] == [body["jobFlow"]]
    assert succeeded(clientset, namespace, body["jobFlow"]) == "Succeed"
