"""The chart's values: the controller's flags as values, Helm users' pod values, and
values.schema.json refusing an unknown key or a wrong type with a message naming it."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
import yaml
from chart_render import CHART, helm, helm_template, value_args

from jobflow_controller.local.kubectl import REPO_ROOT

CI = CHART / "ci"


def controller(docs: list[dict[str, Any]], kind: str = "Deployment") -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind)


def container(values: dict[str, Any], kind: str = "Deployment") -> dict[str, Any]:
    return controller(helm_template(values), kind)["spec"]["template"]["spec"]["containers"][0]


def args(values: dict[str, Any]) -> list[str]:
    return list(container(values)["args"])


def refusal(values: dict[str, Any]) -> str:
    """helm's error for `values`; the test fails if helm renders them."""
    out = helm("template", "jobflow-controller", str(CHART), *value_args(values), check=False)
    assert out.returncode != 0, f"rendered: {values}"
    return out.stderr


DEFAULT_ARGS = [
    "--leader-elect=true",
    "--leader-elect-resource-namespace=volcano-system",
    "--enable-healthz=true",
    "--healthz-address=:11251",
    "--enable-metrics=true",
    "--listen-address=:8081",
]

#: value -> the flag it adds after manifests/' six.
FLAG_VALUES = [
    ({"workerThreads": 8}, "--worker-threads=8"),
    ({"workerThreads": 0}, "--worker-threads=0"),
    ({"kubeAPIQPS": 100.5}, "--kube-api-qps=100.5"),
    ({"kubeAPIQPS": 200}, "--kube-api-qps=200"),
    ({"kubeAPIBurst": 1000000}, "--kube-api-burst=1000000"),
    ({"logLevel": 4}, "--v=4"),
    ({"logFormat": "json"}, "--log-format=json"),
    ({"controllers": ["*", "-jobtemplate-controller"]}, "--controllers=*,-jobtemplate-controller"),
]


@pytest.mark.parametrize(("values", "flag"), FLAG_VALUES, ids=[f for _, f in FLAG_VALUES])
def test_a_flag_value_adds_its_flag(values: dict[str, Any], flag: str) -> None:
    assert args(values) == [*DEFAULT_ARGS, flag]


def test_null_flag_values_leave_the_controllers_defaults() -> None:
    assert args({}) == DEFAULT_ARGS


def test_leader_election_values_are_its_flags_and_the_roles_lease() -> None:
    values = {
        "leaderElection": {
            "resourceName": "jobflow-leader",
            "resourceNamespace": "leases",
            "leaseDuration": "30s",
            "renewDeadline": "20s",
            "retryPeriod": "4s",
        }
    }
    docs = helm_template(values)
    assert controller(docs)["spec"]["template"]["spec"]["containers"][0]["args"][:6] == [
        "--leader-elect=true",
        "--leader-elect-resource-namespace=leases",
        "--leader-elect-resource-name=jobflow-leader",
        "--leader-elect-lease-duration=30s",
        "--leader-elect-renew-deadline=20s",
        "--leader-elect-retry-period=4s",
    ]
    role = next(d for d in docs if d["kind"] == "Role")
    assert role["metadata"]["namespace"] == "leases"
    assert role["rules"][0]["resourceNames"] == ["jobflow-leader"]
    binding = next(d for d in docs if d["kind"] == "RoleBinding")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "jobflow-controller", "namespace": "volcano-system"}
    ]


def test_disabled_leader_election_passes_false_and_grants_no_lease() -> None:
    docs = helm_template({"leaderElection": {"enabled": False}, "replicaCount": 1})
    assert controller(docs)["spec"]["template"]["spec"]["containers"][0]["args"][0] == "--leader-elect=false"
    assert not [d for d in docs if d["kind"] in ("Role", "RoleBinding")]


def test_metrics_and_healthz_ports_move_flags_ports_service_and_probes() -> None:
    docs = helm_template({"metrics": {"port": 9090}, "healthz": {"port": 10251}})
    c = controller(docs)["spec"]["template"]["spec"]["containers"][0]
    assert "--listen-address=:9090" in c["args"] and "--healthz-address=:10251" in c["args"]
    assert {p["name"]: p["containerPort"] for p in c["ports"]} == {"metrics": 9090, "healthz": 10251}
    service = next(d for d in docs if d["kind"] == "Service")
    assert service["spec"]["ports"][0]["port"] == 9090
    assert service["metadata"]["annotations"]["prometheus.io/port"] == "9090"


def test_disabled_metrics_and_healthz_drop_flags_ports_service_and_probes() -> None:
    docs = helm_template({"metrics": {"enabled": False}, "healthz": {"enabled": False}})
    c = controller(docs)["spec"]["template"]["spec"]["containers"][0]
    assert c["args"] == ["--leader-elect=true", "--leader-elect-resource-namespace=volcano-system"]
    assert "ports" not in c and "livenessProbe" not in c and "readinessProbe" not in c
    assert not [d for d in docs if d["kind"] == "Service"]


def test_extra_args_come_last_after_the_webhooks() -> None:
    rendered = args({"extraArgs": ["--max-requeue-num=5"], "webhook": {"enabled": True}, "workerThreads": 2})
    assert rendered[6:] == [
        "--worker-threads=2",
        "--enable-webhook=true",
        "--webhook-address=:8443",
        "--webhook-tls-cert-file=/etc/jobflow-controller/webhook/tls.crt",
        "--webhook-tls-private-key-file=/etc/jobflow-controller/webhook/tls.key",
        "--max-requeue-num=5",
    ]


def test_pod_values_reach_the_pod_template() -> None:
    docs = helm_template(files=[CI / "flags-values.yaml"])
    pod = controller(docs)["spec"]["template"]
    spec = pod["spec"]
    flags = yaml.safe_load((CI / "flags-values.yaml").read_text())
    assert pod["metadata"]["annotations"] == flags["podAnnotations"]
    assert pod["metadata"]["labels"]["example.com/cost-center"] == "42"
    assert spec["imagePullSecrets"] == flags["imagePullSecrets"]
    assert spec["nodeSelector"] == flags["nodeSelector"]
    assert spec["tolerations"] == flags["tolerations"]
    assert spec["affinity"] == flags["affinity"]
    assert spec["priorityClassName"] == "system-cluster-critical"
    assert spec["serviceAccountName"] == "jobflow-sa"
    c = spec["containers"][0]
    assert c["image"] == "registry.example.com/volcano/jobflow-controller:0.1.0-rc.1"
    assert c["imagePullPolicy"] == "Always"
    # Helm merges maps with the defaults: the set's `cpu: null` removes the default CPU limit.
    assert c["resources"] == {"requests": {"cpu": "200m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}
    assert controller(docs)["spec"]["replicas"] == 3
    assert {d["kind"] for d in docs}.isdisjoint({"CustomResourceDefinition", "PriorityClass"})


def test_the_default_image_is_the_charts_app_version() -> None:
    assert container({})["image"] == "jobflow-controller:0.1.0"


def test_the_default_security_contexts_are_restricted() -> None:
    c = container({})
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    pod = controller(helm_template())["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


def test_sharding_grants_each_shards_lease_and_serves_the_webhook_from_the_statefulset() -> None:
    docs = helm_template({"sharding": {"enabled": True, "shards": 2, "replicas": 5}, "webhook": {"enabled": True}})
    sts = controller(docs, "StatefulSet")
    assert sts["spec"]["replicas"] == 5
    assert sts["spec"]["template"]["spec"]["containers"][0]["args"][0] == "--shards=2"
    assert "--enable-webhook=true" in sts["spec"]["template"]["spec"]["containers"][0]["args"]
    role = next(d for d in docs if d["kind"] == "Role")
    assert role["rules"][0]["resourceNames"] == [
        "jobflow-controller",
        "jobflow-controller-shard-0",
        "jobflow-controller-shard-1",
    ]
    assert not [d for d in docs if d["kind"] == "Deployment"]
    membership = role["rules"][-1]
    assert "resourceNames" not in membership and set(membership["verbs"]) == {"get", "list", "update", "delete"}


def test_a_user_named_certificate_secret_and_ca_bundle_are_used() -> None:
    docs = helm_template(files=[CI / "sharding-monitoring-values.yaml"])
    vwc = next(d for d in docs if d["kind"] == "ValidatingWebhookConfiguration")
    assert vwc["webhooks"][0]["clientConfig"]["caBundle"] == "TUlJQ0FEQU5CZ2txaGtpRzl3MEJBUUVGQUFTQw=="
    assert "annotations" not in vwc["metadata"]
    volumes = controller(docs, "StatefulSet")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "webhook-tls", "secret": {"secretName": "my-webhook-cert"}} in volumes
    dashboard = next(d for d in docs if d["kind"] == "ConfigMap")
    assert dashboard["metadata"]["namespace"] == "monitoring"


def test_another_release_name_prefixes_every_name() -> None:
    docs = helm_template(release="batch", namespace="jobs")
    names = {d["metadata"]["name"] for d in docs if d["kind"] not in ("CustomResourceDefinition", "Namespace")}
    assert names == {
        "batch-jobflow-controller",
        "batch-jobflow-controller-leader-election",
        "batch-jobflow-controller-metrics",
    }
    assert {d["metadata"].get("namespace") for d in docs if d["kind"] == "Deployment"} == {"jobs"}


# --- values.schema.json -----------------------------------------------------------------------

#: (values, what helm's message must say): a typo anywhere, and a wrong type for each kind of value.
REFUSED = [
    ({"workerThreds": 3}, "additional properties 'workerThreds' not allowed"),
    ({"leaderElection": {"leaseDuraton": "15s"}}, "additional properties 'leaseDuraton' not allowed"),
    ({"webhook": {"networkPolicy": {"enabled": True, "cidrs": []}}}, "additional properties 'cidrs' not allowed"),
    ({"image": {"tags": "x"}}, "additional properties 'tags' not allowed"),
    ({"workerThreads": "many"}, "/workerThreads"),
    ({"workerThreads": -1}, "/workerThreads"),
    ({"kubeAPIQPS": "fast"}, "/kubeAPIQPS"),
    ({"logFormat": "xml"}, "/logFormat"),
    ({"controllers": "*"}, "/controllers"),
    ({"leaderElection": {"leaseDuration": "15 seconds"}}, "/leaderElection/leaseDuration"),
    ({"metrics": {"port": 70000}}, "/metrics/port"),
    ({"webhook": {"certificate": {"source": "vault"}}}, "/webhook/certificate/source"),
    ({"sharding": {"shards": 0}}, "/sharding/shards"),
    ({"extraArgs": ["max-requeue-num=5"]}, "/extraArgs/0"),
    ({"replicaCount": "2"}, "/replicaCount"),
]


@pytest.mark.parametrize(("values", "message"), REFUSED, ids=[m for _, m in REFUSED])
def test_the_schema_refuses_a_typo_or_a_wrong_type(values: dict[str, Any], message: str) -> None:
    error = refusal(values)
    assert "values don't meet the specifications of the schema" in error
    assert message in error


def test_a_network_policy_with_the_webhook_needs_the_api_servers_addresses() -> None:
    error = refusal({"webhook": {"enabled": True, "networkPolicy": {"enabled": True}}})
    assert "webhook.networkPolicy.apiServerCIDRs: name where the API server's webhook calls come from" in error


def test_the_chart_version_is_the_projects() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert chart["apiVersion"] == "v2"
    assert chart["version"] == chart["appVersion"] == project


def test_notes_say_how_to_check_the_controller_and_open_the_ui() -> None:
    out = helm("install", "jobflow-controller", str(CHART), "-n", "volcano-system", "--dry-run=client").stdout
    notes = out.split("NOTES:", 1)[1]
    assert "kubectl -n volcano-system rollout status deployment/jobflow-controller" in notes
    assert "kubectl jobflow ui -A" in notes
