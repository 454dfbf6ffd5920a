"""The deployment manifests: every manifest valid for Kubernetes 1.37, RBAC exactly what the controllers
call, the Deployment hardened and probed as specified, the kustomization complete, and the Dockerfile in
agreement with the Deployment."""

from __future__ import annotations

import ast
import importlib.util
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from crdgen import CRON_VALIDATION_PATCH_FILE, TEMPLATE_VALIDATION_PATCH_FILE, VALIDATION_PATCH_FILE

from jobflow_controller import __version__
from jobflow_controller.local.kubectl import kubectl_path
from jobflow_controller.manager import options as opts

ROOT = Path(__file__).resolve().parents[3]
MANIFESTS = ROOT / "manifests"
CRD_DIR = MANIFESTS / "crds"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
KUBERNETES_VERSION = "1.37"
NAMESPACE = "volcano-system"
NAME = "jobflow-controller"
UID = 65532
HEALTHZ_PORT = 11251
METRICS_PORT = 8081
#: How long the manager's shutdown gives the event broadcaster to flush (Manager._shutdown).
EVENT_FLUSH_SECONDS = 5.0

#: Kinds kubernetes-validate knows nothing of: the custom resources whose CRDs are in manifests/crds.
#: They are checked against their own CRD schemas in test_manifests_crds.py. (Volcano's Job CRD is not
#: shipped, and no manifest is a Job.)
CUSTOM_RESOURCE_KINDS = frozenset(
    {
        ("flow.volcano.sh/v1alpha1", "JobFlow"),
        ("flow.volcano.sh/v1alpha1", "JobTemplate"),
        ("flow.volcano.sh/v1alpha1", "CronJobFlow"),
        ("flow.volcano.sh/v1alpha1", "JobFlowTemplate"),
        ("flow.volcano.sh/v1alpha1", "JobFlowTrigger"),
    }
)

#: Kinds of other projects' CRDs the manifests use (the webhook's optional cert-manager component,
#: the Prometheus Operator's in monitoring/); kubernetes-validate has no schema for them either, and
#: this repository does not ship theirs.
THIRD_PARTY_KINDS = frozenset(
    {
        ("cert-manager.io/v1", "Issuer"),
        ("cert-manager.io/v1", "Certificate"),
        ("monitoring.coreos.com/v1", "PrometheusRule"),
        ("monitoring.coreos.com/v1", "ServiceMonitor"),
    }
)
UNVALIDATED_KINDS = CUSTOM_RESOURCE_KINDS | THIRD_PARTY_KINDS

# libyaml's loader when present: the CRDs are a quarter of a megabyte each.
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Grant = tuple[str, str, str, str | None]  # (apiGroup, resource, verb, resourceName or None)

#: What the controllers call, cluster-wide: informers list and watch, status updates, Job create and
#: delete (jobRetainPolicy: delete), the owner's finalizers for blockOwnerDeletion, events; and get,
#: for the fresh read after a status conflict and for telling who owns a Job whose name is taken.
EXPECTED_CLUSTER_GRANTS: frozenset[Grant] = frozenset(
    {
        ("flow.volcano.sh", "jobflows", "get", None),
        ("flow.volcano.sh", "jobtemplates", "get", None),
        ("batch.volcano.sh", "jobs", "get", None),
        ("flow.volcano.sh", "jobflows", "list", None),
        ("flow.volcano.sh", "jobflows", "watch", None),
        ("flow.volcano.sh", "jobtemplates", "list", None),
        ("flow.volcano.sh", "jobtemplates", "watch", None),
        ("flow.volcano.sh", "jobflows/status", "update", None),
        ("flow.volcano.sh", "jobtemplates/status", "update", None),
        ("flow.volcano.sh", "jobflows/finalizers", "update", None),
        # Runs from a template (docs/templates.md): the templates read, a run's label and stored spec patched.
        ("flow.volcano.sh", "jobflowtemplates", "get", None),
        ("flow.volcano.sh", "jobflowtemplates", "list", None),
        ("flow.volcano.sh", "jobflowtemplates", "watch", None),
        ("flow.volcano.sh", "jobflows", "patch", None),
        ("flow.volcano.sh", "jobflows/status", "patch", None),
        ("batch.volcano.sh", "jobs", "list", None),
        ("batch.volcano.sh", "jobs", "watch", None),
        ("batch.volcano.sh", "jobs", "create", None),
        ("batch.volcano.sh", "jobs", "delete", None),
        # Terminating a Job is a Volcano Command (docs/lifecycle.md): created, never read or deleted.
        ("bus.volcano.sh", "commands", "create", None),
        ("", "events", "create", None),
        ("", "events", "patch", None),
        # dependsOn.probe's Pod informer (docs/probe.md); a flow's results, its Job's pod listed by name
        # once it ended (docs/results.md).
        ("", "pods", "list", None),
        ("", "pods", "watch", None),
        # The CronJobFlow controller (docs/cron.md): its informer, a GET when the cache lags its own
        # status write, its status, the owner's finalizers, and creating and deleting its runs.
        ("flow.volcano.sh", "cronjobflows", "get", None),
        ("flow.volcano.sh", "cronjobflows", "list", None),
        ("flow.volcano.sh", "cronjobflows", "watch", None),
        ("flow.volcano.sh", "cronjobflows/status", "update", None),
        ("flow.volcano.sh", "cronjobflows/finalizers", "update", None),
        ("flow.volcano.sh", "jobflows", "create", None),
        ("flow.volcano.sh", "jobflows", "delete", None),
        # The JobFlowTrigger controller (docs/triggers.md): its informer, a GET before each firing,
        # its status, the owner's finalizers (runs are created and deleted as the CronJobFlow's).
        ("flow.volcano.sh", "jobflowtriggers", "get", None),
        ("flow.volcano.sh", "jobflowtriggers", "list", None),
        ("flow.volcano.sh", "jobflowtriggers", "watch", None),
        ("flow.volcano.sh", "jobflowtriggers/status", "update", None),
        ("flow.volcano.sh", "jobflowtriggers/finalizers", "update", None),
    }
)

#: Leader election, in the Lease's namespace: get and update of the one Lease, create of any (RBAC
#: cannot restrict a create by name).
EXPECTED_LEASE_GRANTS: frozenset[Grant] = frozenset(
    {
        ("coordination.k8s.io", "leases", "get", NAME),
        ("coordination.k8s.io", "leases", "update", NAME),
        ("coordination.k8s.io", "leases", "create", None),
    }
)


def is_kustomization(path: Path) -> bool:
    return path.name in ("kustomization.yaml", "kustomization.yml", "Kustomization")


def load_documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=LOADER) if d]


#: Files under manifests/ that are kustomize patches, not objects (test_manifests_crd_validation.py's).
PATCH_FILES = frozenset(
    {ROOT / VALIDATION_PATCH_FILE, ROOT / CRON_VALIDATION_PATCH_FILE, ROOT / TEMPLATE_VALIDATION_PATCH_FILE}
)


def manifest_files() -> list[Path]:
    """Every Kubernetes manifest under manifests/, in every subdirectory, kustomizations and patches aside."""
    paths = [*MANIFESTS.rglob("*.yaml"), *MANIFESTS.rglob("*.yml")]
    return sorted(p for p in paths if not is_kustomization(p) and p not in PATCH_FILES)


def all_documents() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.relative_to(MANIFESTS)}:{doc['kind']}/{doc['metadata']['name']}", doc)
        for path in manifest_files()
        for doc in load_documents(path)
    ]


ALL_DOCUMENTS = all_documents()
#: The deployment's own objects: the top-level files of manifests/ (not crds/, examples/, webhook/).
DEPLOY_DOCUMENTS = [
    doc for path in sorted(MANIFESTS.glob("*.yaml")) if not is_kustomization(path) for doc in load_documents(path)
]


def the(kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in DEPLOY_DOCUMENTS if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


DEPLOYMENT = the("Deployment", NAME)
POD = DEPLOYMENT["spec"]["template"]
(CONTAINER,) = POD["spec"]["containers"]
CLUSTER_ROLE = the("ClusterRole", NAME)
LEASE_ROLE = the("Role", f"{NAME}-leader-election")
SERVICE = the("Service", f"{NAME}-metrics")


def grants(rules: list[dict[str, Any]]) -> set[Grant]:
    """Flatten RBAC rules into one (group, resource, verb, resourceName) tuple per permission."""
    return {
        (group, resource, verb, resource_name)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
        for resource_name in rule.get("resourceNames") or [None]
    }


def container_port(name_or_number: str | int) -> int:
    if isinstance(name_or_number, int):
        return name_or_number
    (port,) = [p["containerPort"] for p in CONTAINER["ports"] if p["name"] == name_or_number]
    return int(port)


def deployment_options() -> opts.Options:
    options, version_requested = opts.parse(list(CONTAINER["args"]))
    assert not version_requested
    return options


# --- every manifest is valid --------------------------------------------------------------------


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(doc, id=doc_id)
        for doc_id, doc in ALL_DOCUMENTS
        if (doc["apiVersion"], doc["kind"]) not in UNVALIDATED_KINDS
    ],
)
def test_manifest_passes_kubernetes_validate_strict_for_1_37(document: dict[str, Any]) -> None:
    assert kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True) == KUBERNETES_VERSION


def test_our_kinds_left_to_their_own_schemas_are_exactly_the_crds_kinds() -> None:
    crd_kinds = {
        (f"{crd['spec']['group']}/{version['name']}", crd["spec"]["names"]["kind"])
        for path in sorted(CRD_DIR.glob("*.yaml"))
        if not is_kustomization(path)
        for crd in load_documents(path)
        for version in crd["spec"]["versions"]
    }
    assert crd_kinds == CUSTOM_RESOURCE_KINDS


CLUSTER_SCOPED_KINDS = frozenset({"Namespace", "ClusterRole", "ClusterRoleBinding", "PriorityClass"})


def test_every_namespaced_deploy_object_is_in_volcano_system() -> None:
    cluster_scoped = CLUSTER_SCOPED_KINDS
    namespaces = {d["metadata"].get("namespace") for d in DEPLOY_DOCUMENTS if d["kind"] not in cluster_scoped}
    assert namespaces == {NAMESPACE}


def test_cluster_scoped_deploy_objects_have_no_namespace() -> None:
    cluster_scoped = [d for d in DEPLOY_DOCUMENTS if d["kind"] in CLUSTER_SCOPED_KINDS]
    assert len(cluster_scoped) == 4
    assert all("namespace" not in d["metadata"] for d in cluster_scoped)


# --- RBAC -----------------------------------------------------------------------------------------


def test_cluster_role_grants_exactly_what_the_controllers_use() -> None:
    assert grants(CLUSTER_ROLE["rules"]) == EXPECTED_CLUSTER_GRANTS


def test_cluster_role_rules_hold_nothing_but_groups_resources_and_verbs() -> None:
    assert "aggregationRule" not in CLUSTER_ROLE
    assert all(set(rule) == {"apiGroups", "resources", "verbs"} for rule in CLUSTER_ROLE["rules"])


def test_cluster_role_grants_the_finalizers_of_jobflows_not_upstreams_jobs_finalizers() -> None:
    finalizers = {(g, r) for g, r, _v, _n in grants(CLUSTER_ROLE["rules"]) if r.endswith("/finalizers")}
    # cronjobflows/finalizers: a run's owner reference to its CronJobFlow blocks its deletion (docs/cron.md).
    assert finalizers == {
        ("flow.volcano.sh", "jobflows/finalizers"),
        ("flow.volcano.sh", "cronjobflows/finalizers"),
        ("flow.volcano.sh", "jobflowtriggers/finalizers"),
    }


def test_lease_role_grants_get_and_update_of_one_lease_and_create() -> None:
    assert grants(LEASE_ROLE["rules"]) == EXPECTED_LEASE_GRANTS


def test_lease_role_create_rule_has_no_resource_names_as_rbac_cannot_match_them() -> None:
    (create_rule,) = [rule for rule in LEASE_ROLE["rules"] if "create" in rule["verbs"]]
    assert create_rule["verbs"] == ["create"]
    assert "resourceNames" not in create_rule


def test_lease_role_is_for_the_controllers_default_lease() -> None:
    defaults = opts.Options()
    names = {n for _g, _r, verb, n in grants(LEASE_ROLE["rules"]) if verb != "create"}
    assert names == {defaults.leader_elect_resource_name}
    assert LEASE_ROLE["metadata"]["namespace"] == defaults.leader_elect_resource_namespace


def test_deployment_elects_its_leader_on_the_lease_the_role_grants() -> None:
    options = deployment_options()
    lease_names = {n for _g, _r, verb, n in grants(LEASE_ROLE["rules"]) if verb != "create"}
    assert lease_names == {options.leader_elect_resource_name}
    assert options.leader_elect_resource_namespace == LEASE_ROLE["metadata"]["namespace"]


@pytest.mark.parametrize(
    ("kind", "name", "role_kind", "role_name"),
    [
        ("ClusterRoleBinding", NAME, "ClusterRole", NAME),
        ("RoleBinding", f"{NAME}-leader-election", "Role", f"{NAME}-leader-election"),
    ],
)
def test_binding_grants_its_role_to_the_service_account(kind: str, name: str, role_kind: str, role_name: str) -> None:
    binding = the(kind, name)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]
    the(role_kind, role_name)


def test_service_account_exists_where_the_bindings_name_it() -> None:
    assert the("ServiceAccount", NAME)["metadata"]["namespace"] == NAMESPACE


# --- Deployment -----------------------------------------------------------------------------------


def test_deployment_runs_two_replicas() -> None:
    assert DEPLOYMENT["metadata"]["namespace"] == NAMESPACE
    assert DEPLOYMENT["spec"]["replicas"] == 2


def test_deployment_runs_the_image_of_this_version() -> None:
    assert CONTAINER["image"] == f"jobflow-controller:{__version__}" == "jobflow-controller:0.1.0"


def test_deployment_runs_as_the_service_account() -> None:
    assert POD["spec"]["serviceAccountName"] == NAME


def test_deployment_selector_matches_its_pod_labels() -> None:
    selector = DEPLOYMENT["spec"]["selector"]["matchLabels"]
    assert selector.items() <= POD["metadata"]["labels"].items()


def test_deployment_passes_the_specified_flags() -> None:
    assert CONTAINER["args"] == [
        "--leader-elect=true",
        "--leader-elect-resource-namespace=volcano-system",
        "--enable-healthz=true",
        "--healthz-address=:11251",
        "--enable-metrics=true",
        "--listen-address=:8081",
    ]
    assert "command" not in CONTAINER  # the image's ENTRYPOINT runs them


def test_deployment_flags_are_accepted_by_the_controller() -> None:
    options = deployment_options()
    assert (options.leader_elect, options.enable_healthz, options.enable_metrics) == (True, True, True)
    assert (options.healthz_address, options.listen_address) == (f":{HEALTHZ_PORT}", f":{METRICS_PORT}")


def test_pod_runs_as_a_fixed_non_root_user_with_the_runtime_default_seccomp_profile() -> None:
    assert POD["spec"]["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": UID,
        "runAsGroup": UID,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def test_container_security_context_is_locked_down() -> None:
    assert CONTAINER["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": UID,
        "runAsGroup": UID,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def test_only_tmp_is_writable_and_it_is_a_small_empty_dir() -> None:
    assert CONTAINER["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert POD["spec"]["volumes"] == [{"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}}]


def test_liveness_probe_gets_livez_on_port_11251() -> None:
    """/livez carries the lease watchdog; /healthz is upstream's and cannot fail (issue 20, item 2)."""
    probe = CONTAINER["livenessProbe"]["httpGet"]
    assert (probe["path"], container_port(probe["port"])) == ("/livez", HEALTHZ_PORT)


def test_readiness_probe_gets_readyz_on_port_11251() -> None:
    probe = CONTAINER["readinessProbe"]["httpGet"]
    assert (probe["path"], container_port(probe["port"])) == ("/readyz", HEALTHZ_PORT)


def test_container_ports_are_named_metrics_and_healthz() -> None:
    assert CONTAINER["ports"] == [
        {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
        {"name": "healthz", "containerPort": HEALTHZ_PORT, "protocol": "TCP"},
    ]


def test_container_has_cpu_and_memory_requests_and_limits() -> None:
    resources = CONTAINER["resources"]
    assert set(resources) == {"requests", "limits"}
    assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}


def test_termination_grace_period_outlasts_the_controllers_shutdown() -> None:
    options = deployment_options()
    shutdown = options.graceful_shutdown_timeout + options.leader_elect_renew_deadline + EVENT_FLUSH_SECONDS
    assert POD["spec"]["terminationGracePeriodSeconds"] > shutdown > options.graceful_shutdown_timeout


# --- Service --------------------------------------------------------------------------------------


def test_metrics_service_selects_the_deployments_pods() -> None:
    assert SERVICE["spec"]["selector"] == DEPLOYMENT["spec"]["selector"]["matchLabels"]


def test_metrics_service_exposes_the_containers_metrics_port_by_name() -> None:
    assert SERVICE["spec"]["ports"] == [
        {"name": "metrics", "port": METRICS_PORT, "targetPort": "metrics", "protocol": "TCP"}
    ]


def test_metrics_service_is_annotated_for_prometheus_as_upstreams() -> None:
    annotations = SERVICE["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(METRICS_PORT)
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"


# --- kustomization --------------------------------------------------------------------------------

KUSTOMIZATION = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text(encoding="utf-8"))


def test_kustomization_lists_only_paths_that_exist() -> None:
    missing = [entry for entry in KUSTOMIZATION["resources"] if not (MANIFESTS / entry).exists()]
    assert missing == []


def test_kustomization_lists_every_top_level_manifest_and_the_crds() -> None:
    top_level = {p.name for p in MANIFESTS.glob("*.yaml") if not is_kustomization(p)}
    assert set(KUSTOMIZATION["resources"]) == {*top_level, "crds"}


def test_kustomization_leaves_out_the_examples_and_the_webhook() -> None:
    assert not {"examples", "webhook"} & {Path(entry).parts[0] for entry in KUSTOMIZATION["resources"]}


def test_kustomize_build_renders_the_deploy_objects_and_the_crds() -> None:
    out = subprocess.run(
        [kubectl_path(), "kustomize", str(MANIFESTS)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    rendered = sorted((d["kind"], d["metadata"]["name"]) for d in yaml.load_all(out, Loader=LOADER) if d)
    crds = [
        ("CustomResourceDefinition", crd["metadata"]["name"])
        for path in CRD_DIR.glob("*.yaml")
        if not is_kustomization(path)
        for crd in load_documents(path)
    ]
    expected = sorted([(d["kind"], d["metadata"]["name"]) for d in DEPLOY_DOCUMENTS] + crds)
    assert rendered == expected


# --- Dockerfile -----------------------------------------------------------------------------------

DOCKERFILE_TEXT = DOCKERFILE.read_text(encoding="utf-8")


def instructions(text: str) -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuations joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    pairs = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, rest = line.strip().partition(" ")
            pairs.append((keyword.upper(), rest.strip()))
    return pairs


INSTRUCTIONS = instructions(DOCKERFILE_TEXT)


def final_stage() -> list[tuple[str, str]]:
    last_from = max(i for i, (keyword, _) in enumerate(INSTRUCTIONS) if keyword == "FROM")
    return INSTRUCTIONS[last_from:]


def test_dockerfile_has_a_build_stage_and_a_final_stage_on_python_3_11_slim() -> None:
    (base,) = [args for keyword, args in INSTRUCTIONS if keyword == "ARG" and args.startswith("PYTHON_IMAGE=")]
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.11-slim(-\w+)?", base)
    froms = [args for keyword, args in INSTRUCTIONS if keyword == "FROM"]
    assert froms == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE}"]


def test_dockerfile_final_stage_installs_the_built_wheels_offline() -> None:
    runs = " ".join(args for keyword, args in final_stage() if keyword == "RUN")
    assert "from=build" in runs
    assert "--no-index" in runs
    assert not [args for keyword, args in final_stage() if keyword == "COPY"]


def test_dockerfile_runs_as_the_deployments_uid() -> None:
    (user,) = [args for keyword, args in final_stage() if keyword == "USER"]
    assert user == f"{UID}:{UID}"
    assert (CONTAINER["securityContext"]["runAsUser"], CONTAINER["securityContext"]["runAsGroup"]) == (UID, UID)


def test_dockerfile_entrypoint_is_the_console_script() -> None:
    (entrypoint,) = [args for keyword, args in final_stage() if keyword == "ENTRYPOINT"]
    assert entrypoint == '["jobflow-controller"]'
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'jobflow-controller = "jobflow_controller.manager:main"' in pyproject


def test_dockerfile_exposes_the_metrics_and_health_ports() -> None:
    (exposed,) = [args for keyword, args in final_stage() if keyword == "EXPOSE"]
    assert sorted(int(port) for port in exposed.split()) == [METRICS_PORT, HEALTHZ_PORT]


def test_dockerignore_lets_in_everything_the_build_stage_copies() -> None:
    lines = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    copied = {source for keyword, args in INSTRUCTIONS if keyword == "COPY" for source in shlex.split(args)[:-1]}
    assert copied
    assert copied <= allowed


# --- What the image holds: not the local control plane ----------------------------------------

#: The package the local control plane lives in, for development and tests only.
LOCAL_PACKAGE = "jobflow_controller.local"


def dockerignore_pattern(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as a regular expression: `**` spans directories, `*` and `?` do not."""
    out = ""
    for token in re.split(r"(\*\*/|\*\*|\*|\?)", pattern.strip("/")):
        out += {"**/": "(.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(token, re.escape(token))
    return re.compile(out)


def in_build_context(path: str) -> bool:
    """Whether `docker build` sends `path` (repository-relative): the last pattern that matches the
    path or one of its parent directories decides, a `!` pattern letting it in."""
    lines = [line.strip() for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()]
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    included = True
    for line in lines:
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = dockerignore_pattern(line.removeprefix("!"))
        if any(pattern.fullmatch(prefix) for prefix in prefixes):
            included = negated
    return included


def shipped_sources() -> list[Path]:
    """The Python files of the three packages that reach the build stage, so the wheel and the image."""
    packages = ("jobflow_controller", "informers", "workqueue")
    files = [path for package in packages for path in ROOT.glob(f"{package}/**/*.py")]
    return [path for path in files if in_build_context(path.relative_to(ROOT).as_posix())]


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, by absolute name (`from a import b` counts as `a` and `a.b`)."""
    package = ".".join(path.relative_to(ROOT).parts[:-1])
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            modules.add(base)
            modules.update(f"{base}.{alias.name}" for alias in node.names)
    return modules


def test_dockerignore_keeps_the_local_control_plane_out_of_the_build_context() -> None:
    assert not in_build_context("jobflow_controller/local")
    assert not in_build_context("jobflow_controller/local/__init__.py")
    assert not in_build_context("jobflow_controller/local/controlplane.py")
    assert in_build_context("jobflow_controller/__init__.py")
    assert in_build_context("jobflow_controller/manager/__init__.py")
    assert in_build_context("jobflow_controller/jobflow/controller.py")
    assert in_build_context("informers/__init__.py")
    assert not in_build_context("tests/unit/manifests/test_manifests_deploy.py")
    assert not in_build_context("jobflow_controller/__pycache__/__init__.cpython-311.pyc")


def test_the_kubectl_plugin_is_left_out_of_the_image() -> None:
    """The plugin is a client tool (its own top-level package): neither the build context nor the final
    stage holds it, and the build fails should it become importable there."""
    assert not in_build_context("kubectl_jobflow/__init__.py")
    assert not in_build_context("kubectl_jobflow/ui/static/app.js")
    runs = " ".join(args for keyword, args in final_stage() if keyword == "RUN")
    assert "u.find_spec('kubectl_jobflow')" in runs


def test_dockerfile_final_stage_fails_the_build_if_the_local_control_plane_is_importable() -> None:
    runs = " ".join(args for keyword, args in final_stage() if keyword == "RUN")
    assert f"u.find_spec('{LOCAL_PACKAGE}')" in runs
    assert "sys.exit('the local control plane is in the image" in runs


def test_nothing_the_image_ships_imports_the_local_control_plane() -> None:
    sources = shipped_sources()
    assert ROOT / "jobflow_controller" / "manager" / "__init__.py" in sources
    assert not [path for path in sources if "local" in path.relative_to(ROOT).parts]
    imports = {str(path.relative_to(ROOT)): imported_modules(path) for path in sources}
    local = {
        path: sorted(m for m in modules if f"{m}.".startswith(f"{LOCAL_PACKAGE}.")) for path, modules in imports.items()
    }
    assert {path: modules for path, modules in local.items() if modules} == {}
