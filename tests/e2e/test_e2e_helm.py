"""The Helm chart on a real API server, with a real helm: `helm install`, then every rendered object
exists as rendered; the real controller, holding only a token of the chart's ServiceAccount, runs a
JobFlow to Succeed while the account is refused what the chart does not grant (test_e2e_deploy.py's
tests, run here with the chart's RBAC in place of manifests/'); `helm upgrade` changing workerThreads
and enabling the webhook; `helm uninstall` leaving the CRDs and the user's JobFlows.

The module starts its own control plane, with Volcano's Job and Command CRDs but not the JobFlow and
JobTemplate CRDs: the chart installs those. Every call is helm's own (chart_render.helm).
"""

from __future__ import annotations

import base64
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_e2e_deploy as deploy
import yaml
from chart_render import CHART, NAMESPACE, RELEASE, documents, helm, helm_template, key, kustomize, show
from e2e_helpers import wait_for
from test_e2e_deploy import ControllerProcess, Pipeline, controller_process, service_account_kubeconfig

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.errors import ApiStatusError, NotFoundError
from jobflow_controller.kube.event_sink import KubeEventSink
from jobflow_controller.kube.resources import JOB_FLOWS, JOB_TEMPLATES, Resource
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.local.certs import TinyCA
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import LOCAL_CRDS_DIR, install_crds, kubectl
from jobflow_controller.local.simulator import COMPONENT as SIMULATOR_COMPONENT
from jobflow_controller.local.simulator import JobSimulator
from jobflow_controller.record import EventBroadcaster

# test_e2e_deploy.py's tests of the controller under its ServiceAccount, run here against the chart's
# RBAC: collected in this module, their fixtures resolve to this module's (sa_kubeconfig, controller,
# the control plane); the fixtures they need beside those come with them.
as_service_account = deploy.as_service_account
flow_namespace = deploy.flow_namespace
pipeline = deploy.pipeline
test_controller_log_has_no_forbidden_line = deploy.test_controller_log_has_no_forbidden_line
test_controller_under_its_service_account_becomes_ready = deploy.test_controller_under_its_service_account_becomes_ready
test_controller_under_its_service_account_is_live = deploy.test_controller_under_its_service_account_is_live
test_controller_under_its_service_account_takes_its_lease = (
    deploy.test_controller_under_its_service_account_takes_its_lease
)
test_created_events_are_recorded_under_the_service_account = (
    deploy.test_created_events_are_recorded_under_the_service_account
)
test_jobs_of_the_succeeded_flow_are_deleted_under_the_service_account = (
    deploy.test_jobs_of_the_succeeded_flow_are_deleted_under_the_service_account
)
test_service_account_can_get_what_a_conflict_retry_reads_again = (
    deploy.test_service_account_can_get_what_a_conflict_retry_reads_again
)
test_service_account_cannot_create_a_lease_outside_volcano_system = (
    deploy.test_service_account_cannot_create_a_lease_outside_volcano_system
)
test_service_account_may_delete_jobflows_but_not_templates_or_cronjobflows = (
    deploy.test_service_account_may_delete_jobflows_but_not_templates_or_cronjobflows
)
test_service_account_cannot_get_a_lease_it_is_not_granted = (
    deploy.test_service_account_cannot_get_a_lease_it_is_not_granted
)
test_service_account_cannot_read_secrets = deploy.test_service_account_cannot_read_secrets
test_service_account_cannot_update_a_jobflows_spec = deploy.test_service_account_cannot_update_a_jobflows_spec
test_service_account_may_create_a_command_and_nothing_else_with_commands = (
    deploy.test_service_account_may_create_a_command_and_nothing_else_with_commands
)
test_service_account_may_list_pods_for_probes_but_not_get_or_create_them = (
    deploy.test_service_account_may_list_pods_for_probes_but_not_get_or_create_them
)
test_two_step_jobflow_succeeds_under_the_service_account = (
    deploy.test_two_step_jobflow_succeeds_under_the_service_account
)

#: Where the outputs of `helm install` and `helm upgrade` are kept for a reader (gitignored).
ARTIFACTS = Path(__file__).resolve().parents[2] / ".test-artifacts" / "helm"
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
VOLCANO_CRDS = ("batch.volcano.sh_jobs.yaml", "bus.volcano.sh_commands.yaml")


def chart_crds() -> list[str]:
    """The CRDs the chart installs: those of manifests/crds (jobflows, jobtemplates, any added there)."""
    return sorted(key(d)[2] for d in kustomize() if d["kind"] == "CustomResourceDefinition")


# --- this module's control plane: Volcano's CRDs only ----------------------------------------------


@pytest.fixture(scope="module")
def control_plane() -> Iterator[ControlPlane]:
    plane = ControlPlane()
    plane.start()
    try:
        volcano = plane.root / "volcano-crds"
        volcano.mkdir()
        for name in VOLCANO_CRDS:
            shutil.copy(LOCAL_CRDS_DIR / name, volcano / name)
        (volcano / "kustomization.yaml").write_text(yaml.safe_dump({"resources": list(VOLCANO_CRDS)}))
        install_crds(plane.kubeconfig_path, volcano)
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="module")
def kubeconfig(control_plane: ControlPlane) -> Path:
    return control_plane.kubeconfig_path


@pytest.fixture(scope="module")
def rest(kubeconfig: Path) -> Iterator[RestClient]:
    client = RestClient(build_config(str(kubeconfig)), qps=500, burst=1000, user_agent="jobflow-e2e-helm")
    yield client
    client.close()


@pytest.fixture(scope="module")
def clientset(rest: RestClient) -> Clientset:
    return Clientset(rest)


@pytest.fixture(scope="module")
def simulator(clientset: Clientset) -> Iterator[JobSimulator]:
    stop = threading.Event()
    broadcaster = EventBroadcaster()
    broadcaster.start_recording_to_sink(KubeEventSink.from_rest_client(clientset.rest))
    sim = JobSimulator(clientset, recorder=broadcaster.new_recorder(SIMULATOR_COMPONENT))
    thread = threading.Thread(target=sim.run, args=(stop,), name="job-simulator", daemon=True)
    thread.start()
    yield sim
    stop.set()
    thread.join(timeout=10)
    broadcaster.shutdown(timeout=5)


def record(name: str, text: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / name).write_text(text)


# --- helm install ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def installed(kubeconfig: Path) -> str:
    """`helm install jobflow-controller -n volcano-system --create-namespace` with the default values;
    its output."""
    out = helm("install", RELEASE, str(CHART), "-n", NAMESPACE, "--create-namespace", kubeconfig=kubeconfig).stdout
    record("install.txt", out)
    return out


def release_manifest(kubeconfig: Path) -> list[dict[str, Any]]:
    return documents(helm("get", "manifest", RELEASE, "-n", NAMESPACE, kubeconfig=kubeconfig).stdout)


def live(kubeconfig: Path, doc: dict[str, Any]) -> dict[str, Any]:
    kind, namespace, name = key(doc)
    args = ["get", kind, name, "-o", "json", *(["-n", namespace] if namespace else [])]
    return dict(yaml.safe_load(kubectl(kubeconfig, *args)))


def missing(path: str, rendered: Any, found: Any) -> list[str]:
    """Where `found` (the live object) lacks what `rendered` says: the API server may add (defaults,
    status, metadata), never change or drop (but for a false it does not write back)."""
    if isinstance(rendered, dict) and isinstance(found, dict):
        return [line for k, v in rendered.items() for line in missing(f"{path}/{k}", v, found.get(k, "<absent>"))]
    if isinstance(rendered, list) and isinstance(found, list) and len(rendered) == len(found):
        return [
            line for i, (a, b) in enumerate(zip(rendered, found, strict=True)) for line in missing(f"{path}/{i}", a, b)
        ]
    if rendered is False and found == "<absent>":
        return []  # a Go bool with omitempty (PriorityClass.globalDefault): false is not written back
    return [] if rendered == found else [f"{path}: rendered {rendered!r}, live {found!r}"]


def test_helm_install_deploys_the_release(installed: str) -> None:
    assert f"NAME: {RELEASE}" in installed
    assert "STATUS: deployed" in installed
    assert "REVISION: 1" in installed
    assert "kubectl jobflow ui -A" in installed  # NOTES.txt


def test_every_rendered_object_exists_as_rendered(installed: str, kubeconfig: Path) -> None:
    rendered = release_manifest(kubeconfig)
    # What `helm template` renders with the same values, but the Namespace (for `helm template` alone).
    expected = sorted(key(d) for d in helm_template() if d["kind"] != "Namespace")
    assert sorted(key(d) for d in rendered) == expected
    report = [f"{show(key(d))}: {line}" for d in rendered for line in missing("", d, live(kubeconfig, d))]
    assert report == [], "\n".join(report)


def test_the_release_does_not_own_the_namespace_it_was_installed_into(installed: str, kubeconfig: Path) -> None:
    """--create-namespace made it; the chart's Namespace is for `helm template` alone."""
    assert "Namespace" not in {d["kind"] for d in release_manifest(kubeconfig)}
    namespace = yaml.safe_load(kubectl(kubeconfig, "get", "namespace", NAMESPACE, "-o", "yaml"))
    assert "meta.helm.sh/release-name" not in (namespace["metadata"].get("annotations") or {})


def test_the_release_record_fits_in_its_secret(installed: str, kubeconfig: Path) -> None:
    """Helm keeps each revision (the chart with its CRD copies, and the manifest) in one Secret, whose
    data the API server caps at 1 MiB."""
    secret = yaml.safe_load(
        kubectl(kubeconfig, "-n", NAMESPACE, "get", "secret", f"sh.helm.release.v1.{RELEASE}.v1", "-o", "yaml")
    )
    size = len(secret["data"]["release"])
    record("release-secret-bytes.txt", f"{size}\n")
    assert size < 1024 * 1024 * 3 // 4  # a quarter of the limit left for growth


def test_the_crds_are_established_and_kept_on_uninstall(installed: str, kubeconfig: Path) -> None:
    names = chart_crds()
    assert {"jobflows.flow.volcano.sh", "jobtemplates.flow.volcano.sh"} <= set(names)
    for name in names:
        crd = yaml.safe_load(kubectl(kubeconfig, "get", "crd", name, "-o", "yaml"))
        conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conditions["Established"] == "True"
        assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        assert crd["metadata"]["annotations"]["meta.helm.sh/release-name"] == RELEASE


# --- the controller under the chart's ServiceAccount (test_e2e_deploy.py's tests) ------------------


@pytest.fixture(scope="module")
def sa_kubeconfig(control_plane: ControlPlane, clientset: Clientset, installed: str) -> Iterator[Path]:
    """A kubeconfig holding only a token of the ServiceAccount `helm install` made: its RBAC is the
    chart's, nothing applied from manifests/."""
    token_request = clientset.rest.request(
        "POST",
        SERVICE_ACCOUNTS.path(NAMESPACE, "jobflow-controller", "token"),
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
    )
    path = service_account_kubeconfig(control_plane, token_request["status"]["token"])
    yield path
    path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def controller(control_plane: ControlPlane, sa_kubeconfig: Path) -> Iterator[ControllerProcess]:
    """The controller with the chart's Lease, `jobflow-controller` in volcano-system, which the chart's
    Role grants (test_e2e_deploy.py grants a Lease per run instead)."""
    with controller_process(sa_kubeconfig, control_plane.root, "jobflow-controller") as proc:

        def ready() -> bool:
            proc.check_alive()
            return proc.http_get("/readyz")[0] == 200

        wait_for(ready, timeout=30, interval=0.1, what="the controller's /readyz")
        yield proc


# --- helm upgrade ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def upgraded(kubeconfig: Path, clientset: Clientset, pipeline: Pipeline) -> str:
    """`helm upgrade` with workerThreads 5 and the webhook on, its certificate a Secret we name."""
    ca = TinyCA("jobflow-e2e-helm-ca")
    service = f"{RELEASE}-webhook.{NAMESPACE}.svc"
    pair = ca.issue(service, server=True, dns_names=(service,))
    directory = Path(kubeconfig).parent
    (directory / "tls.crt").write_bytes(pair.cert_pem)
    (directory / "tls.key").write_bytes(pair.key_pem)
    kubectl(
        kubeconfig, "-n", NAMESPACE, "create", "secret", "tls", "jobflow-e2e-webhook-tls",
        f"--cert={directory / 'tls.crt'}", f"--key={directory / 'tls.key'}",
    )  # fmt: skip
    out = helm(
        "upgrade", RELEASE, str(CHART), "-n", NAMESPACE,
        "--set", "workerThreads=5",
        "--set", "webhook.enabled=true",
        "--set", "webhook.certificate.secretName=jobflow-e2e-webhook-tls",
        "--set", f"webhook.certificate.caBundle={base64.b64encode(ca.cert_pem).decode()}",
        kubeconfig=kubeconfig,
    ).stdout  # fmt: skip
    record("upgrade.txt", out)
    return out


def deployment_args(kubeconfig: Path) -> list[str]:
    deployment = yaml.safe_load(kubectl(kubeconfig, "-n", NAMESPACE, "get", "deployment", RELEASE, "-o", "yaml"))
    return list(deployment["spec"]["template"]["spec"]["containers"][0]["args"])


def test_helm_upgrade_makes_revision_2(upgraded: str) -> None:
    assert "STATUS: deployed" in upgraded
    assert "REVISION: 2" in upgraded


def test_helm_upgrade_passes_the_new_worker_threads_and_the_webhooks_flags(upgraded: str, kubeconfig: Path) -> None:
    args = deployment_args(kubeconfig)
    assert "--worker-threads=5" in args
    assert args[-4:] == [
        "--enable-webhook=true",
        "--webhook-address=:8443",
        "--webhook-tls-cert-file=/etc/jobflow-controller/webhook/tls.crt",
        "--webhook-tls-private-key-file=/etc/jobflow-controller/webhook/tls.key",
    ]


def test_after_the_upgrade_every_rendered_object_exists_as_rendered(upgraded: str, kubeconfig: Path) -> None:
    rendered = release_manifest(kubeconfig)
    assert {"ValidatingWebhookConfiguration"} <= {d["kind"] for d in rendered}
    report = [f"{show(key(d))}: {line}" for d in rendered for line in missing("", d, live(kubeconfig, d))]
    assert report == [], "\n".join(report)


def test_after_the_upgrade_the_api_server_sends_jobflows_to_the_webhook(
    upgraded: str, clientset: Clientset, pipeline: Pipeline
) -> None:
    """No pod runs here (no kubelet), so the webhook has no endpoint, and with failurePolicy Fail the
    API server refuses the JobFlow saying so: the registration is live."""
    flow = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "after-upgrade"},
        "spec": {"flows": [{"name": "a"}]},
    }
    with pytest.raises(ApiStatusError) as refused:
        clientset.resource(JOB_FLOWS, pipeline.namespace).create(flow)
    assert 'failed calling webhook "validatejobflow.volcano.sh"' in str(refused.value)


# --- helm uninstall --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def uninstalled(upgraded: str, kubeconfig: Path) -> str:
    out = helm("uninstall", RELEASE, "-n", NAMESPACE, "--wait", kubeconfig=kubeconfig).stdout
    record("uninstall.txt", out)
    return out


def test_helm_uninstall_says_it_keeps_the_crds(uninstalled: str) -> None:
    assert "These resources were kept due to the resource policy:" in uninstalled
    for name in chart_crds():
        assert f"[CustomResourceDefinition] {name}" in uninstalled


def test_helm_uninstall_removes_the_controllers_objects(uninstalled: str, kubeconfig: Path) -> None:
    left = kubectl(
        kubeconfig, "get", "deployment,service,serviceaccount,role,rolebinding,poddisruptionbudget",
        "-n", NAMESPACE, "-l", "app.kubernetes.io/instance=" + RELEASE, "-o", "name",
    )  # fmt: skip
    assert left.strip() == ""
    for cluster_scoped in (
        "clusterrole/jobflow-controller",
        "clusterrolebinding/jobflow-controller",
        "priorityclass/jobflow-controller",
        "validatingwebhookconfiguration/jobflow-controller-validate-jobflows",
    ):
        assert kubectl(kubeconfig, "get", cluster_scoped, "--ignore-not-found", "-o", "name").strip() == ""


def test_helm_uninstall_leaves_the_crds_and_the_users_jobflows(
    uninstalled: str, clientset: Clientset, pipeline: Pipeline
) -> None:
    job_flow = clientset.resource(JOB_FLOWS, pipeline.namespace).get(pipeline.name)
    assert job_flow["status"]["state"]["phase"] == "Succeed"
    assert sorted(t["metadata"]["name"] for t in clientset.resource(JOB_TEMPLATES, pipeline.namespace).list()) == [
        "a",
        "b",
    ]
    # The webhook's registration went with the release: JobFlows can be created again.
    created = clientset.resource(JOB_FLOWS, pipeline.namespace).create(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "after-uninstall"},
            "spec": {"flows": [{"name": "a"}]},
        }
    )
    assert created["metadata"]["name"] == "after-uninstall"
    with pytest.raises(NotFoundError):
        clientset.resource(JOB_FLOWS, pipeline.namespace).get("after-upgrade")
