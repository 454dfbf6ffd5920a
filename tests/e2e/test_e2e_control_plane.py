"""The local control plane is a real one: CRDs, kubectl, garbage collection, tokens and RBAC."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

import pytest
import yaml
from e2e_helpers import wait_for

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.errors import ForbiddenError, NotFoundError
from jobflow_controller.kube.resources import Resource
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import EXAMPLES_DIR

CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False)
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")


@pytest.mark.parametrize(
    ("name", "short_names"),
    [
        ("jobflows.flow.volcano.sh", ["jf"]),
        ("jobtemplates.flow.volcano.sh", ["jt"]),
        ("jobs.batch.volcano.sh", ["vcjob", "vj"]),
    ],
)
def test_crd_is_established_with_its_short_names(clientset: Clientset, name: str, short_names: list[str]) -> None:
    crd = clientset.resource(CRDS).get(name)
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions["Established"] == "True"
    assert crd["spec"]["names"]["shortNames"] == short_names


def test_kubectl_get_jf_prints_status_and_age_columns(namespace: str, kubectl_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    manifest = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "columns", "namespace": namespace},
        "spec": {"flows": [{"name": "a"}]},
    }
    path = tmp_path / "jf.json"
    path.write_text(json.dumps(manifest))
    kubectl_run("apply", "-f", str(path))
    header = kubectl_run("get", "jf", "-n", namespace).splitlines()[0].split()
    assert header == ["NAME", "STATUS", "AGE"]


def test_example_manifests_apply_cleanly(kubectl_run) -> None:  # type: ignore[no-untyped-def]
    """A server-side dry run: every object passes the real API server's schema and CEL rules."""
    out = kubectl_run("apply", "--dry-run=server", "-k", str(EXAMPLES_DIR))
    docs = [
        d
        for f in sorted(EXAMPLES_DIR.glob("*.yaml"))
        if f.name != "kustomization.yaml"
        for d in yaml.safe_load_all(f.read_text())
        if d
    ]
    assert len(out.strip().splitlines()) == len(docs)


def test_owned_object_is_garbage_collected_when_its_owner_is_deleted(clientset: Clientset, namespace: str) -> None:
    configmaps = clientset.resource(CONFIG_MAPS, namespace)
    owner = configmaps.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    configmaps.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dependent", "ownerReferences": [ref]}}
    )
    configmaps.delete("owner")

    def gone() -> bool:
        try:
            configmaps.get("dependent")
        except NotFoundError:
            return True
        return False

    wait_for(gone, timeout=60, what="the garbage collector to delete the dependent")


def test_token_request_token_is_bound_by_rbac(
    control_plane: ControlPlane, clientset: Clientset, namespace: str
) -> None:
    sa_name = "reader"
    clientset.resource(SERVICE_ACCOUNTS, namespace).create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa_name}}
    )
    clientset.resource(ROLES, namespace).create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "read-configmaps"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}],
        }
    )
    clientset.resource(ROLE_BINDINGS, namespace).create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "read-configmaps"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-configmaps"},
            "subjects": [{"kind": "ServiceAccount", "name": sa_name, "namespace": namespace}],
        }
    )
    token_request = clientset.rest.request(
        "POST",
        SERVICE_ACCOUNTS.path(namespace, sa_name, "token"),
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}},
    )
    token = token_request["status"]["token"]
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == f"system:serviceaccount:{namespace}:{sa_name}"

    kubeconfig = Path(control_plane.root) / f"sa-{uuid.uuid4().hex[:6]}.kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": control_plane.server,
                            "certificate-authority": str(control_plane.ca_path),
                        },
                    }
                ],
                "users": [{"name": "sa", "user": {"token": token}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "sa"}}],
                "current-context": "c",
            }
        )
    )
    as_sa = Clientset(RestClient(build_config(str(kubeconfig))))
    assert as_sa.resource(CONFIG_MAPS, namespace).list() is not None
    with pytest.raises(ForbiddenError):
        as_sa.resource(CONFIG_MAPS, namespace).create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
        )
    with pytest.raises(ForbiddenError):
        as_sa.resource(SERVICE_ACCOUNTS, namespace).list()
