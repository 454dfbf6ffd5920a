"""The deployment manifests on the real control plane: the kustomization applies (server-side dry run), the
pod template passes the `restricted` Pod Security Standard, and the real controller process, holding only a
TokenRequest token of the manifests' ServiceAccount, runs a two-step JobFlow to Succeed without a single
Forbidden, while the ServiceAccount is refused what its roles do not grant.

The session's Volcano job simulator (admin credentials; one per session, two would race) stands in for Volcano's job
controller; everything else is the real API server enforcing real RBAC. Every controller run takes its own
Lease name, granted by a Role derived from manifests/role.yaml, so runs never wait on each other's lease.
"""

from __future__ import annotations

import contextlib
import copy
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
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
from jobflow_controller.kube.errors import ForbiddenError, NotFoundError
from jobflow_controller.kube.resources import (
    COMMANDS,
    CRON_JOB_FLOWS,
    EVENTS,
    JOB_FLOWS,
    JOB_TEMPLATES,
    JOBS,
    LEASES,
    Resource,
)
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import REPO_ROOT, kubectl
from jobflow_controller.local.phase_script import PHASES_ANNOTATION
from jobflow_controller.local.processes import free_port, stop_process_group
from jobflow_controller.local.resources import NAMESPACES
from jobflow_controller.local.simulator import JobSimulator

MANIFESTS = REPO_ROOT / "manifests"
CONTROLLER_BIN = Path(sys.executable).parent / "jobflow-controller"
NAMESPACE = "volcano-system"
SERVICE_ACCOUNT = "jobflow-controller"
PHASES = "Pending:0.2s,Running:0.3s,Completed"
#: What the controller may take to shut down (drain, release the lease, flush events) before we call it hung.
SHUTDOWN_TIMEOUT = 50.0

SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
PODS = Resource("", "v1", "pods", "Pod")
SECRETS = Resource("", "v1", "secrets", "Secret")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")

#: The manifests that give the controller its identity and permissions, applied for real.
RBAC_FILES = (
    "namespace.yaml",
    "serviceaccount.yaml",
    "clusterrole.yaml",
    "clusterrolebinding.yaml",
    "role.yaml",
    "rolebinding.yaml",
)


def manifest(file_name: str) -> dict[str, Any]:
    (document,) = [d for d in yaml.safe_load_all((MANIFESTS / file_name).read_text(encoding="utf-8")) if d]
    return document


def suffix() -> str:
    return uuid.uuid4().hex[:8]


# --- the kustomization and the pod template -------------------------------------------------------


def test_server_side_dry_run_of_the_kustomization_succeeds(kubectl_run) -> None:  # type: ignore[no-untyped-def]
    # A dry run creates nothing, so the namespaced objects of a dry-run Namespace would land in a namespace
    # that does not exist: create the Namespace for real (a cluster running Volcano has it), dry-run the rest.
    kubectl_run("apply", "-f", str(MANIFESTS / "namespace.yaml"))
    rendered = [d for d in yaml.safe_load_all(kubectl_run("kustomize", str(MANIFESTS))) if d]

    out = kubectl_run("apply", "--dry-run=server", "-k", str(MANIFESTS))

    lines = out.strip().splitlines()
    assert len(lines) == len(rendered), out
    assert all(line.endswith("(server dry run)") for line in lines), out


def restricted_namespace(clientset: Clientset, namespace: str) -> None:
    clientset.resource(NAMESPACES).patch(
        namespace,
        {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}},
    )


def pod_from(template: dict[str, Any], namespace: str) -> dict[str, Any]:
    pod = copy.deepcopy(template)
    pod["metadata"] = {**pod.get("metadata", {}), "name": f"probe-{suffix()}", "namespace": namespace}
    return {"apiVersion": "v1", "kind": "Pod", **pod}


def shipped_priority_class(kubectl_run) -> None:  # type: ignore[no-untyped-def]
    """The pod template names the PriorityClass of manifests/priorityclass.yaml: a pod needs it to exist."""
    kubectl_run("apply", "-f", str(MANIFESTS / "priorityclass.yaml"))


def test_deployment_pod_template_is_admitted_under_the_restricted_pod_security_standard(
    clientset: Clientset, namespace: str, kubectl_run
) -> None:  # type: ignore[no-untyped-def]
    shipped_priority_class(kubectl_run)
    restricted_namespace(clientset, namespace)
    pod = pod_from(manifest("deployment.yaml")["spec"]["template"], namespace)

    created = clientset.resource(PODS, namespace).create(pod, dry_run=True)

    assert created["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True


def test_restricted_namespace_refuses_a_pod_without_the_security_context(
    clientset: Clientset, namespace: str, kubectl_run
) -> None:  # type: ignore[no-untyped-def]
    """The control for the test above: the namespace label does enforce something."""
    shipped_priority_class(kubectl_run)
    restricted_namespace(clientset, namespace)
    template = copy.deepcopy(manifest("deployment.yaml")["spec"]["template"])
    del template["spec"]["securityContext"]
    del template["spec"]["containers"][0]["securityContext"]

    with pytest.raises(ForbiddenError):
        clientset.resource(PODS, namespace).create(pod_from(template, namespace), dry_run=True)


# --- the controller under its ServiceAccount ------------------------------------------------------


@dataclass
class ControllerProcess:
    """The real `jobflow-controller` command, run with the ServiceAccount's kubeconfig."""

    popen: subprocess.Popen[bytes]
    log_path: Path
    healthz_port: int
    lease_name: str

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def check_alive(self) -> None:
        if self.popen.poll() is not None:
            raise AssertionError(f"jobflow-controller exited with {self.popen.returncode}:\n{self.log()[-4000:]}")

    def http_get(self, path: str) -> tuple[int, str]:
        url = f"http://127.0.0.1:{self.healthz_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()
        except OSError as err:
            return 0, str(err)

    def forbidden_lines(self) -> list[str]:
        return [line for line in self.log().splitlines() if "forbidden" in line.lower()]


@contextlib.contextmanager
def lease_grant(clientset: Clientset, lease_name: str) -> Iterator[None]:
    """manifests/role.yaml and rolebinding.yaml, renamed for one more Lease name, as an operator who passes
    --leader-elect-resource-name would have to edit them."""
    role = manifest("role.yaml")
    binding = manifest("rolebinding.yaml")
    name = f"{role['metadata']['name']}-{lease_name}"
    role["metadata"]["name"] = name
    for rule in role["rules"]:
        if "resourceNames" in rule:
            rule["resourceNames"] = [lease_name]
    binding["metadata"]["name"] = name
    binding["roleRef"]["name"] = name
    roles = clientset.resource(ROLES, NAMESPACE)
    bindings = clientset.resource(ROLE_BINDINGS, NAMESPACE)
    roles.create(role)
    bindings.create(binding)
    try:
        yield
    finally:
        with contextlib.suppress(NotFoundError):
            bindings.delete(name)
        with contextlib.suppress(NotFoundError):
            roles.delete(name)


@contextlib.contextmanager
def controller_process(kubeconfig: Path, log_dir: Path, lease_name: str) -> Iterator[ControllerProcess]:
    healthz_port, metrics_port = free_port(), free_port()
    log_path = log_dir / f"jobflow-controller-{lease_name}.log"
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}  # the SA kubeconfig and nothing else
    with log_path.open("wb") as log:
        popen = subprocess.Popen(
            [
                str(CONTROLLER_BIN),
                f"--kubeconfig={kubeconfig}",
                "--leader-elect=true",
                f"--leader-elect-resource-namespace={NAMESPACE}",
                f"--leader-elect-resource-name={lease_name}",
                "--enable-healthz=true",
                f"--healthz-address=127.0.0.1:{healthz_port}",
                "--enable-metrics=true",
                f"--listen-address=127.0.0.1:{metrics_port}",
                "-v=4",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    process = ControllerProcess(popen, log_path, healthz_port, lease_name)
    try:
        yield process
    finally:
        stop_process_group(popen.pid, grace=SHUTDOWN_TIMEOUT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=5)


def lease_holder(clientset: Clientset, lease_name: str) -> str:
    try:
        lease = clientset.resource(LEASES, NAMESPACE).get(lease_name)
    except NotFoundError:
        return ""
    return str(lease.get("spec", {}).get("holderIdentity") or "")


def wait_until_leading(clientset: Clientset, process: ControllerProcess) -> str:
    def holder() -> str:
        process.check_alive()
        return lease_holder(clientset, process.lease_name)

    return str(wait_for(holder, timeout=30, interval=0.1, what=f"the controller to take lease {process.lease_name}"))


def service_account_kubeconfig(control_plane: ControlPlane, token: str) -> Path:
    path = Path(control_plane.root) / f"sa-{SERVICE_ACCOUNT}-{suffix()}.kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "local",
                        "cluster": {
                            "server": control_plane.server,
                            "certificate-authority": str(control_plane.ca_path),
                        },
                    }
                ],
                "users": [{"name": SERVICE_ACCOUNT, "user": {"token": token}}],
                "contexts": [{"name": "local", "context": {"cluster": "local", "user": SERVICE_ACCOUNT}}],
                "current-context": "local",
            }
        )
    )
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def sa_kubeconfig(control_plane: ControlPlane, clientset: Clientset) -> Iterator[Path]:
    """The manifests' Namespace, ServiceAccount and RBAC applied for real (they may exist already: apply is
    idempotent, and they are left for other tests), and a kubeconfig holding only a token of the account."""
    for file_name in RBAC_FILES:
        kubectl(control_plane.kubeconfig_path, "apply", "-f", str(MANIFESTS / file_name))
    token_request = clientset.rest.request(
        "POST",
        SERVICE_ACCOUNTS.path(NAMESPACE, SERVICE_ACCOUNT, "token"),
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
    )
    path = service_account_kubeconfig(control_plane, token_request["status"]["token"])
    yield path
    path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def as_service_account(sa_kubeconfig: Path) -> Iterator[Clientset]:
    rest = RestClient(build_config(str(sa_kubeconfig)), user_agent="jobflow-e2e-sa")
    yield Clientset(rest)
    rest.close()


@pytest.fixture(scope="module")
def flow_namespace(clientset: Clientset, control_plane: ControlPlane) -> Iterator[str]:
    name = f"e2e-deploy-{suffix()}"
    clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(NotFoundError):
        clientset.resource(NAMESPACES).delete(name)


@pytest.fixture(scope="module")
def controller(control_plane: ControlPlane, clientset: Clientset, sa_kubeconfig: Path) -> Iterator[ControllerProcess]:
    lease_name = f"jobflow-controller-e2e-{suffix()}"
    with lease_grant(clientset, lease_name), controller_process(sa_kubeconfig, control_plane.root, lease_name) as proc:

        def ready() -> bool:
            proc.check_alive()
            return proc.http_get("/readyz")[0] == 200

        wait_for(ready, timeout=30, interval=0.1, what="the controller's /readyz")
        yield proc


def job_template(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {
            "minAvailable": 1,
            "schedulerName": "volcano",
            "tasks": [
                {
                    "name": "main",
                    "replicas": 1,
                    "template": {
                        "metadata": {"annotations": {PHASES_ANNOTATION: PHASES}},
                        "spec": {
                            "containers": [{"name": "main", "image": "busybox:1.36", "command": ["true"]}],
                            "restartPolicy": "Never",
                        },
                    },
                }
            ],
        },
    }


@dataclass(frozen=True)
class Pipeline:
    namespace: str
    name: str
    job_names: tuple[str, ...]


@pytest.fixture(scope="module")
def pipeline(
    clientset: Clientset, flow_namespace: str, controller: ControllerProcess, simulator: JobSimulator
) -> Pipeline:
    """JobTemplates a and b and the JobFlow a → b, with jobRetainPolicy delete so the Jobs are deleted too."""
    for name in ("a", "b"):
        clientset.resource(JOB_TEMPLATES, flow_namespace).create(job_template(name))
    clientset.resource(JOB_FLOWS, flow_namespace).create(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "pipeline"},
            "spec": {
                "jobRetainPolicy": "delete",
                "flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}],
            },
        }
    )
    return Pipeline(flow_namespace, "pipeline", ("pipeline-a", "pipeline-b"))


def phase_of(clientset: Clientset, pipeline: Pipeline) -> str:
    job_flow = clientset.resource(JOB_FLOWS, pipeline.namespace).get(pipeline.name)
    return str(job_flow.get("status", {}).get("state", {}).get("phase") or "")


def wait_for_succeed(clientset: Clientset, pipeline: Pipeline, controller: ControllerProcess) -> None:
    def succeeded() -> bool:
        controller.check_alive()
        return phase_of(clientset, pipeline) == "Succeed"

    wait_for(succeeded, timeout=60, interval=0.1, what=f"JobFlow {pipeline.name} to reach Succeed")


def wait_for_jobs_deleted(clientset: Clientset, pipeline: Pipeline, controller: ControllerProcess) -> None:
    def gone() -> bool:
        controller.check_alive()
        return not clientset.resource(JOBS, pipeline.namespace).list()

    wait_for(gone, timeout=60, interval=0.1, what="the Succeeded flow's Jobs to be deleted")


def test_controller_under_its_service_account_becomes_ready(controller: ControllerProcess) -> None:
    assert controller.http_get("/readyz") == (200, "ok")


def test_controller_under_its_service_account_is_live(controller: ControllerProcess) -> None:
    assert controller.http_get("/healthz") == (200, "ok")
    assert controller.http_get("/livez") == (200, "ok")  # the Deployment's liveness probe


def test_controller_under_its_service_account_takes_its_lease(
    clientset: Clientset, controller: ControllerProcess
) -> None:
    holder = wait_until_leading(clientset, controller)
    assert holder.startswith(f"{os.uname().nodename}_")


def test_two_step_jobflow_succeeds_under_the_service_account(
    clientset: Clientset, pipeline: Pipeline, controller: ControllerProcess
) -> None:
    wait_for_succeed(clientset, pipeline, controller)

    status = clientset.resource(JOB_FLOWS, pipeline.namespace).get(pipeline.name)["status"]
    assert sorted(status["completedJobs"]) == sorted(pipeline.job_names)


def test_jobs_of_the_succeeded_flow_are_deleted_under_the_service_account(
    clientset: Clientset, pipeline: Pipeline, controller: ControllerProcess
) -> None:
    wait_for_succeed(clientset, pipeline, controller)
    wait_for_jobs_deleted(clientset, pipeline, controller)


def test_created_events_are_recorded_under_the_service_account(
    clientset: Clientset, pipeline: Pipeline, controller: ControllerProcess
) -> None:
    wait_for_succeed(clientset, pipeline, controller)

    def created_messages() -> list[str]:
        events = clientset.resource(EVENTS, pipeline.namespace).list()
        return sorted(
            e["message"]
            for e in events
            if e["involvedObject"].get("kind") == "JobFlow" and e["reason"] == "Created" and e["type"] == "Normal"
        )

    expected = [f"create a job named {name}!" for name in sorted(pipeline.job_names)]
    wait_for(lambda: created_messages() == expected, timeout=15, what="the two Created events")


def test_controller_log_has_no_forbidden_line(
    clientset: Clientset, pipeline: Pipeline, controller: ControllerProcess
) -> None:
    wait_for_succeed(clientset, pipeline, controller)
    wait_for_jobs_deleted(clientset, pipeline, controller)

    assert controller.forbidden_lines() == []


def test_service_account_can_get_what_a_conflict_retry_reads_again(
    as_service_account: Clientset, clientset: Clientset, pipeline: Pipeline, controller: ControllerProcess
) -> None:
    """RetryOnConflict re-reads the JobFlow or JobTemplate by GET, and a create answered
    AlreadyExists GETs the Job: without `get` a conflict would turn into a Forbidden failure."""
    wait_for_succeed(clientset, pipeline, controller)
    as_service_account.resource(JOB_FLOWS, pipeline.namespace).get(pipeline.name)
    for template in clientset.resource(JOB_TEMPLATES, pipeline.namespace).list():
        as_service_account.resource(JOB_TEMPLATES, pipeline.namespace).get(template["metadata"]["name"])
    # The flow's Jobs may be deleted already (jobRetainPolicy: delete); RBAC answers before the
    # lookup, so NotFound rather than Forbidden shows the grant.
    with pytest.raises(NotFoundError):
        as_service_account.resource(JOBS, pipeline.namespace).get(f"absent-{suffix()}")


def test_service_account_may_delete_jobflows_but_not_templates_or_cronjobflows(
    as_service_account: Clientset, clientset: Clientset, pipeline: Pipeline
) -> None:
    """The CronJobFlow controller deletes runs (history limits, Replace; docs/cron.md), so `delete` of
    JobFlows is granted; RBAC answers before the lookup, so NotFound rather than Forbidden shows it.
    JobTemplates and CronJobFlows themselves are never deleted."""
    with pytest.raises(NotFoundError):
        as_service_account.resource(JOB_FLOWS, pipeline.namespace).delete(f"absent-{suffix()}")
    template = clientset.resource(JOB_TEMPLATES, pipeline.namespace).list()[0]["metadata"]["name"]
    with pytest.raises(ForbiddenError):
        as_service_account.resource(JOB_TEMPLATES, pipeline.namespace).delete(template)
    with pytest.raises(ForbiddenError):
        as_service_account.resource(CRON_JOB_FLOWS, pipeline.namespace).delete(f"absent-{suffix()}")


def test_service_account_cannot_update_a_jobflows_spec(as_service_account: Clientset, pipeline: Pipeline) -> None:
    # It may PATCH a JobFlow since runs from a template (docs/templates.md: the template label on a run
    # whose creator left it out), but never PUT one.
    client = as_service_account.resource(JOB_FLOWS, pipeline.namespace)
    current = client.get(pipeline.name)
    with pytest.raises(ForbiddenError):
        client.update({**current, "spec": {**current["spec"], "jobRetainPolicy": "retain"}})


def test_service_account_cannot_get_a_lease_it_is_not_granted(as_service_account: Clientset) -> None:
    with pytest.raises(ForbiddenError):
        as_service_account.resource(LEASES, NAMESPACE).get(f"not-ours-{suffix()}")


def test_service_account_cannot_create_a_lease_outside_volcano_system(
    as_service_account: Clientset, flow_namespace: str
) -> None:
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "jobflow-controller"}}
    with pytest.raises(ForbiddenError):
        as_service_account.resource(LEASES, flow_namespace).create(lease)


def test_service_account_may_list_pods_for_probes_but_not_get_or_create_them(
    as_service_account: Clientset, pipeline: Pipeline
) -> None:
    """dependsOn.probe's Pod informer lists and watches pods (docs/probe.md); nothing more is granted."""
    as_service_account.resource(PODS, pipeline.namespace).list()
    with pytest.raises(ForbiddenError):
        as_service_account.resource(PODS, pipeline.namespace).get(f"absent-{suffix()}")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"not-ours-{suffix()}"},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }
    with pytest.raises(ForbiddenError):
        as_service_account.resource(PODS, pipeline.namespace).create(pod, dry_run=True)


def test_service_account_may_create_a_command_and_nothing_else_with_commands(
    as_service_account: Clientset, pipeline: Pipeline
) -> None:
    """Terminating a Job is a Volcano Command (docs/lifecycle.md); Volcano deletes it, the controller never reads it."""
    command = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"generateName": "absent-terminatejob-"},
        "action": "TerminateJob",
        "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "absent", "uid": "u"},
    }
    commands = as_service_account.resource(COMMANDS, pipeline.namespace)
    commands.create(command, dry_run=True)
    for forbidden in (commands.list, lambda: commands.get("absent"), lambda: commands.delete("absent")):
        with pytest.raises(ForbiddenError):
            forbidden()


def test_service_account_cannot_read_secrets(as_service_account: Clientset, pipeline: Pipeline) -> None:
    """Nothing the controllers do reads a Secret, so the grant has none."""
    with pytest.raises(ForbiddenError):
        as_service_account.resource(SECRETS, pipeline.namespace).list()


@dataclass(frozen=True)
class Shutdown:
    """What one controller run left behind after leading and being sent SIGTERM."""

    exit_code: int
    holder_before: str
    holder_after: str
    forbidden_lines: list[str]
    log_tail: str


@pytest.fixture(scope="module")
def shutdown(control_plane: ControlPlane, clientset: Clientset, sa_kubeconfig: Path) -> Shutdown:
    lease_name = f"jobflow-controller-e2e-{suffix()}"
    with lease_grant(clientset, lease_name), controller_process(sa_kubeconfig, control_plane.root, lease_name) as proc:
        holder_before = wait_until_leading(clientset, proc)
        proc.popen.send_signal(signal.SIGTERM)
        exit_code = proc.popen.wait(timeout=SHUTDOWN_TIMEOUT)
        return Shutdown(
            exit_code=exit_code,
            holder_before=holder_before,
            holder_after=lease_holder(clientset, lease_name),
            forbidden_lines=proc.forbidden_lines(),
            log_tail=proc.log()[-4000:],
        )


def test_controller_exits_0_on_sigterm(shutdown: Shutdown) -> None:
    assert shutdown.exit_code == 0, shutdown.log_tail


def test_controller_releases_its_lease_on_sigterm(shutdown: Shutdown) -> None:
    assert shutdown.holder_before != ""
    assert shutdown.holder_after == ""


def test_controller_shutdown_has_no_forbidden_line(shutdown: Shutdown) -> None:
    assert shutdown.forbidden_lines == []
