"""manifests/webhook/: the registration of the webhook with the API server, and its Service."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from jobflow_controller.local.kubectl import REPO_ROOT, kubectl_path
from jobflow_controller.webhook import VALIDATE_PATH

WEBHOOK_DIR = REPO_ROOT / "manifests" / "webhook"


def kustomize(directory: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [kubectl_path(), "kustomize", str(directory)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def by_kind(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {doc["kind"]: doc for doc in documents}


@pytest.fixture(scope="module")
def documents() -> list[dict[str, Any]]:
    return kustomize(WEBHOOK_DIR)


@pytest.fixture(scope="module")
def webhook(documents: list[dict[str, Any]]) -> dict[str, Any]:
    configuration = by_kind(documents)["ValidatingWebhookConfiguration"]
    jobflows, _cronjobflows, _templates = configuration["webhooks"]
    result: dict[str, Any] = jobflows
    return result


@pytest.fixture(scope="module")
def cron_webhook(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """The CronJobFlow webhook (docs/cron.md), the second of the configuration."""
    _jobflows, cronjobflows, _templates = by_kind(documents)["ValidatingWebhookConfiguration"]["webhooks"]
    result: dict[str, Any] = cronjobflows
    return result


def test_cronjobflows_are_admitted_on_the_same_service_and_path_as_jobflows(
    webhook: dict[str, Any], cron_webhook: dict[str, Any]
) -> None:
    assert cron_webhook["name"] == "validatecronjobflow.volcano.sh"
    assert cron_webhook["clientConfig"] == webhook["clientConfig"]
    assert cron_webhook["rules"] == [{**webhook["rules"][0], "resources": ["cronjobflows", "jobflowtriggers"]}]
    for key in ("failurePolicy", "matchPolicy", "sideEffects", "timeoutSeconds", "admissionReviewVersions"):
        assert cron_webhook[key] == webhook[key], key


def test_kustomization_holds_the_service_and_the_registration(documents: list[dict[str, Any]]) -> None:
    assert sorted(doc["kind"] for doc in documents) == ["Service", "ValidatingWebhookConfiguration"]


def test_every_document_passes_kubernetes_validate_strict_for_1_37(documents: list[dict[str, Any]]) -> None:
    for doc in documents:
        assert kubernetes_validate.validate(doc, "1.37", strict=True) == "1.37"


def test_registration_is_named_apart_from_volcanos(documents: list[dict[str, Any]]) -> None:
    configuration = by_kind(documents)["ValidatingWebhookConfiguration"]
    assert configuration["metadata"]["name"] == "jobflow-controller-validate-jobflows"


def test_webhook_has_upstreams_registration_name(webhook: dict[str, Any]) -> None:
    assert webhook["name"] == "validatejobflow.volcano.sh"


def test_webhook_matches_create_and_update_of_jobflows_only(webhook: dict[str, Any]) -> None:
    assert webhook["rules"] == [
        {
            "operations": ["CREATE", "UPDATE"],
            "apiGroups": ["flow.volcano.sh"],
            "apiVersions": ["v1alpha1"],
            "resources": ["jobflows"],
            "scope": "Namespaced",
        }
    ]


def test_webhook_fails_closed_within_ten_seconds(webhook: dict[str, Any]) -> None:
    assert webhook["failurePolicy"] == "Fail"
    assert webhook["timeoutSeconds"] == 10
    assert webhook["matchPolicy"] == "Equivalent"


def test_webhook_declares_no_side_effects_and_v1_reviews(webhook: dict[str, Any]) -> None:
    assert webhook["sideEffects"] == "None"
    assert webhook["admissionReviewVersions"] == ["v1"]


def test_webhook_calls_the_service_on_the_servers_path(webhook: dict[str, Any]) -> None:
    assert webhook["clientConfig"] == {
        "service": {
            "name": "jobflow-controller-webhook",
            "namespace": "volcano-system",
            "port": 443,
            "path": VALIDATE_PATH,
        }
    }


def test_ca_bundle_is_left_to_deploy_time(webhook: dict[str, Any]) -> None:
    assert "caBundle" not in webhook["clientConfig"]


def test_service_is_the_one_the_registration_calls(documents: list[dict[str, Any]]) -> None:
    metadata = by_kind(documents)["Service"]["metadata"]
    assert (metadata["name"], metadata["namespace"]) == ("jobflow-controller-webhook", "volcano-system")


def test_service_forwards_443_to_the_named_webhook_port(documents: list[dict[str, Any]]) -> None:
    port = {"name": "https-webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}
    assert by_kind(documents)["Service"]["spec"]["ports"] == [port]


def test_service_selects_the_controllers_pods() -> None:
    service = by_kind(kustomize(WEBHOOK_DIR))["Service"]
    deployment = yaml.safe_load((REPO_ROOT / "manifests" / "deployment.yaml").read_text())
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()


@pytest.fixture(scope="module")
def with_cert_manager(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The overlay's objects by kind, and the cert-manager ones by `Kind/name`."""
    overlay = Path(tmp_path_factory.mktemp("overlay"))
    base = os.path.relpath(WEBHOOK_DIR, overlay)  # kustomize accepts only relative paths
    manifests = os.path.relpath(WEBHOOK_DIR.parent, overlay)
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump({"resources": [manifests], "components": [base, f"{base}/cert-manager"]})
    )
    docs = kustomize(overlay)
    named = {f"{d['kind']}/{d['metadata']['name']}": d for d in docs if d["apiVersion"].startswith("cert-manager.io/")}
    return {**by_kind(docs), **named}


def test_cert_manager_component_injects_the_ca_not_the_leaf(with_cert_manager: dict[str, dict[str, Any]]) -> None:
    """The caBundle is the CA's: a leaf renewed with a new key is trusted before the injector runs."""
    annotations = with_cert_manager["ValidatingWebhookConfiguration"]["metadata"]["annotations"]
    assert annotations == {"cert-manager.io/inject-ca-from": "volcano-system/jobflow-controller-webhook-ca"}
    ca = with_cert_manager["Certificate/jobflow-controller-webhook-ca"]["spec"]
    assert ca["isCA"] is True
    assert ca["privateKey"]["rotationPolicy"] == "Never"  # leaves it signed stay valid when it renews


def test_cert_manager_issues_the_leaf_from_a_ca_issuer_made_by_a_self_signed_one(
    with_cert_manager: dict[str, dict[str, Any]],
) -> None:
    selfsigned = with_cert_manager["Issuer/jobflow-controller-webhook-selfsigned"]["spec"]
    ca = with_cert_manager["Certificate/jobflow-controller-webhook-ca"]["spec"]
    ca_issuer = with_cert_manager["Issuer/jobflow-controller-webhook-ca"]["spec"]
    leaf = with_cert_manager["Certificate/jobflow-controller-webhook"]["spec"]
    assert selfsigned == {"selfSigned": {}}
    assert ca["issuerRef"] == {"kind": "Issuer", "name": "jobflow-controller-webhook-selfsigned"}
    assert ca_issuer == {"ca": {"secretName": ca["secretName"]}}
    assert leaf["issuerRef"] == {"kind": "Issuer", "name": "jobflow-controller-webhook-ca"}
    assert leaf["privateKey"]["rotationPolicy"] == "Always"


def test_cert_manager_certificate_covers_the_name_the_api_server_calls(
    with_cert_manager: dict[str, dict[str, Any]],
) -> None:
    certificate = with_cert_manager["Certificate/jobflow-controller-webhook"]
    assert certificate["metadata"] == {"name": "jobflow-controller-webhook", "namespace": "volcano-system"}
    assert "jobflow-controller-webhook.volcano-system.svc" in certificate["spec"]["dnsNames"]
    assert certificate["spec"]["secretName"] == "jobflow-controller-webhook-tls"


def test_jobflowtemplates_are_admitted_on_the_same_service_and_path_as_jobflows(
    documents: list[dict[str, Any]], webhook: dict[str, Any]
) -> None:
    # docs/templates.md: the params' declarations and every JobFlow rule on spec.jobFlow.
    *_, templates = by_kind(documents)["ValidatingWebhookConfiguration"]["webhooks"]
    assert templates["name"] == "validatejobflowtemplate.volcano.sh"
    assert templates["clientConfig"] == webhook["clientConfig"]
    assert templates["rules"] == [{**webhook["rules"][0], "resources": ["jobflowtemplates"]}]
