"""What `kubectl apply -k manifests/` installs, and what the optional Component manifests/crd-validation adds.

Issue 14: the default is upstream's CRDs and nothing else of theirs (no Volcano Job CRD, no CEL rules,
no bounds on flow names; issue 21: but the caps on flows and targets, plain maxItems), so it applies
to any cluster Volcano supports; the CEL rules, which need
Kubernetes 1.35, come only with the Component. The local control plane installs hack/local-crds:
the Component's CRDs and Volcano's Job CRD.
"""

from __future__ import annotations

import copy
import os
import subprocess
from pathlib import Path
from typing import Any

import crdgen as crds
import kubernetes_validate
import pytest
import yaml

from jobflow_controller.local.kubectl import CRD_VALIDATION_DIR, CRDS_DIR, LOCAL_CRDS_DIR, REPO_ROOT, kubectl_path
from jobflow_controller.validation import MAX_FLOWS, MAX_TARGETS

MANIFESTS = REPO_ROOT / "manifests"
JOBFLOWS = "jobflows.flow.volcano.sh"
JOBTEMPLATES = "jobtemplates.flow.volcano.sh"
#: Ours (docs/cron.md), installed beside upstream's two.
CRONJOBFLOWS = "cronjobflows.flow.volcano.sh"
#: Ours (docs/templates.md).
JOBFLOWTEMPLATES = "jobflowtemplates.flow.volcano.sh"
#: Ours (docs/triggers.md).
JOBFLOWTRIGGERS = "jobflowtriggers.flow.volcano.sh"
VOLCANO_JOBS = "jobs.batch.volcano.sh"
VOLCANO_COMMANDS = "commands.bus.volcano.sh"
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Documents = list[dict[str, Any]]


def kustomize(directory: Path) -> Documents:
    out = subprocess.run(
        [kubectl_path(), "kustomize", str(directory)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return [d for d in yaml.load_all(out, Loader=LOADER) if d]


def overlay(tmp_path: Path, base: Path, *components: Path) -> Documents:
    """kustomize of an overlay in ``tmp_path`` with ``base`` as its resource and ``components``."""

    def rel(path: Path) -> str:
        return os.path.relpath(path, tmp_path)

    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump({"resources": [rel(base)], "components": [rel(c) for c in components]})
    )
    return kustomize(tmp_path)


def custom_resource_definitions(documents: Documents) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in documents if d["kind"] == "CustomResourceDefinition"}


def flows_schema(crd: dict[str, Any]) -> dict[str, Any]:
    (version,) = crd["spec"]["versions"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["flows"]
    return schema


def validations(node: object) -> list[Any]:
    """Every x-kubernetes-validations list anywhere in ``node``."""
    if isinstance(node, dict):
        found = [node["x-kubernetes-validations"]] if "x-kubernetes-validations" in node else []
        return found + [v for child in node.values() for v in validations(child)]
    if isinstance(node, list):
        return [v for child in node for v in validations(child)]
    return []


@pytest.fixture(scope="module")
def default() -> Documents:
    return kustomize(MANIFESTS)


# --- the default: `kubectl apply -k manifests/` --------------------------------------------------


def test_the_default_kustomization_does_not_ship_volcanos_job_crd(default: Documents) -> None:
    ours = sorted([CRONJOBFLOWS, JOBFLOWTEMPLATES, JOBFLOWS, JOBFLOWTRIGGERS, JOBTEMPLATES])
    assert sorted(custom_resource_definitions(default)) == ours
    assert sorted(custom_resource_definitions(kustomize(CRDS_DIR))) == ours


def test_the_default_kustomization_has_no_cel_rules(default: Documents) -> None:
    assert validations(default) == []


def test_the_default_kustomization_caps_flows_and_targets_but_bounds_no_name(default: Documents) -> None:
    flows = flows_schema(custom_resource_definitions(default)[JOBFLOWS])
    assert flows["maxItems"] == MAX_FLOWS
    flow = flows["items"]["properties"]
    assert "maxLength" not in flow["name"]
    assert flow["dependsOn"]["properties"]["targets"]["maxItems"] == MAX_TARGETS
    assert "maxLength" not in flow["dependsOn"]["properties"]["targets"]["items"]


def test_the_default_kustomization_includes_no_component() -> None:
    kustomization = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text(encoding="utf-8"))
    assert "components" not in kustomization
    assert "crd-validation" not in kustomization["resources"]


def test_the_default_kustomization_installs_upstreams_crds_plus_the_retry_field_and_caps(default: Documents) -> None:
    installed = custom_resource_definitions(default)
    assert installed == {
        JOBFLOWS: crds.jobflow_crd(),
        JOBTEMPLATES: crds.jobtemplate_crd(),
        CRONJOBFLOWS: crds.cron_crd(),
        JOBFLOWTEMPLATES: crds.template_crd(),
        JOBFLOWTRIGGERS: crds.jobflowtrigger_crd(),
    }
    upstreams = crds.without_our_additions(installed[JOBFLOWS])
    assert crds.canonical_sha256(upstreams) == crds.UPSTREAM_CRD_SHA256[JOBFLOWS]
    assert crds.canonical_sha256(installed[JOBTEMPLATES]) == crds.UPSTREAM_CRD_SHA256[JOBTEMPLATES]


@pytest.mark.parametrize("minor", range(25, 38))
def test_the_default_crds_are_valid_for_every_kubernetes_from_1_25(default: Documents, minor: int) -> None:
    # kubernetes-validate's oldest schema set is 1.25. (What needs 1.35 is the CEL in the rules, which
    # only an API server checks; the default has none, test_the_default_kustomization_has_no_cel_rules.)
    for crd in custom_resource_definitions(default).values():
        assert kubernetes_validate.validate(crd, f"1.{minor}", strict=True) == f"1.{minor}"


# --- the Component --------------------------------------------------------------------------------


def test_crd_validation_is_a_component_patching_only_the_jobflow_and_cronjobflow_crds() -> None:
    kustomization = yaml.safe_load((CRD_VALIDATION_DIR / "kustomization.yaml").read_text(encoding="utf-8"))
    assert kustomization["kind"] == "Component"
    assert kustomization["apiVersion"] == "kustomize.config.k8s.io/v1alpha1"
    assert "resources" not in kustomization
    patch, cron_patch, template_patch = kustomization["patches"]
    for each, name, path in (
        (patch, JOBFLOWS, crds.VALIDATION_PATCH_FILE),
        (cron_patch, CRONJOBFLOWS, crds.CRON_VALIDATION_PATCH_FILE),
        (template_patch, JOBFLOWTEMPLATES, crds.TEMPLATE_VALIDATION_PATCH_FILE),
    ):
        assert each["target"] == {
            "group": "apiextensions.k8s.io",
            "version": "v1",
            "kind": "CustomResourceDefinition",
            "name": name,
        }
        assert CRD_VALIDATION_DIR / each["path"] == REPO_ROOT / path


def test_the_component_adds_the_rules_and_bounds_to_the_jobflow_crd(tmp_path: Path, default: Documents) -> None:
    documents = overlay(tmp_path, MANIFESTS, CRD_VALIDATION_DIR)
    jobflows = custom_resource_definitions(documents)[JOBFLOWS]
    assert jobflows == crds.jobflow_crd(with_rules=True)
    flows = flows_schema(jobflows)
    assert flows["maxItems"] == crds.MAX_FLOWS
    assert flows["x-kubernetes-validations"] == [
        {"message": "jobflow Flow names must be unique", "rule": crds.FLOW_NAMES_UNIQUE_RULE},
        {"message": "jobflow Flow is not DAG: vertex is not defined", "rule": crds.FLOW_TARGETS_DEFINED_RULE},
    ]
    flow = flows["items"]
    assert flow["x-kubernetes-validations"] == [
        {"message": "jobflow Flow is not DAG", "rule": crds.FLOW_NO_SELF_DEPENDENCY_RULE}
    ]
    assert flow["properties"]["name"]["maxLength"] == crds.MAX_FLOW_NAME_LENGTH
    targets = flow["properties"]["dependsOn"]["properties"]["targets"]
    assert (targets["maxItems"], targets["items"]["maxLength"]) == (crds.MAX_TARGETS, crds.MAX_FLOW_NAME_LENGTH)
    # Issue 22: the failure-aware rules, on each flow's dependsOn, on spec.finally and on spec.
    assert flow["properties"]["dependsOn"]["x-kubernetes-validations"] == [
        {"message": "jobflow Flow dependsOn.rule needs dependsOn.targets", "rule": crds.RULE_NEEDS_TARGETS_RULE},
        {
            "message": "jobflow Flow dependsOn.probe is only allowed with the rule AllCompleted",
            "rule": crds.PROBE_NEEDS_ALL_COMPLETED_RULE,
        },
    ]
    spec = jobflows["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    finally_ = spec["properties"]["finally"]
    assert finally_["x-kubernetes-validations"] == [
        {"message": "jobflow Finally names must be unique", "rule": crds.FINALLY_NAMES_UNIQUE_RULE}
    ]
    assert (finally_["maxItems"], finally_["items"]["properties"]["name"]["maxLength"]) == (
        crds.MAX_FINALLY,
        crds.MAX_FLOW_NAME_LENGTH,
    )
    # Issue 33: a finally name is refused as the webhook refuses a JobTemplate name.
    finally_name = finally_["items"]["properties"]["name"]
    assert finally_name["x-kubernetes-validations"] == [
        {"message": crds.FINALLY_NAME_MESSAGE, "rule": crds.FINALLY_NAME_RULE}
    ]
    assert spec["x-kubernetes-validations"] == [
        {"message": "jobflow Finally names must not repeat a flow name", "rule": crds.FINALLY_NOT_A_FLOW_RULE},
        {"message": crds.SHUTDOWN_TRANSITION_MESSAGE, "rule": crds.SHUTDOWN_TRANSITION_RULE},
        # docs/templates.md: a run takes its flows from its template.
        {"message": crds.REF_EXCLUSIVE_MESSAGE, "rule": crds.REF_EXCLUSIVE_RULE},
    ]
    # Issue 37: the parameter names, unique and of their shape, in spec.params and in each matrix.
    params, matrix_params = spec["properties"]["params"], flow["properties"]["matrix"]["properties"]["params"]
    assert params["x-kubernetes-validations"] == [
        {"message": "jobflow params names must be unique", "rule": crds.NAMES_UNIQUE_RULE}
    ]
    assert matrix_params["items"]["x-kubernetes-validations"] == [
        {"message": "jobflow Flow matrix.params name must match [A-Za-z_][A-Za-z0-9_-]*", "rule": crds.NAME_SHAPE_RULE}
    ]
    # Issue 42: a matrix's product of list sizes at most 256, the message naming it.
    matrix = flow["properties"]["matrix"]
    assert matrix["x-kubernetes-validations"] == [
        {
            "message": crds.MATRIX_PRODUCT_MESSAGE,
            "messageExpression": crds.MATRIX_PRODUCT_MESSAGE_EXPRESSION,
            "rule": crds.MATRIX_PRODUCT_RULE,
        }
    ]
    # Issue 43: each when item sets cel, or input, operator and values (docs/results.md).
    when = flow["properties"]["when"]
    assert when["items"]["x-kubernetes-validations"] == [
        {"message": crds.WHEN_ONE_OF_MESSAGE, "rule": crds.WHEN_ONE_OF_RULE}
    ]
    # Every rule is on spec, spec.flows or its items, spec.finally, or the parameter lists, and nothing
    # else of the deployment changes but the CronJobFlow CRD, which gets its own rules (docs/cron.md).
    assert custom_resource_definitions(documents)[CRONJOBFLOWS] == crds.cron_crd(with_rules=True)
    assert custom_resource_definitions(documents)[JOBFLOWTEMPLATES] == crds.template_crd(with_rules=True)
    assert validations(jobflows) == [
        spec["x-kubernetes-validations"],
        finally_["x-kubernetes-validations"],
        finally_name["x-kubernetes-validations"],
        flows["x-kubernetes-validations"],
        flow["x-kubernetes-validations"],
        flow["properties"]["dependsOn"]["x-kubernetes-validations"],
        matrix["x-kubernetes-validations"],
        matrix_params["x-kubernetes-validations"],
        matrix_params["items"]["x-kubernetes-validations"],
        when["items"]["x-kubernetes-validations"],
        params["x-kubernetes-validations"],
        params["items"]["x-kubernetes-validations"],
    ]
    patched = (JOBFLOWS, CRONJOBFLOWS, JOBFLOWTEMPLATES)
    others = [d for d in documents if d["metadata"]["name"] not in patched]
    assert others == [d for d in default if d["metadata"]["name"] not in patched]


def test_the_component_applies_to_the_crds_alone(tmp_path: Path) -> None:
    documents = custom_resource_definitions(overlay(tmp_path, CRDS_DIR, CRD_VALIDATION_DIR))
    assert documents == {
        JOBFLOWS: crds.jobflow_crd(with_rules=True),
        JOBTEMPLATES: crds.jobtemplate_crd(),
        CRONJOBFLOWS: crds.cron_crd(with_rules=True),
        JOBFLOWTEMPLATES: crds.template_crd(with_rules=True),
        JOBFLOWTRIGGERS: crds.jobflowtrigger_crd(),
    }


def test_without_the_rules_and_name_bounds_the_component_leaves_our_crd(tmp_path: Path) -> None:
    # The caps (maxItems) are the base CRD's: the Component keeps them and adds nothing else.
    patched = copy.deepcopy(custom_resource_definitions(overlay(tmp_path, CRDS_DIR, CRD_VALIDATION_DIR))[JOBFLOWS])
    flows = flows_schema(patched)
    del flows["x-kubernetes-validations"], flows["items"]["x-kubernetes-validations"]
    flow = flows["items"]["properties"]
    del flow["name"]["maxLength"], flow["dependsOn"]["properties"]["targets"]["items"]["maxLength"]
    del flow["dependsOn"]["x-kubernetes-validations"]
    spec = patched["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    finally_ = spec["properties"]["finally"]
    del spec["x-kubernetes-validations"], finally_["x-kubernetes-validations"]
    del finally_["items"]["properties"]["name"]["x-kubernetes-validations"]
    del flow["matrix"]["x-kubernetes-validations"], flow["when"]["items"]["x-kubernetes-validations"]
    for params in (spec["properties"]["params"], flow["matrix"]["properties"]["params"]):
        del params["x-kubernetes-validations"], params["items"]["x-kubernetes-validations"]
    assert patched == crds.jobflow_crd()
    assert [op["path"] for op in crds.validation_patch() if op["path"].endswith("/maxItems")] == []


def test_only_the_shutdown_transition_rule_reads_old_self_so_the_flow_rules_ratchet() -> None:
    # CRD validation ratcheting (GA in 1.33, so on every server that takes the rules) skips a rule
    # that reads no oldSelf when the value it guards is unchanged: a metadata-only edit of a JobFlow
    # stored before the Component was applied is never refused by it (tests/e2e/test_e2e_admission.py).
    # The transition rule of spec.shutdown (docs/lifecycle.md) passes whenever shutdown is unchanged.
    rules = [rule["rule"] for listed in validations(crds.jobflow_crd(with_rules=True)) for rule in listed]
    assert len(rules) == 16  # and docs/templates.md: flows or jobFlowTemplateRef
    assert [rule for rule in rules if "oldSelf" in rule] == [crds.SHUTDOWN_TRANSITION_RULE]


def test_the_patch_refuses_to_overwrite_what_upstreams_crd_has() -> None:
    # An `add` over an existing member would silently replace upstream's schema; apply_patch refuses it.
    with_rules = crds.jobflow_crd(with_rules=True)
    with pytest.raises(ValueError, match="member exists"):
        crds.apply_patch(with_rules, crds.validation_patch())


# --- what the local control plane installs --------------------------------------------------------


def test_the_local_control_plane_installs_the_component_and_volcanos_job_and_command_crds() -> None:
    assert custom_resource_definitions(kustomize(LOCAL_CRDS_DIR)) == {
        JOBFLOWS: crds.jobflow_crd(with_rules=True),
        JOBTEMPLATES: crds.jobtemplate_crd(),
        CRONJOBFLOWS: crds.cron_crd(with_rules=True),
        JOBFLOWTEMPLATES: crds.template_crd(with_rules=True),
        JOBFLOWTRIGGERS: crds.jobflowtrigger_crd(),
        VOLCANO_JOBS: crds.job_crd(),
        VOLCANO_COMMANDS: crds.command_crd(),
    }
