"""Admission of JobFlowTemplates and of runs from one (docs/templates.md) by a real kube-apiserver and the
webhook, which reads a run's template with one GET (the session's control plane, CEL rules on).

The webhook is the manager's (`WebhookServer` started with `kube.template_getter`), registered for
JobFlows and JobFlowTemplates in one labelled namespace: a run's unknown param and a missing required
one are refused at CREATE, a run of a template that does not exist yet is admitted (it waits), and a
template that breaks a JobFlow rule is refused.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_e2e_admission import (
    VALIDATING_WEBHOOK_CONFIGURATIONS,
    WEBHOOK_NAME,
    Cluster,
    Registration,
    Webhook,
    webhook_configuration,
)

from informers.errors import NotFoundError
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ApiStatusError
from jobflow_controller.kube.template_getter import template_getter
from jobflow_controller.local.certs import TinyCA, write
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.webhook import WebhookServer


@pytest.fixture(scope="module")
def template_webhook(tmp_path_factory: pytest.TempPathFactory, clientset: Clientset) -> Iterator[Webhook]:
    directory = Path(tmp_path_factory.mktemp("webhook-tls"))
    ca = TinyCA("jobflow-e2e-template-webhook-ca")
    pair = ca.issue("jobflow-controller-webhook", server=True, ips=("127.0.0.1",))
    cert = write(directory / "tls.crt", pair.cert_pem)
    key = write(directory / "tls.key", pair.key_pem, private=True)
    server = WebhookServer(("127.0.0.1", 0), str(cert), str(key)).start(template_getter(clientset))
    try:
        yield Webhook(server, ca.cert_pem)
    finally:
        server.stop()


@pytest.fixture
def served_namespace(
    control_plane: ControlPlane, clientset: Clientset, namespace: str, template_webhook: Webhook
) -> Iterator[str]:
    selector = uuid.uuid4().hex[:12]
    config = webhook_configuration(f"jobflow-e2e-templates-{selector}", template_webhook, selector)
    config["webhooks"][0]["rules"][0]["resources"] = ["jobflows", "jobflowtemplates"]
    configurations = clientset.resource(VALIDATING_WEBHOOK_CONFIGURATIONS)
    configurations.create(config)
    try:
        Registration(Cluster(control_plane.kubeconfig_path, clientset), selector).enable_in(namespace)
        yield namespace
    finally:
        with contextlib.suppress(NotFoundError):
            configurations.delete(config["metadata"]["name"])


def template(namespace: str, flows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlowTemplate",
        "metadata": {"name": "etl", "namespace": namespace},
        "spec": {
            "params": [{"name": "dataset"}, {"name": "mode", "default": "full"}],
            "jobFlow": {"flows": flows if flows is not None else [{"name": "a"}]},
        },
    }


def run(namespace: str, template_name: str = "etl", **params: str) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "r", "namespace": namespace},
        "spec": {
            "jobFlowTemplateRef": {"name": template_name},
            "params": [{"name": k, "value": v} for k, v in params.items()],
        },
    }


def refusal(create: Any, obj: dict[str, Any]) -> str:
    with pytest.raises(ApiStatusError) as caught:
        create(obj, dry_run=True)
    return caught.value.message


def test_the_webhook_refuses_a_runs_unknown_and_missing_params(clientset: Clientset, served_namespace: str) -> None:
    ns = served_namespace
    clientset.job_flow_templates(ns).create(template(ns))
    create = clientset.job_flows(ns).create
    message = refusal(create, run(ns, dataset="d", typo="x"))
    assert (
        f'admission webhook "{WEBHOOK_NAME}" denied the request: param "typo" is not declared by JobFlowTemplate "etl"'
        in message
    )
    message = refusal(create, run(ns, mode="quick"))
    assert 'param "dataset" is required by JobFlowTemplate "etl" and has no value' in message
    assert create(run(ns, dataset="d"), dry_run=True)["spec"]["jobFlowTemplateRef"] == {"name": "etl"}
    assert create(run(ns, "not-yet", anything="x"), dry_run=True)  # a missing template: admitted, the run waits


def test_the_webhook_refuses_a_template_that_breaks_a_jobflow_rule(clientset: Clientset, served_namespace: str) -> None:
    ns = served_namespace
    # A cycle: no CEL rule sees it, the webhook does.
    cyclic = template(
        ns, [{"name": "a", "dependsOn": {"targets": ["b"]}}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    )
    message = refusal(clientset.job_flow_templates(ns).create, cyclic)
    assert "spec.jobFlow: jobflow Flow is not DAG" in message
