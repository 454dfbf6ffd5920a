"""`kubectl jobflow suspend|resume|stop|terminate|retry`, run through kubectl, against a real API server.

Each verb's one patch lands on the stored JobFlow (what the controller then does is
test_e2e_jobflow_*'s); `--dry-run` changes nothing; errors are one line and exit 1, a user who may
read but not patch JobFlows included (a ServiceAccount with `get` only, by token).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.resources import Resource
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import kubectl_path, plugin_env

REQUEST = "flow.volcano.sh/retry-request"
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")


def pipeline(namespace: str) -> dict[str, Any]:
    # No controller runs here: the JobFlow only has to be stored (its templates need not exist).
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "pipe", "namespace": namespace, "annotations": {"team": "ml"}},
        "spec": {
            "jobRetainPolicy": "retain",
            "flows": [{"name": "prep"}, {"name": "train", "dependsOn": {"targets": ["prep"]}}],
        },
    }


def plugin(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [kubectl_path(), "jobflow", *args, f"--kubeconfig={kubeconfig}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=plugin_env(),
        check=False,
    )


def test_each_verb_patches_the_stored_jobflow_and_says_so(
    kubeconfig: Path, clientset: Clientset, namespace: str
) -> None:
    clientset.job_flows(namespace).create(pipeline(namespace))

    def spec() -> dict[str, Any]:
        return dict(clientset.job_flows(namespace).get("pipe")["spec"])

    for verb, done, field, value in [
        ("suspend", "suspended", "suspend", True),
        ("resume", "resumed", "suspend", False),
        ("stop", "stopped", "shutdown", "Stop"),
        ("terminate", "terminated", "shutdown", "Terminate"),
    ]:
        result = plugin(kubeconfig, verb, "pipe", "-n", namespace)
        assert (result.returncode, result.stdout, result.stderr) == (0, f"jobflow.flow.volcano.sh/pipe {done}\n", "")
        assert spec()[field] == value
    # The shutdown is one way: a stop after the terminate is refused before anything is sent.
    result = plugin(kubeconfig, "stop", "pipe", "-n", namespace)
    assert (result.returncode, result.stderr) == (
        1,
        "error: jobflow.flow.volcano.sh/pipe is already shut down with shutdown: Terminate, which cannot be undone\n",
    )


def test_retry_writes_a_fresh_request_naming_the_flows(kubeconfig: Path, clientset: Clientset, namespace: str) -> None:
    clientset.job_flows(namespace).create(pipeline(namespace))
    requests = []
    for _ in range(2):
        result = plugin(kubeconfig, "retry", "pipe", "-n", namespace, "--flow", "train")
        assert result.returncode == 0, result.stderr
        stored = clientset.job_flows(namespace).get("pipe")["metadata"]["annotations"][REQUEST]
        request = json.loads(stored)
        assert request["flows"] == ["train"]
        assert result.stdout == f"jobflow.flow.volcano.sh/pipe retry requested (id {request['id']}: train)\n"
        requests.append(request["id"])
    assert requests[0] != requests[1]


def test_dry_run_prints_the_patch_and_changes_nothing(kubeconfig: Path, clientset: Clientset, namespace: str) -> None:
    before = clientset.job_flows(namespace).create(pipeline(namespace))["metadata"]["resourceVersion"]
    result = plugin(kubeconfig, "suspend", "pipe", "-n", namespace, "--dry-run")
    assert (result.returncode, result.stdout) == (0, '{"spec":{"suspend":true}}\n')
    # The printed patch is what plain kubectl would send.
    patched = subprocess.run(
        [
            kubectl_path(),
            f"--kubeconfig={kubeconfig}",
            "patch",
            "-n",
            namespace,
            "jobflow/pipe",
            "--type=merge",
            "--dry-run=server",
            "-o",
            "json",
            "-p",
            result.stdout,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(patched.stdout)["spec"]["suspend"] is True
    assert clientset.job_flows(namespace).get("pipe")["metadata"]["resourceVersion"] == before


def test_a_missing_jobflow_is_one_line_and_exit_1(kubeconfig: Path, namespace: str) -> None:
    result = plugin(kubeconfig, "terminate", "nope", "-n", namespace)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f'error: jobflows.flow.volcano.sh "nope" not found in namespace "{namespace}"\n'


def test_an_unknown_flow_is_one_line_and_nothing_is_written(
    kubeconfig: Path, clientset: Clientset, namespace: str
) -> None:
    clientset.job_flows(namespace).create(pipeline(namespace))
    result = plugin(kubeconfig, "retry", "pipe", "-n", namespace, "--flow", "trian")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == 'error: no flow of jobflow.flow.volcano.sh/pipe is named "trian" (its flows: prep, train)\n'
    assert REQUEST not in clientset.job_flows(namespace).get("pipe")["metadata"]["annotations"]


def reader_kubeconfig(control_plane: ControlPlane, clientset: Clientset, namespace: str) -> Path:
    """A kubeconfig holding the token of a ServiceAccount that may get JobFlows in ``namespace`` and no more."""
    clientset.resource(SERVICE_ACCOUNTS, namespace).create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reader"}}
    )
    rule = {"apiGroups": ["flow.volcano.sh"], "resources": ["jobflows"], "verbs": ["get"]}
    clientset.resource(ROLES, namespace).create(
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "reader"}, "rules": [rule]}
    )
    clientset.resource(ROLE_BINDINGS, namespace).create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}],
        }
    )
    token = clientset.rest.request(
        "POST",
        SERVICE_ACCOUNTS.path(namespace, "reader", "token"),
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}},
    )["status"]["token"]
    path = Path(control_plane.root) / f"reader-{namespace}.kubeconfig"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "local",
                "cluster": {"server": control_plane.server, "certificate-authority": str(control_plane.ca_path)},
            }
        ],
        "users": [{"name": "reader", "user": {"token": token}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": "reader", "namespace": namespace}}],
        "current-context": "local",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def test_a_user_who_may_not_patch_gets_one_forbidden_line(
    control_plane: ControlPlane, clientset: Clientset, namespace: str
) -> None:
    clientset.job_flows(namespace).create(pipeline(namespace))
    kubeconfig = reader_kubeconfig(control_plane, clientset, namespace)
    try:
        result = plugin(kubeconfig, "suspend", "pipe")
    finally:
        kubeconfig.unlink(missing_ok=True)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        'error: forbidden: jobflows.flow.volcano.sh "pipe" is forbidden: User'
        f' "system:serviceaccount:{namespace}:reader" cannot patch resource "jobflows" in API group'
        f' "flow.volcano.sh" in the namespace "{namespace}"\n'
    )
    assert "suspend" not in clientset.job_flows(namespace).get("pipe")["spec"]
