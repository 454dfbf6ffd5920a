"""Admission of JobFlows by a real kube-apiserver: the webhook, the CRD's CEL rules, and both.

The webhook runs in this process (a ``WebhookServer`` on 127.0.0.1 with a serving certificate from a
CA made here) and is registered with a ``ValidatingWebhookConfiguration`` whose clientConfig is its
URL and that CA. Every case goes through ``kubectl apply``, and a refusal is checked against
kubectl's whole stderr, so the exact message and the way kubectl shows it are both pinned.

Four set-ups:

* **The webhook alone**, as upstream deploys it (its CRD has no rules): a control plane of this
  module's own (etcd and kube-apiserver) with the CRDs of ``manifests/crds``, what ``kubectl apply
  -k manifests/`` installs (upstream's, plus the optional ``spec.flows[].retry`` and the ``maxItems``
  caps on flows and targets). It replays upstream's e2e cases
  (``test/e2e/admission/jobflow_validation_test.go``) and ours: duplicate names (which upstream
  allows), a cycle, a self-dependency, a name too long for a Job; and the webhook's ratchet: a
  JobFlow stored while the webhook was off can be annotated, not given other flows.
* **The CRD rules alone**, on the session's control plane (which installs them with the Component
  ``manifests/crd-validation``): their messages, and a cycle a -> b -> a, which they cannot see,
  admitted; the controller must report that one.
* **The CRD rules added later**, on a control plane of this module's own: JobFlows stored before the
  Component was applied can be annotated (CRD validation ratcheting), not given other flows.
* **The failure-aware fields** (issue 22, docs/rules.md) in each set-up: what our CRD's enums and
  types refuse before any webhook, what the webhook alone refuses, what the CEL Component refuses.
* **Both**, on the session's control plane with the webhook registered for namespaces labelled for
  this module only (the control plane is shared by the whole session). The API server validates
  the schema, CEL rules included, before it calls validating webhooks, so what the rules catch
  gets their message and the webhook sees only what passes them.
"""

from __future__ import annotations

import base64
import contextlib
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import wait_for

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.errors import ApiStatusError, NotFoundError
from jobflow_controller.kube.resources import Resource
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.local.certs import TinyCA, write
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import CRDS_DIR, LOCAL_CRDS_DIR, install_crds, kubectl_path
from jobflow_controller.local.resources import NAMESPACES
from jobflow_controller.validation import MAX_FLOWS, MAX_TARGETS
from jobflow_controller.webhook import VALIDATE_PATH, WebhookServer

WEBHOOK_NAME = "validatejobflow.volcano.sh"
VALIDATING_WEBHOOK_CONFIGURATIONS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration",
    namespaced=False,
)
CUSTOM_RESOURCE_DEFINITIONS = Resource(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False
)
#: The namespace label the webhook registrations of this module select on.
SELECTOR_LABEL = "jobflow-e2e-admission"

NOT_DAG = "jobflow Flow is not DAG"

Flows = list[dict[str, Any]]


def flow(name: str, *targets: str) -> dict[str, Any]:
    if not targets:
        return {"name": name}
    return {"name": name, "dependsOn": {"targets": list(targets)}}


def job_flow(name: str, namespace: str, flows: Flows) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"jobRetainPolicy": "retain", "flows": flows},
    }


@dataclass(frozen=True)
class Applied:
    path: Path
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Cluster:
    """One API server, reached by kubectl and by the project's client."""

    kubeconfig: Path
    clientset: Clientset

    def apply(self, obj: dict[str, Any], directory: Path) -> Applied:
        """``kubectl apply -f <file>`` of ``obj`` written to a file named after it in ``directory``."""
        path = directory / f"{obj['metadata']['name']}.yaml"
        path.write_text(yaml.safe_dump(obj, sort_keys=False))
        result = subprocess.run(
            [kubectl_path(), f"--kubeconfig={self.kubeconfig}", "apply", "-f", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return Applied(path, result.returncode, result.stdout, result.stderr)

    def label_namespace(self, namespace: str, value: str) -> None:
        self.clientset.resource(NAMESPACES).patch(namespace, {"metadata": {"labels": {SELECTOR_LABEL: value}}})

    def create_namespace(self, labels: dict[str, str]) -> str:
        name = f"e2e-adm-{uuid.uuid4().hex[:8]}"
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
        self.clientset.resource(NAMESPACES).create(namespace)
        return name


def created(applied: Applied, name: str) -> bool:
    return applied.returncode == 0 and applied.stdout == f"jobflow.flow.volcano.sh/{name} created\n"


def webhook_refusal(applied: Applied, message: str, verb: str = "creating") -> str:
    """kubectl's stderr when the webhook refuses ``applied`` with ``message``."""
    return (
        f'Error from server: error when {verb} "{applied.path}": admission webhook "{WEBHOOK_NAME}"'
        f" denied the request: {message}\n"
    )


def crd_rule_refusal(name: str, field: str, message: str) -> str:
    """kubectl's stderr when a CEL rule of the CRD on ``field`` refuses the JobFlow ``name``."""
    return f'The JobFlow "{name}" is invalid: {field}: Invalid value: {message}\n'


# --- the webhook and its registration ---------------------------------------------------------------------


@dataclass(frozen=True)
class Webhook:
    server: WebhookServer
    ca_pem: bytes


@pytest.fixture(scope="module")
def webhook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhook]:
    """The webhook on a free port of 127.0.0.1, serving a certificate for that IP."""
    directory = Path(tmp_path_factory.mktemp("webhook-tls"))
    ca = TinyCA("jobflow-e2e-webhook-ca")
    pair = ca.issue("jobflow-controller-webhook", server=True, ips=("127.0.0.1",))
    cert = write(directory / "tls.crt", pair.cert_pem)
    key = write(directory / "tls.key", pair.key_pem, private=True)
    with WebhookServer(("127.0.0.1", 0), str(cert), str(key)) as server:
        yield Webhook(server, ca.cert_pem)


def webhook_configuration(name: str, webhook: Webhook, selector_value: str) -> dict[str, Any]:
    """manifests/webhook's registration, calling ``webhook`` by URL, for labelled namespaces only."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": WEBHOOK_NAME,
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": f"https://127.0.0.1:{webhook.server.port}{VALIDATE_PATH}",
                    "caBundle": base64.b64encode(webhook.ca_pem).decode(),
                },
                "rules": [
                    {
                        "operations": ["CREATE", "UPDATE"],
                        "apiGroups": ["flow.volcano.sh"],
                        "apiVersions": ["v1alpha1"],
                        "resources": ["jobflows"],
                        "scope": "Namespaced",
                    }
                ],
                "namespaceSelector": {"matchLabels": {SELECTOR_LABEL: selector_value}},
                "failurePolicy": "Fail",
                "matchPolicy": "Equivalent",
                "sideEffects": "None",
                "timeoutSeconds": 10,
            }
        ],
    }


@dataclass(frozen=True)
class Registration:
    """The webhook registered with ``cluster`` for namespaces labelled ``SELECTOR_LABEL=selector_value``."""

    cluster: Cluster
    selector_value: str

    def enable_in(self, namespace: str) -> None:
        """Label ``namespace`` and wait until the API server calls the webhook for it.

        The API server learns of webhook configurations and namespace labels through its informers,
        so both take effect a moment later: a dry-run create of a cycle, which only the webhook
        refuses, tells when.
        """
        self.cluster.label_namespace(namespace, self.selector_value)
        probe = job_flow("probe", namespace, [flow("a", "b"), flow("b", "a")])

        def refused_by_webhook() -> bool:
            try:
                self.cluster.clientset.job_flows(namespace).create(probe, dry_run=True)
            except ApiStatusError as err:
                return f'admission webhook "{WEBHOOK_NAME}" denied the request' in err.message
            return False

        wait_for(refused_by_webhook, timeout=30, interval=0.1, what=f"the webhook to apply in {namespace}")


@contextlib.contextmanager
def registered(cluster: Cluster, webhook: Webhook) -> Iterator[Registration]:
    selector_value = uuid.uuid4().hex[:12]
    name = f"jobflow-e2e-validate-jobflows-{selector_value}"
    configurations = cluster.clientset.resource(VALIDATING_WEBHOOK_CONFIGURATIONS)
    configurations.create(webhook_configuration(name, webhook, selector_value))
    try:
        yield Registration(cluster, selector_value)
    finally:
        with contextlib.suppress(NotFoundError):
            configurations.delete(name)


# --- the webhook alone: a control plane with upstream's CRD -----------------------------------------------


@contextlib.contextmanager
def cluster_with_upstreams_crds() -> Iterator[Cluster]:
    """etcd and kube-apiserver with the CRDs of manifests/crds (upstream's, without CEL rules)."""
    plane = ControlPlane(controller_manager=False)
    plane.start()
    try:
        install_crds(plane.kubeconfig_path, CRDS_DIR)
        rest = RestClient(build_config(str(plane.kubeconfig_path)), qps=500, burst=1000, user_agent="jobflow-e2e")
        try:
            yield Cluster(plane.kubeconfig_path, Clientset(rest))
        finally:
            rest.close()
    finally:
        plane.stop()


@pytest.fixture(scope="module")
def upstream_crd_cluster() -> Iterator[Cluster]:
    """The webhook-alone control plane: upstream's CRDs, as `kubectl apply -k manifests/` installs them."""
    with cluster_with_upstreams_crds() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def upstream_crd_registration(upstream_crd_cluster: Cluster, webhook: Webhook) -> Iterator[Registration]:
    with registered(upstream_crd_cluster, webhook) as registration:
        yield registration


@pytest.fixture
def webhook_namespace(upstream_crd_cluster: Cluster, upstream_crd_registration: Registration) -> str:
    """A fresh namespace of the upstream-CRD control plane where the webhook applies (gone with the plane)."""
    namespace = upstream_crd_cluster.create_namespace({})
    upstream_crd_registration.enable_in(namespace)
    return namespace


# Upstream's e2e cases that it creates, by the name of their It(...), and ours.
ADMITTED: dict[str, Flows] = {
    "allow valid DAG": [flow("a"), flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d")],
    "allow multiple flows having same dependency target, without a duplicate": [
        flow("a"),
        flow("b", "a"),
        flow("c", "a"),
        flow("d", "a", "b"),
    ],
    "allow simple linear chain": [flow("start"), flow("middle", "start"), flow("end", "middle")],
    "allow complex DAG": [
        flow("root1"),
        flow("root2"),
        flow("level1-a", "root1"),
        flow("level1-b", "root2"),
        flow("level2", "level1-a", "level1-b"),
        flow("final", "level2"),
    ],
    "allow empty flows list": [],
    "allow single flow": [flow("single-flow")],
    "allow a patch whose task only the controller can check against the template": [
        {**flow("train"), "patch": {"jobSpec": {"tasks": [{"name": "any-task", "replicas": 2}]}}}
    ],
    "allow a retry policy": [{**flow("train"), "retry": {"maxRetries": 2, "backoff": "1m30s"}}],
    "allow a probe whose task only the controller can check against the targets' Jobs": [
        flow("server"),
        {
            "name": "client",
            "dependsOn": {
                "targets": ["server"],
                "probe": {
                    "httpGetList": [{"taskName": "any-task", "port": 8080, "path": "/ready"}],
                    "tcpSocketList": [{"taskName": "any-task", "port": 2222}],
                    "taskStatusList": [{"taskName": "any-task", "phase": "Running"}],
                },
            },
        },
    ],
}

# Upstream's e2e cases that it refuses, ours, and the two it allows that we refuse; with our message.
REFUSED: dict[str, tuple[Flows, str]] = {
    "reject missing flow definition": (
        [flow("b", "a"), flow("c", "a", "b")],
        "jobflow Flow is not DAG: vertex is not defined: a",
    ),
    "reject self-dependency": ([flow("self-dependent", "self-dependent")], NOT_DAG),
    "reject cycle a-b-a": ([flow("a", "b"), flow("b", "a")], NOT_DAG),
    "reject longer cycle": ([flow("a"), flow("b", "a", "d"), flow("c", "b"), flow("d", "c")], NOT_DAG),
    "reject duplicate flow names, which upstream allows": (
        [flow("a"), flow("a"), flow("b", "a")],
        'jobflow Flow names must be unique: "a"',
    ),
    "reject multiple flows having same dependency target, a duplicate name upstream allows": (
        [flow("a"), flow("b", "a"), flow("c", "a"), flow("c", "b")],
        'jobflow Flow names must be unique: "c"',
    ),
    "reject a flow whose Job name would not be a valid name": (
        [flow("Train")],
        'jobflow Flow "Train": Job name "jobflow-Train" must be a lowercase RFC 1123 subdomain: lowercase letters,'
        " digits, '-' and '.', with every '.'-separated part starting and ending with a letter or digit",
    ),
    "reject a patch task without a name, which upstream ignores": (
        [{**flow("train"), "patch": {"jobSpec": {"tasks": [{"replicas": 2}]}}}],
        'jobflow Flow "train": patch.jobSpec.tasks[0]: has no name '
        "(patch entries are matched to the template's by name)",
    ),
    "reject two patch tasks of one name, which upstream ignores": (
        [{**flow("train"), "patch": {"jobSpec": {"tasks": [{"name": "w"}, {"name": "w", "replicas": 2}]}}}],
        'jobflow Flow "train": patch.jobSpec.tasks[1]: name "w" is already used by tasks[0]',
    ),
    # maxRetries < 0 is the CRD schema's to refuse (minimum 0), before the webhook is called.
    "reject a retry backoff that is not a Go duration": (
        [{**flow("train"), "retry": {"maxRetries": 2, "backoff": "30 seconds"}}],
        'jobflow Flow "train": retry.backoff: invalid duration "30 seconds" (a Go duration such as "30s", "1m30s")',
    ),
    "reject a negative retry backoff": (
        [{**flow("train"), "retry": {"maxRetries": 2, "backoff": "-5s"}}],
        'jobflow Flow "train": retry.backoff: must not be negative, got "-5s"',
    ),
    "reject a probe port 0, which the CRD lets through and upstream ignores": (
        [
            flow("server"),
            {
                "name": "client",
                "dependsOn": {"targets": ["server"], "probe": {"tcpSocketList": [{"taskName": "ps", "port": 0}]}},
            },
        ],
        'jobflow Flow "client": dependsOn.probe.tcpSocketList[0].port: must be between 1 and 65535, not 0',
    ),
}


def case_id(name: str) -> str:
    return name.replace(" ", "-").replace(",", "")


@pytest.mark.parametrize("flows", list(ADMITTED.values()), ids=[case_id(n) for n in ADMITTED])
def test_webhook_admits_valid_jobflow(
    upstream_crd_cluster: Cluster, webhook_namespace: str, tmp_path: Path, flows: Flows
) -> None:
    applied = upstream_crd_cluster.apply(job_flow("jobflow", webhook_namespace, flows), tmp_path)
    assert created(applied, "jobflow"), applied.stderr


@pytest.mark.parametrize(("flows", "message"), list(REFUSED.values()), ids=[case_id(n) for n in REFUSED])
def test_webhook_refuses_invalid_jobflow_with_its_message(
    upstream_crd_cluster: Cluster, webhook_namespace: str, tmp_path: Path, flows: Flows, message: str
) -> None:
    applied = upstream_crd_cluster.apply(job_flow("jobflow", webhook_namespace, flows), tmp_path)
    assert applied.returncode == 1
    assert applied.stderr == webhook_refusal(applied, message)


def test_webhook_refused_jobflow_is_not_stored(
    upstream_crd_cluster: Cluster, webhook_namespace: str, tmp_path: Path
) -> None:
    upstream_crd_cluster.apply(job_flow("cyclic", webhook_namespace, [flow("a", "b"), flow("b", "a")]), tmp_path)
    with pytest.raises(NotFoundError):
        upstream_crd_cluster.clientset.job_flows(webhook_namespace).get("cyclic")


def test_webhook_admits_update_with_valid_dag(
    upstream_crd_cluster: Cluster, webhook_namespace: str, tmp_path: Path
) -> None:
    # Upstream's "allow update with valid DAG": a; b->a, then c->b appended.
    upstream_crd_cluster.apply(job_flow("update-jobflow", webhook_namespace, [flow("a"), flow("b", "a")]), tmp_path)
    updated = job_flow("update-jobflow", webhook_namespace, [flow("a"), flow("b", "a"), flow("c", "b")])
    applied = upstream_crd_cluster.apply(updated, tmp_path)
    assert (applied.returncode, applied.stdout) == (0, "jobflow.flow.volcano.sh/update-jobflow configured\n")
    stored = upstream_crd_cluster.clientset.job_flows(webhook_namespace).get("update-jobflow")
    assert [f["name"] for f in stored["spec"]["flows"]] == ["a", "b", "c"]


def test_webhook_refuses_update_to_a_cycle(
    upstream_crd_cluster: Cluster, webhook_namespace: str, tmp_path: Path
) -> None:
    upstream_crd_cluster.apply(job_flow("update-jobflow", webhook_namespace, [flow("a"), flow("b", "a")]), tmp_path)
    applied = upstream_crd_cluster.apply(
        job_flow("update-jobflow", webhook_namespace, [flow("a", "b"), flow("b", "a")]), tmp_path
    )
    assert applied.returncode == 1
    assert applied.stderr.endswith(
        patch_refusal_ending(applied, f'admission webhook "{WEBHOOK_NAME}" denied the request: {NOT_DAG}')
    )
    stored = upstream_crd_cluster.clientset.job_flows(webhook_namespace).get("update-jobflow")
    assert "dependsOn" not in stored["spec"]["flows"][0]


def test_the_default_crds_are_served_without_cel_rules(upstream_crd_cluster: Cluster) -> None:
    # `kubectl apply -k manifests/` installs upstream's schema: nothing needing Kubernetes 1.35.
    crd = upstream_crd_cluster.clientset.resource(CUSTOM_RESOURCE_DEFINITIONS).get("jobflows.flow.volcano.sh")
    (version,) = crd["spec"]["versions"]
    flows = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["flows"]
    assert "x-kubernetes-validations" not in flows and "x-kubernetes-validations" not in flows["items"]
    assert "maxLength" not in flows["items"]["properties"]["name"]


def test_the_default_crds_cap_flows_and_targets_before_the_webhook_is_called(
    upstream_crd_cluster: Cluster, webhook_namespace: str
) -> None:
    # Issue 21: our CRD's maxItems (the API server validates the schema before it calls the webhook,
    # whose own refusal, the same cap, is what a cluster keeping upstream's CRD sees).
    jobflows = upstream_crd_cluster.clientset.job_flows(webhook_namespace)
    names = [f"f{i}" for i in range(MAX_FLOWS + 1)]
    at_caps = [flow(n) for n in names[: MAX_FLOWS - 1]] + [flow(names[MAX_FLOWS - 1], *names[:MAX_TARGETS])]
    assert jobflows.create(job_flow("at-caps", webhook_namespace, at_caps), dry_run=True)["metadata"]["name"]
    refusals = []
    for name, flows in [
        ("too-many-flows", [flow(n) for n in names]),
        ("too-many-targets", [flow(n) for n in names[: MAX_TARGETS + 1]] + [flow("last", *names[: MAX_TARGETS + 1])]),
    ]:
        with pytest.raises(ApiStatusError) as refused:
            jobflows.create(job_flow(name, webhook_namespace, flows), dry_run=True)
        refusals.append(refused.value.message)
    assert refusals == [
        'JobFlow.flow.volcano.sh "too-many-flows" is invalid: spec.flows: Too many: 501: must have at most 500 items',
        f'JobFlow.flow.volcano.sh "too-many-targets" is invalid: spec.flows[{MAX_TARGETS + 1}].dependsOn.targets: '
        "Too many: 101: must have at most 100 items",
    ]


def annotate(cluster: Cluster, namespace: str, name: str) -> subprocess.CompletedProcess[str]:
    """``kubectl annotate jobflow/<name>``: an UPDATE that changes only the metadata."""
    return subprocess.run(
        [
            kubectl_path(),
            f"--kubeconfig={cluster.kubeconfig}",
            "annotate",
            "-n",
            namespace,
            f"jobflow/{name}",
            "team=ml",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def patch_refusal_ending(applied: Applied, refusal: str) -> str:
    # kubectl prints the patch it sent first; the refusal is the end of its last line.
    return f'error when patching "{applied.path}": {refusal}\n'


def test_webhook_lets_a_jobflow_stored_while_it_was_off_be_annotated_but_not_given_other_flows(
    upstream_crd_cluster: Cluster, upstream_crd_registration: Registration, tmp_path: Path
) -> None:
    # Stored while the webhook did not apply to the namespace: a duplicate name, which upstream allows.
    namespace = upstream_crd_cluster.create_namespace({})
    stored = job_flow("stored", namespace, [flow("a"), flow("a"), flow("b", "a")])
    assert created(upstream_crd_cluster.apply(stored, tmp_path), "stored")
    upstream_crd_registration.enable_in(namespace)

    annotated = annotate(upstream_crd_cluster, namespace, "stored")
    assert (annotated.returncode, annotated.stdout) == (0, "jobflow.flow.volcano.sh/stored annotated\n"), (
        annotated.stderr
    )

    changed = job_flow("stored", namespace, [flow("a"), flow("a"), flow("b", "a"), flow("c", "b")])
    applied = upstream_crd_cluster.apply(changed, tmp_path)
    assert applied.returncode == 1
    assert applied.stderr.endswith(
        patch_refusal_ending(
            applied, f'admission webhook "{WEBHOOK_NAME}" denied the request: jobflow Flow names must be unique: "a"'
        )
    ), applied.stderr
    jobflow = upstream_crd_cluster.clientset.job_flows(namespace).get("stored")
    assert [f["name"] for f in jobflow["spec"]["flows"]] == ["a", "a", "b"]
    assert jobflow["metadata"]["annotations"]["team"] == "ml"


def test_webhook_down_refuses_jobflows_as_failure_policy_fail(
    upstream_crd_cluster: Cluster, webhook: Webhook, tmp_path: Path
) -> None:
    # A registration whose URL answers nothing: the JobFlow is refused, not admitted unchecked.
    dead = Webhook(WebhookServer(("127.0.0.1", 0), *_serving_files(tmp_path)), webhook.ca_pem)
    dead.server.stop()
    namespace = upstream_crd_cluster.create_namespace({})
    with registered(upstream_crd_cluster, dead) as registration:
        upstream_crd_cluster.label_namespace(namespace, registration.selector_value)

        def refused() -> str | None:
            applied = upstream_crd_cluster.apply(job_flow("valid", namespace, [flow("a")]), tmp_path)
            return applied.stderr if applied.returncode == 1 else None

        stderr = wait_for(refused, timeout=30, interval=0.2, what="the dead webhook to be called")
    assert f'failed calling webhook "{WEBHOOK_NAME}"' in stderr
    assert "connection refused" in stderr


def _serving_files(directory: Path) -> tuple[str, str]:
    # Any loadable pair will do for a server that is stopped before it is called.
    ca = TinyCA("unused")
    pair = ca.issue("unused", server=True, ips=("127.0.0.1",))
    return str(write(directory / "unused.crt", pair.cert_pem)), str(write(directory / "unused.key", pair.key_pem))


# --- the CRD rules alone: the session's control plane -----------------------------------------------------

CRD_RULE_CASES: dict[str, tuple[Flows, str, str]] = {
    "duplicate names": ([flow("a"), flow("a"), flow("b", "a")], "spec.flows", "jobflow Flow names must be unique"),
    "missing target": (
        [flow("b", "a"), flow("c", "a", "b")],
        "spec.flows",
        "jobflow Flow is not DAG: vertex is not defined",
    ),
    "self-dependency": ([flow("a"), flow("b", "b")], "spec.flows[1]", NOT_DAG),
}


@pytest.mark.parametrize(
    ("flows", "field", "message"), list(CRD_RULE_CASES.values()), ids=[case_id(n) for n in CRD_RULE_CASES]
)
def test_crd_rule_refuses_invalid_jobflow_without_the_webhook(
    control_plane: ControlPlane,
    clientset: Clientset,
    namespace: str,
    tmp_path: Path,
    flows: Flows,
    field: str,
    message: str,
) -> None:
    applied = Cluster(control_plane.kubeconfig_path, clientset).apply(job_flow("jobflow", namespace, flows), tmp_path)
    assert applied.returncode == 1
    assert applied.stderr == crd_rule_refusal("jobflow", field, message)


def test_crd_rules_admit_a_cycle_they_cannot_see(
    control_plane: ControlPlane, clientset: Clientset, namespace: str, tmp_path: Path
) -> None:
    # a -> b -> a: each flow's targets exist and none is the flow itself; only the webhook (or the
    # controller, with a Warning event) can tell.
    applied = Cluster(control_plane.kubeconfig_path, clientset).apply(
        job_flow("cyclic", namespace, [flow("a", "b"), flow("b", "a")]), tmp_path
    )
    assert created(applied, "cyclic"), applied.stderr


# --- the CRD rules added later: a control plane of this module's own ---------------------------------------

#: A flow name the rules' bound refuses (it is longer than 253), which upstream's CRD takes.
OVERLONG = "x" * 300


@dataclass(frozen=True)
class Ratcheting:
    """A cluster where JobFlows were stored before the Component's rules were installed."""

    cluster: Cluster
    namespace: str


@pytest.fixture(scope="module")
def ratcheting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ratcheting]:
    """Upstream's CRDs, three JobFlows the rules would refuse, then the CRDs of the local plane.

    ``LOCAL_CRDS_DIR`` is manifests/crds with the Component manifests/crd-validation (and Volcano's
    Job CRD); the API server's handler for the new schema takes effect a moment after the CRD is
    updated, which a dry-run create of a duplicate, refused only by the rules, tells.
    """
    directory = Path(tmp_path_factory.mktemp("ratcheting"))
    with cluster_with_upstreams_crds() as cluster:
        namespace = cluster.create_namespace({})
        duplicate = [flow("a"), flow("a"), flow("b", "a")]
        for name, flows in [("dup-annotate", duplicate), ("dup-update", duplicate), ("long", [flow(OVERLONG)])]:
            assert created(cluster.apply(job_flow(name, namespace, flows), directory), name)
        install_crds(cluster.kubeconfig, LOCAL_CRDS_DIR)
        probe = job_flow("probe", namespace, duplicate)

        def refused_by_the_rules() -> bool:
            try:
                cluster.clientset.job_flows(namespace).create(probe, dry_run=True)
            except ApiStatusError as err:
                return "jobflow Flow names must be unique" in err.message
            return False

        wait_for(refused_by_the_rules, timeout=30, interval=0.1, what="the CRD rules to apply")
        yield Ratcheting(cluster, namespace)


def test_crd_rules_let_a_jobflow_stored_before_them_with_a_duplicate_be_annotated(ratcheting: Ratcheting) -> None:
    annotated = annotate(ratcheting.cluster, ratcheting.namespace, "dup-annotate")
    assert (annotated.returncode, annotated.stdout) == (0, "jobflow.flow.volcano.sh/dup-annotate annotated\n"), (
        annotated.stderr
    )


def test_crd_rules_let_a_jobflow_stored_before_them_with_an_overlong_name_be_annotated(
    ratcheting: Ratcheting,
) -> None:
    # maxLength 253 is on an item of spec.flows, an atomic list: ratcheted as part of the unchanged list.
    # The bound is in force: a new JobFlow with that name is refused.
    new = job_flow("long-new", ratcheting.namespace, [flow(OVERLONG)])
    with pytest.raises(ApiStatusError) as refused:
        ratcheting.cluster.clientset.job_flows(ratcheting.namespace).create(new, dry_run=True)
    assert "spec.flows[0].name: Too long: may not be more than 253" in refused.value.message
    annotated = annotate(ratcheting.cluster, ratcheting.namespace, "long")
    assert (annotated.returncode, annotated.stdout) == (0, "jobflow.flow.volcano.sh/long annotated\n"), annotated.stderr


def test_crd_rules_refuse_giving_other_flows_to_a_jobflow_stored_before_them(
    ratcheting: Ratcheting, tmp_path: Path
) -> None:
    changed = job_flow("dup-update", ratcheting.namespace, [flow("a"), flow("a"), flow("b", "a"), flow("c", "b")])
    applied = ratcheting.cluster.apply(changed, tmp_path)
    assert applied.returncode == 1
    # The whole of kubectl's stderr, as for a create: the rules refuse before any patch is echoed.
    assert applied.stderr == crd_rule_refusal("dup-update", "spec.flows", "jobflow Flow names must be unique")
    stored = ratcheting.cluster.clientset.job_flows(ratcheting.namespace).get("dup-update")
    assert [f["name"] for f in stored["spec"]["flows"]] == ["a", "a", "b"]


# --- both: the session's control plane with the webhook for labelled namespaces ---------------------------


@pytest.fixture(scope="module")
def session_registration(control_plane: ControlPlane, clientset: Clientset, webhook: Webhook) -> Iterator[Registration]:
    with registered(Cluster(control_plane.kubeconfig_path, clientset), webhook) as registration:
        yield registration


@pytest.fixture
def session_cluster(control_plane: ControlPlane, clientset: Clientset) -> Cluster:
    return Cluster(control_plane.kubeconfig_path, clientset)


@pytest.fixture
def labelled_namespace(namespace: str, session_registration: Registration) -> str:
    session_registration.enable_in(namespace)
    return namespace


def test_with_both_the_webhook_refuses_the_cycle_the_rules_cannot_see(
    session_cluster: Cluster, labelled_namespace: str, tmp_path: Path
) -> None:
    applied = session_cluster.apply(job_flow("cyclic", labelled_namespace, [flow("a", "b"), flow("b", "a")]), tmp_path)
    assert applied.returncode == 1
    assert applied.stderr == webhook_refusal(applied, NOT_DAG)


def test_with_both_the_crd_rule_refuses_before_the_webhook_is_called(
    session_cluster: Cluster, labelled_namespace: str, tmp_path: Path
) -> None:
    # Schema validation, CEL rules included, precedes validating admission: the rule's message,
    # without the target's name, and no webhook in it.
    applied = session_cluster.apply(job_flow("missing", labelled_namespace, [flow("b", "a")]), tmp_path)
    assert applied.returncode == 1
    assert applied.stderr == crd_rule_refusal("missing", "spec.flows", "jobflow Flow is not DAG: vertex is not defined")


def test_with_both_a_valid_jobflow_is_created(
    session_cluster: Cluster, labelled_namespace: str, tmp_path: Path
) -> None:
    applied = session_cluster.apply(job_flow("valid", labelled_namespace, [flow("a"), flow("b", "a")]), tmp_path)
    assert created(applied, "valid"), applied.stderr


def test_webhook_registration_leaves_other_namespaces_of_the_session_alone(
    session_cluster: Cluster, session_registration: Registration, namespace: str, tmp_path: Path
) -> None:
    # The registration is in effect (a labelled namespace shows it), but `namespace` carries no
    # label: only the CRD rules apply there, and they admit the cycle.
    other = session_cluster.create_namespace({})
    try:
        session_registration.enable_in(other)
        applied = session_cluster.apply(job_flow("cyclic", namespace, [flow("a", "b"), flow("b", "a")]), tmp_path)
        assert created(applied, "cyclic"), applied.stderr
    finally:
        with contextlib.suppress(NotFoundError):
            session_cluster.clientset.resource(NAMESPACES).delete(other)


# --- issue 22: the failure-aware fields (docs/rules.md) ------------------------------------------------------

RULES = "AllCompleted, AnyCompleted, AllFailed, AnyFailed, AllDone, NoneFailed"
PROBE = {"tcpSocketList": [{"taskName": "ps", "port": 2222}]}


def failure_aware(name: str, namespace: str, flows: Flows, **spec: Any) -> dict[str, Any]:
    """``job_flow`` with spec fields beside the flows (``failurePolicy``, ``finally``)."""
    obj = job_flow(name, namespace, flows)
    obj["spec"].update(spec)
    return obj


def ruled(name: str, rule: str, *targets: str, **depends_on: Any) -> dict[str, Any]:
    return {"name": name, "dependsOn": {**({"targets": list(targets)} if targets else {}), "rule": rule, **depends_on}}


def finally_of(*names: str) -> dict[str, Any]:
    return {"finally": [{"name": n} for n in names]}


def test_webhook_admits_every_failure_aware_field(
    upstream_crd_cluster: Cluster, webhook_namespace: str, tmp_path: Path
) -> None:
    obj = failure_aware(
        "jobflow",
        webhook_namespace,
        [
            {**flow("train"), "continueOnFailure": True},
            ruled("alert", "AnyFailed", "train"),
            ruled("go", "AllDone", "train"),
        ],
        failurePolicy="RunToCompletion",
        **{"finally": [{"name": "notify", "patch": {"jobSpec": {"tasks": [{"name": "t", "replicas": 2}]}}}]},
    )
    applied = upstream_crd_cluster.apply(obj, tmp_path)
    assert created(applied, "jobflow"), applied.stderr
    stored = upstream_crd_cluster.clientset.job_flows(webhook_namespace).get("jobflow")
    # Our CRD keeps the fields (upstream's would prune them) and defaults none of them.
    assert stored["spec"]["failurePolicy"] == "RunToCompletion"
    assert stored["spec"]["flows"][1]["dependsOn"] == {"targets": ["train"], "rule": "AnyFailed"}
    assert stored["spec"]["flows"][0]["continueOnFailure"] is True
    assert stored["spec"]["finally"][0]["name"] == "notify"


def test_our_crd_defaults_none_of_the_failure_aware_fields(
    upstream_crd_cluster: Cluster, webhook_namespace: str, tmp_path: Path
) -> None:
    applied = upstream_crd_cluster.apply(job_flow("plain", webhook_namespace, [flow("a"), flow("b", "a")]), tmp_path)
    assert created(applied, "plain"), applied.stderr
    stored = upstream_crd_cluster.clientset.job_flows(webhook_namespace).get("plain")
    assert stored["spec"] == {"jobRetainPolicy": "retain", "flows": [flow("a"), flow("b", "a")]}


# What the webhook alone refuses among the failure-aware fields (our CRD's schema lets them through).
FAILURE_AWARE_REFUSED: dict[str, tuple[Flows, dict[str, Any], str]] = {
    "a rule without targets": (
        [flow("a"), ruled("b", "AnyFailed")],
        {},
        'jobflow Flow "b": dependsOn.rule: "AnyFailed" needs dependsOn.targets'
        " (a rule decides over the targets' outcomes; this flow has none)",
    ),
    "a probe with a rule other than AllCompleted": (
        [flow("a"), ruled("b", "AllDone", "a", probe=PROBE)],
        {},
        'jobflow Flow "b": dependsOn.probe: only allowed with the rule AllCompleted, not "AllDone"'
        " (a probe checks the targets' running Jobs, which only that rule waits for)",
    ),
    "a finally name that repeats a flow": (
        [flow("train")],
        finally_of("train"),
        'jobflow Finally "train": repeats the name of a flow (both would be the Job "jobflow-train")',
    ),
    "a finally name that repeats another": (
        [flow("train")],
        finally_of("notify", "notify"),
        'jobflow Finally names must be unique: "notify"',
    ),
    "a finally name that is not a valid name": (
        [flow("train")],
        finally_of("Notify"),
        'jobflow Finally "Notify": Job name "jobflow-Notify" must be a lowercase RFC 1123 subdomain: lowercase'
        " letters, digits, '-' and '.', with every '.'-separated part starting and ending with a letter or digit",
    ),
    "a finally patch task without a name": (
        [flow("train")],
        {"finally": [{"name": "notify", "patch": {"jobSpec": {"tasks": [{"replicas": 2}]}}}]},
        'jobflow Finally "notify": patch.jobSpec.tasks[0]: has no name'
        " (patch entries are matched to the template's by name)",
    ),
}


@pytest.mark.parametrize(
    ("flows", "spec", "message"),
    list(FAILURE_AWARE_REFUSED.values()),
    ids=[case_id(n) for n in FAILURE_AWARE_REFUSED],
)
def test_webhook_refuses_a_bad_failure_aware_field_with_its_message(
    upstream_crd_cluster: Cluster,
    webhook_namespace: str,
    tmp_path: Path,
    flows: Flows,
    spec: dict[str, Any],
    message: str,
) -> None:
    applied = upstream_crd_cluster.apply(failure_aware("jobflow", webhook_namespace, flows, **spec), tmp_path)
    assert applied.returncode == 1
    assert applied.stderr == webhook_refusal(applied, message)


# What our CRD's schema refuses before the webhook is called (the webhook's own messages for these are
# tests/unit/webhook/test_webhook_failure_aware.py's: a CRD keeping unknown fields would let them through).
SCHEMA_REFUSED: dict[str, tuple[Flows, dict[str, Any], str]] = {
    "an unknown rule": (
        [flow("a"), ruled("b", "OnFailure", "a")],
        {},
        'spec.flows[1].dependsOn.rule: Unsupported value: "OnFailure": supported values: "AllCompleted",'
        ' "AnyCompleted", "AllFailed", "AnyFailed", "AllDone", "NoneFailed"',
    ),
    "continueOnFailure not a boolean": (
        [{**flow("a"), "continueOnFailure": "yes"}],
        {},
        'spec.flows[0].continueOnFailure: Invalid value: "string": spec.flows[0].continueOnFailure in body must be'
        ' of type boolean: "string"',
    ),
    "an unknown failurePolicy": (
        [flow("a")],
        {"failurePolicy": "Never"},
        'spec.failurePolicy: Unsupported value: "Never": supported values: "FailFast", "RunToCompletion"',
    ),
    "101 finally entries": (
        [flow("a")],
        {"finally": [{"name": f"n{i}"} for i in range(101)]},
        "spec.finally: Too many: 101: must have at most 100 items",
    ),
}


@pytest.mark.parametrize(
    ("flows", "spec", "message"), list(SCHEMA_REFUSED.values()), ids=[case_id(n) for n in SCHEMA_REFUSED]
)
def test_our_crd_refuses_a_bad_failure_aware_value_before_the_webhook(
    upstream_crd_cluster: Cluster,
    webhook_namespace: str,
    flows: Flows,
    spec: dict[str, Any],
    message: str,
) -> None:
    jobflows = upstream_crd_cluster.clientset.job_flows(webhook_namespace)
    with pytest.raises(ApiStatusError) as refused:
        jobflows.create(failure_aware("bad", webhook_namespace, flows, **spec), dry_run=True)
    assert refused.value.message == f'JobFlow.flow.volcano.sh "bad" is invalid: {message}'


# What the CEL Component alone refuses (the session's control plane, no webhook), with its messages.
CEL_FAILURE_AWARE_CASES: dict[str, tuple[Flows, dict[str, Any], str, str]] = {
    "a rule without targets": (
        [flow("a"), ruled("b", "AnyFailed")],
        {},
        "spec.flows[1].dependsOn",
        "jobflow Flow dependsOn.rule needs dependsOn.targets",
    ),
    "a probe with another rule": (
        [flow("a"), ruled("b", "AnyFailed", "a", probe=PROBE)],
        {},
        "spec.flows[1].dependsOn",
        "jobflow Flow dependsOn.probe is only allowed with the rule AllCompleted",
    ),
    "finally names repeated": (
        [flow("a")],
        finally_of("notify", "notify"),
        "spec.finally",
        "jobflow Finally names must be unique",
    ),
    "a finally name that repeats a flow": (
        [flow("a"), flow("b", "a")],
        finally_of("notify", "b"),
        "spec",
        "jobflow Finally names must not repeat a flow name",
    ),
}


@pytest.mark.parametrize(
    ("flows", "spec", "field", "message"),
    list(CEL_FAILURE_AWARE_CASES.values()),
    ids=[case_id(n) for n in CEL_FAILURE_AWARE_CASES],
)
def test_crd_rule_refuses_a_bad_failure_aware_field_without_the_webhook(
    control_plane: ControlPlane,
    clientset: Clientset,
    namespace: str,
    tmp_path: Path,
    flows: Flows,
    spec: dict[str, Any],
    field: str,
    message: str,
) -> None:
    cluster = Cluster(control_plane.kubeconfig_path, clientset)
    applied = cluster.apply(failure_aware("jobflow", namespace, flows, **spec), tmp_path)
    assert applied.returncode == 1
    assert applied.stderr == crd_rule_refusal("jobflow", field, message)


def test_crd_rules_admit_every_failure_aware_field(
    control_plane: ControlPlane, clientset: Clientset, namespace: str, tmp_path: Path
) -> None:
    obj = failure_aware(
        "valid-rules",
        namespace,
        [
            {**flow("a"), "continueOnFailure": True},
            ruled("b", "AnyFailed", "a"),
            ruled("c", "AllCompleted", "a", probe=PROBE),
        ],
        failurePolicy="FailFast",
        **finally_of("notify", "cleanup"),
    )
    applied = Cluster(control_plane.kubeconfig_path, clientset).apply(obj, tmp_path)
    assert created(applied, "valid-rules"), applied.stderr


def test_with_both_the_webhook_refuses_a_finally_name_the_rules_cannot_judge(
    session_cluster: Cluster, labelled_namespace: str, tmp_path: Path
) -> None:
    # A DNS-1123 subdomain (the CEL rule passes it, issue 33) whose Job name is too long: only the
    # webhook knows the JobFlow's name.
    name = "n" * 45
    applied = session_cluster.apply(
        failure_aware("a-long-jobflow-name", labelled_namespace, [flow("a")], **finally_of(name)), tmp_path
    )
    assert applied.returncode == 1
    assert applied.stderr == webhook_refusal(
        applied,
        f'jobflow Finally "{name}": Job name "a-long-jobflow-name-{name}" is 65 characters long, it must be at most 63',
    )


def test_with_both_the_crd_rule_refuses_a_finally_name_that_is_no_subdomain_before_the_webhook(
    session_cluster: Cluster, labelled_namespace: str, tmp_path: Path
) -> None:
    applied = session_cluster.apply(
        failure_aware("bad-name", labelled_namespace, [flow("a")], **finally_of("Notify")), tmp_path
    )
    assert applied.returncode == 1
    assert applied.stderr == crd_rule_refusal(
        "bad-name",
        "spec.finally[0].name",
        '"Notify": jobflow Finally name must be a lowercase RFC 1123 subdomain: lowercase letters, digits,'
        " '-' and '.', with every '.'-separated part starting and ending with a letter or digit",
    )


def test_with_both_the_crd_rule_refuses_a_finally_repeating_a_flow_before_the_webhook(
    session_cluster: Cluster, labelled_namespace: str, tmp_path: Path
) -> None:
    applied = session_cluster.apply(
        failure_aware("repeat", labelled_namespace, [flow("a")], **finally_of("a")), tmp_path
    )
    assert applied.returncode == 1
    assert applied.stderr == crd_rule_refusal("repeat", "spec", "jobflow Finally names must not repeat a flow name")
