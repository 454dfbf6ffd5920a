"""The webhook Component turns the base deployment into one that serves the admission webhook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chart_render import kustomize_once

from jobflow_controller.local.kubectl import REPO_ROOT

MANIFESTS = REPO_ROOT / "manifests"


def _render(tmp_path: Path, *components: str) -> list[dict[str, Any]]:
    """`kubectl kustomize` of manifests/ with `components` (rendered once per process: kustomize_once)."""
    return kustomize_once(components)


def _deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "Deployment")


def test_the_webhook_component_adds_flags_port_and_certificate_to_the_deployment(tmp_path: Path) -> None:
    docs = _render(tmp_path, "webhook")
    container = _deployment(docs)["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][-4:] == [
        "--enable-webhook=true",
        "--webhook-address=:8443",
        "--webhook-tls-cert-file=/etc/jobflow-controller/webhook/tls.crt",
        "--webhook-tls-private-key-file=/etc/jobflow-controller/webhook/tls.key",
    ]
    assert {"name": "webhook", "containerPort": 8443, "protocol": "TCP"} in container["ports"]
    mount = next(m for m in container["volumeMounts"] if m["name"] == "webhook-tls")
    assert "subPath" not in mount and mount["readOnly"] is True
    kinds = sorted(d["kind"] for d in docs)
    assert "ValidatingWebhookConfiguration" in kinds
    service = next(d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "jobflow-controller-webhook")
    assert service["spec"]["ports"][0]["targetPort"] == "webhook"


def test_the_base_deployment_does_not_serve_the_webhook(tmp_path: Path) -> None:
    container = _deployment(_render(tmp_path))["spec"]["template"]["spec"]["containers"][0]
    assert not any(a.startswith("--enable-webhook") for a in container["args"])


def test_cert_manager_component_injects_the_ca(tmp_path: Path) -> None:
    docs = _render(tmp_path, "webhook", "webhook/cert-manager")
    vwc = next(d for d in docs if d["kind"] == "ValidatingWebhookConfiguration")
    assert (
        vwc["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
        == "volcano-system/jobflow-controller-webhook-ca"
    )
