"""What keeps the controller running through drains and crowded nodes, and who may reach its ports:
the PodDisruptionBudget and the PriorityClass in the base, the NetworkPolicy Component of the webhook.

(Every one of them also passes kubernetes-validate strict in test_manifests_deploy.py, which checks
every manifest under manifests/.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import chart_render
import yaml
from chart_render import kustomize_once

from jobflow_controller.local.kubectl import REPO_ROOT, kubectl_path

MANIFESTS = REPO_ROOT / "manifests"
CONTROLLER_LABELS = {"app.kubernetes.io/name": "jobflow-controller", "app.kubernetes.io/component": "controller"}
DOCUMENTATION_RANGE = "192.0.2.0/24"


def render(tmp_path: Path, *components: str) -> list[dict[str, Any]]:
    """`kubectl kustomize` of manifests/ with `components` (rendered once per process: kustomize_once)."""
    return kustomize_once(components)


def one(documents: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [d for d in documents if d["kind"] == kind]
    return found


def pod_spec(documents: list[dict[str, Any]], kind: str = "Deployment") -> dict[str, Any]:
    spec: dict[str, Any] = one(documents, kind)["spec"]["template"]["spec"]
    return spec


# --- PodDisruptionBudget ---------------------------------------------------------------------------


def test_pdb_lets_one_pod_go_at_a_time_and_never_blocks_a_drain(tmp_path: Path) -> None:
    pdb = one(render(tmp_path), "PodDisruptionBudget")
    assert pdb["spec"]["maxUnavailable"] == 1
    assert "minAvailable" not in pdb["spec"]  # scaled to one replica, minAvailable: 1 would block drains
    assert pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"


def test_pdb_selects_the_controller_pods_of_the_deployment_and_of_the_sharded_statefulset(tmp_path: Path) -> None:
    pdb = one(render(tmp_path), "PodDisruptionBudget")
    assert pdb["spec"]["selector"] == {"matchLabels": CONTROLLER_LABELS}
    for documents, kind in ((render(tmp_path), "Deployment"), (render(tmp_path, "sharding"), "StatefulSet")):
        labels = one(documents, kind)["spec"]["template"]["metadata"]["labels"]
        assert CONTROLLER_LABELS.items() <= labels.items()


# --- PriorityClass ---------------------------------------------------------------------------------


def test_priority_class_ranks_above_workloads_and_below_the_system_classes(tmp_path: Path) -> None:
    priority_class = one(render(tmp_path), "PriorityClass")
    assert 0 < priority_class["value"] < 1_000_000_000  # the user-definable maximum
    assert priority_class["globalDefault"] is False
    assert "namespace" not in priority_class["metadata"]


def test_controller_pods_use_the_shipped_priority_class(tmp_path: Path) -> None:
    name = one(render(tmp_path), "PriorityClass")["metadata"]["name"]
    assert pod_spec(render(tmp_path))["priorityClassName"] == name
    assert pod_spec(render(tmp_path, "sharding"), "StatefulSet")["priorityClassName"] == name


# --- NetworkPolicy ---------------------------------------------------------------------------------


def test_network_policy_is_not_in_the_base_nor_in_the_webhook_component(tmp_path: Path) -> None:
    assert not [d for d in render(tmp_path, "webhook") if d["kind"] == "NetworkPolicy"]


def test_network_policy_selects_the_controller_pods_for_ingress(tmp_path: Path) -> None:
    policy = one(render(tmp_path, "webhook", "webhook/networkpolicy"), "NetworkPolicy")
    assert policy["metadata"]["namespace"] == "volcano-system"
    assert policy["spec"]["podSelector"] == {"matchLabels": CONTROLLER_LABELS}
    assert policy["spec"]["policyTypes"] == ["Ingress"]


def test_network_policy_admits_only_the_ip_block_to_fill_in_to_the_webhook_port(tmp_path: Path) -> None:
    policy = one(render(tmp_path, "webhook", "webhook/networkpolicy"), "NetworkPolicy")
    webhook_rule, monitoring_rule = policy["spec"]["ingress"]
    assert webhook_rule == {
        "from": [{"ipBlock": {"cidr": DOCUMENTATION_RANGE}}],
        "ports": [{"port": "webhook", "protocol": "TCP"}],
    }
    assert monitoring_rule == {
        "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
        "ports": [{"port": "metrics", "protocol": "TCP"}, {"port": "healthz", "protocol": "TCP"}],
    }


def test_network_policy_ports_name_ports_of_the_container(tmp_path: Path) -> None:
    documents = render(tmp_path, "webhook", "webhook/networkpolicy")
    container_ports = {p["name"] for p in pod_spec(documents)["containers"][0]["ports"]}
    policy_ports = {p["port"] for rule in one(documents, "NetworkPolicy")["spec"]["ingress"] for p in rule["ports"]}
    assert policy_ports == container_ports == {"webhook", "metrics", "healthz"}


def test_the_ip_block_is_replaced_by_the_patch_the_kustomization_documents(tmp_path: Path) -> None:
    rel = os.path.relpath(MANIFESTS, tmp_path)
    patch = "- op: replace\n  path: /spec/ingress/0/from/0/ipBlock/cidr\n  value: 10.0.0.0/28\n"
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "resources": [rel],
                "components": [f"{rel}/webhook", f"{rel}/webhook/networkpolicy"],
                "patches": [{"target": {"kind": "NetworkPolicy", "name": "jobflow-controller"}, "patch": patch}],
            }
        )
    )
    out = subprocess.run([kubectl_path(), "kustomize", str(tmp_path)], capture_output=True, text=True, check=True)
    policy = one(chart_render.documents(out.stdout), "NetworkPolicy")
    assert policy["spec"]["ingress"][0]["from"] == [{"ipBlock": {"cidr": "10.0.0.0/28"}}]
    assert "patches:" in (MANIFESTS / "webhook" / "networkpolicy" / "kustomization.yaml").read_text()
