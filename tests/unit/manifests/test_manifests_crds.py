"""The CRDs and the examples: names, printer columns and schema as upstream (§5.3 of the reference),
upstream's committed CRDs exactly (but for the JobFlow CRD's additive spec.flows[].retry, the
failure-aware fields of docs/rules.md, and its two maxItems caps, which test_manifests_caps.py checks
against the validation package),
structural-schema rules the API server enforces, kubernetes-validate in strict mode, and the
examples validated against the CRD schemas and by the validation package. (The optional CEL rules
are test_manifests_crd_validation.py's.)"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import crdgen as crds
import jsonschema
import kubernetes_validate
import pytest
import yaml

from jobflow_controller.validation import MAX_FINALLY, MAX_FLOWS, MAX_TARGETS, validate_job_flow
from jobflow_controller.validation.cronjobflow import cron_job_flow_problems

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES_DIR = ROOT / "manifests" / "examples"
PHASES_ANNOTATION = "sim.jobflow.volcano.sh/phases"
JOB_PHASES = [
    "Pending",
    "Aborting",
    "Aborted",
    "Running",
    "Restarting",
    "Completing",
    "Completed",
    "Terminating",
    "Terminated",
    "Failed",
]


# libyaml's loader when present: the CRDs are a quarter of a megabyte each.
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=LOADER) if d]


def load_crd(path: str) -> dict[str, Any]:
    (crd,) = load_documents(ROOT / path)
    return crd


#: Repository-relative path -> CRD: manifests/crds/ and Volcano's Job CRD under hack/local-crds/.
CRD_BY_FILE = {path: load_crd(path) for path in crds.all_crds()}
CRDS = {crd["metadata"]["name"]: crd for crd in CRD_BY_FILE.values()}
JOBFLOW = CRDS["jobflows.flow.volcano.sh"]
JOBTEMPLATE = CRDS["jobtemplates.flow.volcano.sh"]
JOB = CRDS["jobs.batch.volcano.sh"]
COMMAND = CRDS["commands.bus.volcano.sh"]
#: Ours alone (docs/cron.md): no upstream file to compare with; its template's spec is the JobFlow CRD's.
CRON_CRD_FILE = "manifests/crds/flow.volcano.sh_cronjobflows.yaml"
CRONJOBFLOW = CRDS["cronjobflows.flow.volcano.sh"]
#: Ours alone (docs/templates.md): its spec.jobFlow is the JobFlow CRD's spec.
TEMPLATE_CRD_FILE = "manifests/crds/flow.volcano.sh_jobflowtemplates.yaml"
#: The CRDs that are upstream's (but for our additions to the JobFlow CRD).
#: Ours alone (docs/triggers.md): no upstream file, no embedded JobFlow spec.
TRIGGER_CRD_FILE = "manifests/crds/flow.volcano.sh_jobflowtriggers.yaml"
UPSTREAM_CRD_FILES = sorted(
    path for path in CRD_BY_FILE if path not in (CRON_CRD_FILE, TEMPLATE_CRD_FILE, TRIGGER_CRD_FILE)
)
#: The CRDs that embed Volcano's JobSpec (and so a pod template): all of upstream's but the Command CRD.
JOB_SPEC_CRD_FILES = sorted(path for path in UPSTREAM_CRD_FILES if path != crds.COMMAND_CRD_FILE)


def root_schema(crd: dict[str, Any]) -> dict[str, Any]:
    (version,) = crd["spec"]["versions"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def at(schema: dict[str, Any], path: str) -> dict[str, Any]:
    """The sub-schema at a dotted path; ``[]`` steps into items, ``{}`` into additionalProperties."""
    node = schema
    for step in path.split("."):
        if step == "[]":
            node = node["items"]
        elif step == "{}":
            node = node["additionalProperties"]
        else:
            node = node["properties"][step]
    return node


# --- names, versions, columns ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "group", "kind", "plural", "singular", "short_names"),
    [
        ("jobflows.flow.volcano.sh", "flow.volcano.sh", "JobFlow", "jobflows", "jobflow", ["jf"]),
        ("jobtemplates.flow.volcano.sh", "flow.volcano.sh", "JobTemplate", "jobtemplates", "jobtemplate", ["jt"]),
        ("jobs.batch.volcano.sh", "batch.volcano.sh", "Job", "jobs", "job", ["vcjob", "vj"]),
    ],
)
def test_crd_names_are_upstreams(
    name: str, group: str, kind: str, plural: str, singular: str, short_names: list[str]
) -> None:
    crd = CRDS[name]
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"]["annotations"] == {
        "controller-gen.kubebuilder.io/version": "v0.20.0",
        "helm.sh/resource-policy": "keep",
    }
    spec = crd["spec"]
    assert spec["group"] == group
    assert spec["scope"] == "Namespaced"
    assert spec["names"] == {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": plural,
        "shortNames": short_names,
        "singular": singular,
    }
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}


def test_command_crd_is_volcanos_bus_command_without_status_or_short_names() -> None:
    spec = COMMAND["spec"]
    assert (spec["group"], spec["scope"]) == ("bus.volcano.sh", "Namespaced")
    assert spec["names"] == {"kind": "Command", "listKind": "CommandList", "plural": "commands", "singular": "command"}
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert "subresources" not in version and "additionalPrinterColumns" not in version
    schema = root_schema(COMMAND)
    assert sorted(schema["properties"]) == ["action", "apiVersion", "kind", "message", "metadata", "reason", "target"]
    target = at(schema, "target")
    assert target["required"] == ["apiVersion", "kind", "name", "uid"]
    assert target["x-kubernetes-map-type"] == "atomic"
    assert at(target, "controller") == at(target, "blockOwnerDeletion") == {"type": "boolean"}


def test_jobflow_printer_columns() -> None:
    (version,) = JOBFLOW["spec"]["versions"]
    assert version["additionalPrinterColumns"] == [
        {"jsonPath": ".status.state.phase", "name": "Status", "type": "string"},
        {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
    ]


def test_jobtemplate_has_no_printer_columns() -> None:
    (version,) = JOBTEMPLATE["spec"]["versions"]
    assert "additionalPrinterColumns" not in version


def test_job_printer_columns() -> None:
    (version,) = JOB["spec"]["versions"]
    assert version["additionalPrinterColumns"] == [
        {"jsonPath": ".status.state.phase", "name": "STATUS", "type": "string"},
        {"jsonPath": ".status.minAvailable", "name": "minAvailable", "type": "integer"},
        {"jsonPath": ".status.running", "name": "RUNNINGS", "type": "integer"},
        {"jsonPath": ".metadata.creationTimestamp", "name": "AGE", "type": "date"},
        {"jsonPath": ".spec.queue", "name": "QUEUE", "priority": 1, "type": "string"},
    ]


@pytest.mark.parametrize("name", sorted(CRDS))
def test_crds_pass_kubernetes_validate_strict_for_1_37(name: str) -> None:
    assert kubernetes_validate.validate(CRDS[name], "1.37", strict=True) == "1.37"


@pytest.mark.parametrize("path", sorted(CRD_BY_FILE))
def test_crd_sizes_fit_the_api_server_and_client_side_apply(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert len(text.encode()) < 1_000_000  # well under etcd's 1.5 MiB object limit
    crd = CRD_BY_FILE[path]
    # kubectl's client-side apply stores the object as JSON in an annotation; all annotations together
    # may hold 256 KiB.
    assert len(json.dumps(crd, separators=(",", ":"))) < 200_000


# --- upstream's CRDs, exactly ---------------------------------------------------------------------

#: sha256 of upstream's committed files (volcano-sh/volcano ed72c7c81, config/crd/jobflow/bases/ and
#: config/crd/volcano/bases/), byte for byte.
UPSTREAM_FILE_SHA256 = {
    "flow.volcano.sh_jobflows.yaml": "27245758883204c336c490781c391546c4a58b1bcba697600d42fbb6d59996af",
    "flow.volcano.sh_jobtemplates.yaml": "cceedf7da384a7515efd9308ad4004f7643c070e10c83e427fbe01579a09a3b9",
    "batch.volcano.sh_jobs.yaml": "91b22fe5901f54f1b58750608e5fc4bc5c8cb8f41d42d0847e608cadbd4eb5e6",
    # Upstream's file (sha256 35ae3c92...) without its `description:` blocks, which its other CRDs lack.
    "bus.volcano.sh_commands.yaml": "901f9b487eed41b623f8aad75ef225fcf9c2595b5f4b3844ec559fa344dbd619",
}


def upstreams_part(crd: dict[str, Any]) -> dict[str, Any]:
    """The CRD without what we add to upstream's: the JobFlow CRD's `spec.flows[].retry` and two `maxItems`."""
    return crds.without_our_additions(crd) if crd["metadata"]["name"] == "jobflows.flow.volcano.sh" else crd


@pytest.mark.parametrize("path", UPSTREAM_CRD_FILES)
def test_crd_is_upstreams_committed_crd_but_for_our_additions(path: str) -> None:
    crd = CRD_BY_FILE[path]
    assert crds.canonical_sha256(upstreams_part(crd)) == crds.UPSTREAM_CRD_SHA256[crd["metadata"]["name"]]


def schema_differences(ours: Any, theirs: Any, path: str = "") -> list[str]:
    """Every path where two parsed documents differ: `+` only in ours, `-` only in theirs, `~` changed."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out: list[str] = []
        for key in sorted(set(ours) | set(theirs)):
            if key not in theirs:
                out.append(f"+{path}/{key}")
            elif key not in ours:
                out.append(f"-{path}/{key}")
            else:
                out.extend(schema_differences(ours[key], theirs[key], f"{path}/{key}"))
        return out
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [
            d
            for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
            for d in schema_differences(a, b, f"{path}/{i}")
        ]
    return [] if ours == theirs else [f"~{path}"]


def test_the_jobflow_crd_adds_only_optional_fields_and_the_two_caps_to_upstreams() -> None:
    assert crds.canonical_sha256(crds.upstream_jobflow_crd()) == crds.UPSTREAM_CRD_SHA256["jobflows.flow.volcano.sh"]
    assert sorted(schema_differences(JOBFLOW, crds.upstream_jobflow_crd())) == sorted(
        f"+{pointer}" for pointer in crds.OUR_ADDITIONS
    )
    assert len(crds.OUR_ADDITIONS) == 8 + len(crds.LIFECYCLE_POINTERS) + len(crds.PARAMS_POINTERS) + len(
        crds.RESULTS_POINTERS
    ) + len(crds.TEMPLATE_RUN_POINTERS)
    assert [op["path"] for op in crds.our_additions_patch()] == list(crds.OUR_ADDITIONS)
    flow = at(root_schema(JOBFLOW), "spec.flows.[]")
    assert flow["required"] == ["name"]  # optional: every object valid for upstream's CRD is valid for ours
    assert flow["properties"]["retry"] == {
        "properties": {
            "backoff": {"default": "0s", "maxLength": 64, "type": "string"},
            "maxRetries": {"format": "int32", "maximum": 100, "minimum": 0, "type": "integer"},
        },
        "required": ["maxRetries"],
        "type": "object",
    }


def test_schema_differences_names_added_removed_and_changed_paths() -> None:
    assert schema_differences({"a": 1, "b": [1, {"c": 2}]}, {"a": 2, "b": [1, {"d": 2}], "e": 0}) == [
        "~/a",
        "+/b/1/c",
        "-/b/1/d",
        "-/e",
    ]


#: Our two `maxItems` lines, as the JobFlow CRD file has them: the caps of spec.flows and of a flow's targets.
CAP_LINES = {f"maxItems: {MAX_FLOWS}", f"maxItems: {MAX_TARGETS}"}
#: Our lifecycle fields' blocks (docs/lifecycle.md), by their indentation in the JobFlow CRD file: 14 for a
#: property of spec or status, 20 for one of a flow. (A JobSpec's ttlSecondsAfterFinished is deeper.)
LIFECYCLE_BLOCKS = {
    (14, "activeDeadlineSeconds:"),
    (14, "shutdown:"),
    (14, "suspend:"),
    (14, "ttlSecondsAfterFinished:"),
    (14, "finishedAt:"),
    (14, "retryRequest:"),
    (14, "suspendedSince:"),
    (20, "activeDeadlineSeconds:"),
}


#: Our property blocks: the retry field and the failure-aware fields (issue 22, docs/rules.md).
OUR_BLOCKS = {
    "retry",
    "failurePolicy",
    "finally",
    "rule",
    "continueOnFailure",
    "skippedJobs",
    "params",
    "when",
    "matrix",
    "results",
    "jobFlowTemplateRef",
    "storedJobFlowTemplateSpec",
}


def without_our_lines(body: str, lifecycle: bool = True) -> tuple[str, dict[str, int], list[str]]:
    """The CRD file's text without our property blocks (`OUR_BLOCKS`, and with `lifecycle` the
    `LIFECYCLE_BLOCKS`, counted together as "lifecycle") and the cap lines (`CAP_LINES`).

    Also the number of lines of each block removed (in file order), and the cap lines removed, in file order.
    """
    out: list[str] = []
    caps: list[str] = []
    blocks: dict[str, int] = {}
    block, block_indent = "", -1
    for line in body.splitlines(keepends=True):
        indent = len(line) - len(line.lstrip(" "))
        if block_indent >= 0 and indent > block_indent:
            blocks[block] += 1
            continue
        block_indent = -1
        if line.strip().endswith(":") and line.strip()[:-1] in OUR_BLOCKS:
            block, block_indent = line.strip()[:-1], indent
            blocks[block] = 1
            continue
        if lifecycle and (indent, line.strip()) in LIFECYCLE_BLOCKS:
            block, block_indent = "lifecycle", indent
            blocks[block] = blocks.get(block, 0) + 1
            continue
        if line.strip() in CAP_LINES:
            caps.append(line.strip())
            continue
        out.append(line)
    return "".join(out), blocks, caps


def block_sizes(text: str, name: str) -> list[int]:
    """The number of lines of each ``<name>:`` block of ``text`` (its own line included), in file order."""
    sizes: list[int] = []
    indent = -1
    for line in text.splitlines():
        depth = len(line) - len(line.lstrip(" "))
        if indent >= 0 and depth > indent:
            sizes[-1] += 1
            continue
        indent = -1
        if line.strip() == f"{name}:":
            sizes.append(1)
            indent = depth
    return sizes


@pytest.mark.parametrize("path", UPSTREAM_CRD_FILES)
def test_crd_file_below_its_header_is_upstreams_file_byte_for_byte_but_for_our_blocks_and_caps(
    path: str,
) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    header, separator, body = text.partition("\n---\n")
    assert separator and all(line.startswith("#") for line in header.splitlines())
    # The JobFlow CRD's retry block is 14 lines (retry:, properties:, backoff's 4, maxRetries' 5, required's 2,
    # and type:), and it has one line per cap (targets come first in the file); no other file has either.
    # The failure-aware blocks: failurePolicy and rule an enum (5 and 9 lines), continueOnFailure a boolean (2),
    # skippedJobs a list of at most 600 strings of at most 253 (6), finally its entries (a name and a patch of
    # the flows' schema). Issue 42 bounded each field of ours: a maxLength, maxItems or maximum line apiece.
    jobflows = path.endswith("flow.volcano.sh_jobflows.yaml")
    body, blocks, caps = without_our_lines(body, lifecycle=jobflows)
    # The lifecycle blocks 34 (5 for each of the three int64 fields, 6 for shutdown's enum, 2 for suspend,
    # 3 for retryRequest, 4 for each time).
    # The parameter blocks (issue 37): matrix 31 (its params inside), when 24 (with issue 43's cel, no
    # required: the Component says which of cel or input/operator/values), spec.params 16.
    expected = {"failurePolicy": 5, "continueOnFailure": 2, "rule": 9, "retry": 14, "skippedJobs": 6, "lifecycle": 34}
    if jobflows:
        # results: flows[].results 6, spec.results and status.results 7 each (issue 43).
        expected |= {"matrix": 31, "when": 24, "params": 16, "results": 20}
        # runs from a template (docs/templates.md): jobFlowTemplateRef 9, storedJobFlowTemplateSpec 3.
        expected |= {"jobFlowTemplateRef": 9, "storedJobFlowTemplateSpec": 3}
    if jobflows:
        # finally: the block's 12 lines of its own (items, name, required, maxItems, ...) and a patch block
        # exactly as long as a flow's (the same schema).
        finally_patch, flow_patch = block_sizes(text, "patch")
        assert finally_patch == flow_patch
        expected["finally"] = 12 + flow_patch
    assert blocks == (expected if jobflows else {})
    assert caps == ([f"maxItems: {MAX_TARGETS}", f"maxItems: {MAX_FLOWS}"] if jobflows else [])
    assert hashlib.sha256(f"---\n{body}".encode()).hexdigest() == UPSTREAM_FILE_SHA256[Path(path).name]


def test_jobflow_crd_has_no_cel_rules_and_no_bounds_upstream_lacks_but_the_two_caps() -> None:
    # Issue 14: maxLength 253 on flow names and the CEL rules (Kubernetes >= 1.35) are the Component's.
    # Issue 21: the caps on flows and targets are the base CRD's (test_manifests_caps.py).
    schema = root_schema(JOBFLOW)
    assert [path for path, node in schema_nodes(schema) if "x-kubernetes-validations" in node] == []
    flows = at(schema, "spec.flows")
    assert flows["maxItems"] == MAX_FLOWS
    assert at(flows, "[].name") == {"minLength": 1, "type": "string"}
    assert at(flows, "[].dependsOn.targets") == {"items": {"type": "string"}, "maxItems": MAX_TARGETS, "type": "array"}


@pytest.mark.parametrize("path", JOB_SPEC_CRD_FILES)
def test_pod_template_has_no_field_newer_than_upstreams_kubernetes_1_36(path: str) -> None:
    # Kubernetes 1.37 added these to the pod spec; upstream's CRDs, built on k8s.io/api v0.36, lack them.
    templates = [
        node for node_path, node in schema_nodes(root_schema(CRD_BY_FILE[path])) if node_path.endswith(".template")
    ]
    # The JobFlow CRD has two: a flow's patch and a finally entry's (the same schema).
    assert len(templates) == (2 if path.endswith("flow.volcano.sh_jobflows.yaml") else 1)
    for template in templates:
        pod = at(template, "spec")
        assert "evictionResponders" not in pod["properties"]
        assert "bindMountOptions" not in at(pod, "containers.[].volumeMounts.[]")["properties"]
        assert "mode" not in at(pod, "containers.[].livenessProbe.grpc")["properties"]
        assert "mode" not in at(pod, "volumes.[].emptyDir")["properties"]


# --- structural schema --------------------------------------------------------------------------------

ALLOWED_KEYWORDS = {
    "additionalProperties",
    "anyOf",
    "default",
    "enum",
    "format",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minimum",
    "pattern",
    "properties",
    "required",
    "type",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
}
INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


def schema_nodes(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, node
    for prop, child in node.get("properties", {}).items():
        yield from schema_nodes(child, f"{path}.{prop}")
    if "items" in node:
        yield from schema_nodes(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from schema_nodes(node["additionalProperties"], f"{path}{{}}")


def structural_problems(schema: dict[str, Any]) -> list[str]:
    """The rules of a structural schema that a CRD must satisfy, and that the API server checks."""
    problems: list[str] = []
    for path, node in schema_nodes(schema):
        unknown = set(node) - ALLOWED_KEYWORDS
        if unknown:
            problems.append(f"{path}: keywords {sorted(unknown)}")
        if node.get("x-kubernetes-int-or-string"):
            if node.get("anyOf") != INT_OR_STRING or "type" in node:
                problems.append(f"{path}: int-or-string must be anyOf integer|string without type")
        elif node.get("type") not in {"object", "array", "string", "integer", "number", "boolean"}:
            problems.append(f"{path}: type {node.get('type')!r}")
        elif "anyOf" in node:
            problems.append(f"{path}: anyOf outside int-or-string")
        if node.get("type") == "array" and "items" not in node:
            problems.append(f"{path}: array without items")
        if "properties" in node and "additionalProperties" in node:
            problems.append(f"{path}: both properties and additionalProperties")
        for name in node.get("required", []):
            if name not in node.get("properties", {}):
                problems.append(f"{path}: required {name!r} is not a property")
        if "pattern" in node:
            re.compile(node["pattern"])
        if node.get("x-kubernetes-list-type") == "map":
            item = node["items"]
            for key in node.get("x-kubernetes-list-map-keys", []):
                if key not in item.get("properties", {}):
                    problems.append(f"{path}: map key {key!r} is not an item property")
                elif key not in item.get("required", []) and "default" not in item["properties"][key]:
                    problems.append(f"{path}: map key {key!r} is neither required nor defaulted")
        if "default" in node:
            try:
                jsonschema.validate(node["default"], {k: v for k, v in node.items() if k != "default"})
            except jsonschema.ValidationError as error:
                problems.append(f"{path}: default does not validate: {error.message}")
    return problems


@pytest.mark.parametrize("name", sorted(CRDS))
def test_schemas_are_structural(name: str) -> None:
    schema = root_schema(CRDS[name])
    assert structural_problems(schema) == []
    assert at(schema, "metadata") == {"type": "object"}


def test_structural_check_catches_what_the_api_server_refuses() -> None:
    assert structural_problems({"type": "object", "properties": {"a": {"$ref": "#/x"}}}) == [
        ".a: keywords ['$ref']",
        ".a: type None",
    ]
    assert structural_problems({"type": "array"}) == [": array without items"]
    listed = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["k"],
        "items": {"type": "object", "properties": {"k": {"type": "string"}}},
    }
    assert structural_problems(listed) == [": map key 'k' is neither required nor defaulted"]


@pytest.mark.parametrize("path", JOB_SPEC_CRD_FILES)
def test_embedded_object_meta_is_controller_gens_subset(path: str) -> None:
    metas = [node for p, node in schema_nodes(root_schema(CRD_BY_FILE[path])) if p.endswith(".metadata") and p]
    embedded = [m for m in metas if m != {"type": "object"}]
    assert embedded, "the pod templates' metadata"
    for meta in embedded:
        assert sorted(meta["properties"]) == ["annotations", "finalizers", "labels", "name", "namespace"]


# --- Volcano JobSpec and Job status -------------------------------------------------------------------


def test_cronjobflow_template_spec_is_the_jobflow_crds_spec_whole() -> None:
    # docs/cron.md: every JobFlow field, today's and any added later, is accepted in a template.
    assert at(root_schema(CRONJOBFLOW), "spec.jobFlowTemplate.spec") == at(root_schema(JOBFLOW), "spec")
    assert at(root_schema(CRONJOBFLOW), "spec.jobFlowTemplate.metadata")["properties"].keys() == {
        "annotations",
        "labels",
    }


def test_cronjobflow_crd_names_columns_and_status_subresource() -> None:
    names = CRONJOBFLOW["spec"]["names"]
    assert (names["kind"], names["plural"], names["shortNames"]) == ("CronJobFlow", "cronjobflows", ["cjf"])
    (version,) = CRONJOBFLOW["spec"]["versions"]
    assert version["subresources"] == {"status": {}}
    columns = [c["name"].upper() for c in version["additionalPrinterColumns"]]
    assert columns == ["SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"]
    spec = at(root_schema(CRONJOBFLOW), "spec")
    assert spec["required"] == ["jobFlowTemplate", "schedule"]
    defaults = {key: node.get("default") for key, node in spec["properties"].items() if "default" in node}
    assert defaults == {
        "concurrencyPolicy": "Allow",
        "failedJobFlowsHistoryLimit": 1,
        "successfulJobFlowsHistoryLimit": 3,
        "suspend": False,
    }


def test_job_spec_is_the_same_schema_everywhere() -> None:
    job_spec = at(root_schema(JOB), "spec")
    assert at(root_schema(JOBTEMPLATE), "spec") == job_spec
    assert at(root_schema(JOBFLOW), "spec.flows.[].patch.jobSpec") == job_spec
    assert crds.job_spec_schema() == job_spec


def test_job_spec_fields_and_defaults() -> None:
    spec = at(root_schema(JOB), "spec")
    assert sorted(spec["properties"]) == [
        "maxRetry",
        "minAvailable",
        "minSuccess",
        "networkTopology",
        "plugins",
        "policies",
        "priorityClassName",
        "queue",
        "runningEstimate",
        "schedulerName",
        "tasks",
        "ttlSecondsAfterFinished",
        "volumes",
    ]
    assert at(spec, "maxRetry")["default"] == 3
    assert at(spec, "queue")["default"] == "default"
    assert at(spec, "networkTopology.mode") == {"default": "hard", "enum": ["hard", "soft"], "type": "string"}
    assert at(spec, "tasks")["minItems"] == 1
    task = at(spec, "tasks.[]")
    assert sorted(task["properties"]) == [
        "dependsOn",
        "maxRetry",
        "minAvailable",
        "name",
        "partitionPolicy",
        "policies",
        "replicas",
        "template",
        "topologyPolicy",
    ]
    assert at(task, "partitionPolicy.minPartitions")["default"] == 0
    assert at(task, "partitionPolicy")["required"] == ["partitionSize", "totalPartitions"]
    assert at(spec, "volumes.[]")["required"] == ["mountPath"]
    assert sorted(at(task, "template")["properties"]) == ["metadata", "spec"]
    assert at(task, "template.spec")["required"] == ["containers"]


def test_pod_template_keeps_kubernetes_defaults_and_list_types() -> None:
    pod = at(root_schema(JOB), "spec.tasks.[].template.spec")
    assert at(pod, "containers.[].ports.[].protocol")["default"] == "TCP"
    assert at(pod, "containers.[].ports")["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert at(pod, "containers.[].resources.requests.{}") == {
        "anyOf": INT_OR_STRING,
        "pattern": at(pod, "containers.[].resources.limits.{}")["pattern"],
        "x-kubernetes-int-or-string": True,
    }
    assert at(pod, "containers.[].livenessProbe.httpGet.port") == {
        "anyOf": INT_OR_STRING,
        "x-kubernetes-int-or-string": True,
    }


def test_job_status_schema() -> None:
    status = at(root_schema(JOB), "status")
    assert at(status, "state.phase")["enum"] == JOB_PHASES
    assert sorted(at(status, "state")["properties"]) == ["lastTransitionTime", "message", "phase", "reason"]
    assert at(status, "taskStatusCount.{}.phase.{}") == {"format": "int32", "type": "integer"}
    for counter in ["minAvailable", "pending", "running", "succeeded", "failed", "terminating", "unknown"]:
        assert at(status, counter) == {"format": "int32", "minimum": 0, "type": "integer"}
    assert at(status, "runningDuration") == {"type": "string"}
    assert at(status, "conditions.[]")["required"] == ["status"]
    assert sorted(at(status, "conditions.[]")["properties"]) == ["lastTransitionTime", "status"]
    assert at(status, "controlledResources.{}") == {"type": "string"}


# --- JobFlow and JobTemplate ----------------------------------------------------------------------------


#: The status fields of docs/lifecycle.md, ours.
LIFECYCLE_STATUS = {"finishedAt", "retryRequest", "suspendedSince"}


def test_jobflow_lifecycle_fields_are_optional_bounded_and_typed() -> None:
    schema = root_schema(JOBFLOW)
    # At most Go's longest Duration, as the controller reads them (issue 42: every field of ours bounded).
    seconds = {"format": "int64", "maximum": 9_223_372_036, "minimum": 0, "type": "integer"}
    assert at(schema, "spec.activeDeadlineSeconds") == at(schema, "spec.ttlSecondsAfterFinished") == seconds
    assert at(schema, "spec.flows.[].activeDeadlineSeconds") == seconds
    assert at(schema, "spec.suspend") == {"type": "boolean"}
    assert at(schema, "spec.shutdown") == {"enum": ["", "Stop", "Terminate"], "type": "string"}
    assert "required" not in at(schema, "spec")
    assert {key: at(schema, f"status.{key}") for key in sorted(LIFECYCLE_STATUS)} == {
        "finishedAt": {"format": "date-time", "maxLength": 64, "type": "string"},
        "retryRequest": {"maxLength": 65536, "type": "string"},
        "suspendedSince": {"format": "date-time", "maxLength": 64, "type": "string"},
    }


def test_jobflow_spec_schema() -> None:
    spec = at(root_schema(JOBFLOW), "spec")
    assert at(spec, "jobRetainPolicy") == {"enum": ["retain", "delete"], "type": "string"}
    flow = at(spec, "flows.[]")
    assert flow["required"] == ["name"]
    assert at(flow, "name")["minLength"] == 1
    assert at(flow, "dependsOn.targets.[]")["type"] == "string"
    probe = at(flow, "dependsOn.probe")
    assert sorted(probe["properties"]) == ["httpGetList", "taskStatusList", "tcpSocketList"]
    for port in (at(probe, "httpGetList.[].port"), at(probe, "tcpSocketList.[].port")):
        assert port == {"maximum": 65535, "minimum": 0, "type": "integer"}
    assert at(probe, "tcpSocketList.[]")["required"] == ["port"]
    assert at(probe, "httpGetList.[].httpHeader")["required"] == ["name", "value"]
    assert at(probe, "taskStatusList.[].phase")["maxLength"] == 63
    assert sorted(at(flow, "patch")["properties"]) == ["jobSpec"]
    assert sorted(flow["properties"]) == [
        "activeDeadlineSeconds",
        "continueOnFailure",
        "dependsOn",
        "matrix",
        "name",
        "patch",
        "results",
        "retry",
        "when",
    ]
    assert at(flow, "retry")["required"] == ["maxRetries"]
    # Issue 43 (docs/results.md): optional; names bounded, shaped and a set, as the webhook checks them.
    assert at(flow, "results")["required"] == ["names"]
    names = at(flow, "results.names")
    assert (names["minItems"], names["maxItems"], names["x-kubernetes-list-type"]) == (1, 16, "set")
    assert at(flow, "results.names.[]")["pattern"] == "^[a-z0-9]([-a-z0-9_]*[a-z0-9])?$"
    assert at(flow, "results.from.task")["maxLength"] == 63
    # Issue 37 (docs/params.md): optional, no defaults; the bounds the webhook also checks.
    assert "required" not in at(flow, "when.[]")  # cel, or input/operator/values: the Component's rule
    assert at(flow, "when.[].cel") == {"maxLength": 1024, "type": "string"}
    assert at(flow, "when.[].operator") == {"enum": ["in", "notin"], "type": "string"}
    assert at(flow, "when.[].values")["minItems"] == 1
    assert at(flow, "matrix")["required"] == ["params"]
    assert at(flow, "matrix.maxParallel") == {"format": "int32", "maximum": 2**31 - 1, "minimum": 1, "type": "integer"}
    assert (at(flow, "matrix.params")["minItems"], at(flow, "matrix.params")["maxItems"]) == (1, 16)
    assert (at(flow, "matrix.params.[].values")["minItems"], at(flow, "matrix.params.[].values")["maxItems"]) == (
        1,
        256,
    )
    assert at(spec, "params")["maxItems"] == 100
    assert at(spec, "params.[]")["required"] == ["name", "value"]


def test_jobflow_failure_aware_fields_are_optional_without_defaults() -> None:
    # Issue 22 (docs/rules.md): a JobFlow that sets none of them is stored exactly as upstream's.
    spec = at(root_schema(JOBFLOW), "spec")
    assert sorted(spec["properties"]) == [
        "activeDeadlineSeconds",
        "failurePolicy",
        "finally",
        "flows",
        "jobFlowTemplateRef",
        "jobRetainPolicy",
        "params",
        "results",
        "shutdown",
        "suspend",
        "ttlSecondsAfterFinished",
    ]
    assert "required" not in spec
    assert at(spec, "failurePolicy") == {"enum": ["FailFast", "RunToCompletion"], "type": "string"}
    assert at(spec, "flows.[].dependsOn.rule") == {
        "enum": ["AllCompleted", "AnyCompleted", "AllFailed", "AnyFailed", "AllDone", "NoneFailed"],
        "type": "string",
    }
    assert at(spec, "flows.[].continueOnFailure") == {"type": "boolean"}
    assert sorted(at(spec, "flows.[].dependsOn")["properties"]) == ["probe", "rule", "targets"]
    finally_ = at(spec, "finally")
    assert (finally_["type"], finally_["maxItems"]) == ("array", MAX_FINALLY)
    assert finally_["items"]["required"] == ["name"]
    assert at(finally_, "[].name") == {"maxLength": 253, "minLength": 1, "type": "string"}
    assert at(finally_, "[].patch") == at(spec, "flows.[].patch")
    assert at(root_schema(JOBFLOW), "status.skippedJobs") == {
        "items": {"maxLength": 253, "type": "string"},
        "maxItems": MAX_FLOWS + MAX_FINALLY,
        "type": "array",
    }
    for field in ("failurePolicy", "finally", "flows.[].dependsOn.rule", "flows.[].continueOnFailure"):
        assert "default" not in at(spec, field)


def test_the_jobflow_printer_columns_are_upstreams() -> None:
    # `kubectl get jf` shows what upstream's shows: no column for the failure-aware fields.
    (version,) = JOBFLOW["spec"]["versions"]
    assert version["additionalPrinterColumns"] == [
        {"jsonPath": ".status.state.phase", "name": "Status", "type": "string"},
        {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
    ]


def test_jobflow_status_schema_has_upstreams_json_names() -> None:
    status = at(root_schema(JOBFLOW), "status")
    assert sorted(set(status["properties"]) - LIFECYCLE_STATUS) == [
        "completedJobs",
        "conditions",
        "failedJobs",
        "jobStatusList",
        "pendingJobs",
        "results",
        "runningJobs",
        "skippedJobs",
        "state",
        "storedJobFlowTemplateSpec",
        "terminatedJobs",
        "unKnowJobs",
    ]
    # Issue 43 (docs/results.md): the JobFlow's own results, the same shape in the spec and the status.
    own = at(status, "results")
    assert own == at(root_schema(JOBFLOW), "spec.results")
    assert (own["maxItems"], own["x-kubernetes-list-type"], own["x-kubernetes-list-map-keys"]) == (16, "map", ["name"])
    assert own["items"]["required"] == ["name", "value"]
    assert at(own, "[].value") == {"maxLength": 4096, "type": "string"}
    assert at(own, "[].name")["pattern"] == "^[a-z0-9]([-a-z0-9_]*[a-z0-9])?$"
    assert at(status, "state.phase")["enum"] == ["Succeed", "Terminating", "Failed", "Running", "Pending"]
    condition = at(status, "conditions.{}")
    assert sorted(condition["properties"]) == ["createTime", "phase", "runningDuration", "taskStatusCount"]
    assert at(condition, "createTime") == {"format": "date-time", "type": "string"}
    job_status = at(status, "jobStatusList.[]")
    assert sorted(job_status["properties"]) == [
        "endTimestamp",
        "name",
        "restartCount",
        "results",
        "runningHistories",
        "startTimestamp",
        "state",
    ]
    assert at(job_status, "results") == {
        "additionalProperties": {"maxLength": 4096, "type": "string"},
        "maxProperties": 16,
        "type": "object",
    }
    assert sorted(at(job_status, "runningHistories.[]")["properties"]) == ["endTimestamp", "startTimestamp", "state"]


def test_jobtemplate_status_schema() -> None:
    assert at(root_schema(JOBTEMPLATE), "status") == {
        "properties": {"jobDependsOnList": {"items": {"type": "string"}, "type": "array"}},
        "type": "object",
    }


# --- examples -----------------------------------------------------------------------------------------


def example_documents() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((EXAMPLES_DIR / "kustomization.yaml").read_text(encoding="utf-8"))
    documents: list[dict[str, Any]] = []
    for resource in kustomization["resources"]:
        documents.extend(load_documents(EXAMPLES_DIR / resource))
    return documents


EXAMPLES = example_documents()
SCHEMAS = {(crd["spec"]["group"], crd["spec"]["names"]["kind"]): root_schema(crd) for crd in CRDS.values()}


def closed(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every object closed, so that a field the API server would prune fails instead."""
    result = copy.deepcopy(schema)
    for _path, node in schema_nodes(result):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
    return result


def test_examples_are_listed_in_the_kustomization_templates_first() -> None:
    files = {p.name for p in EXAMPLES_DIR.glob("*.yaml")} - {"kustomization.yaml"}
    kustomization = yaml.safe_load((EXAMPLES_DIR / "kustomization.yaml").read_text(encoding="utf-8"))
    assert sorted(kustomization["resources"]) == sorted(files)
    kinds = [d["kind"] for d in EXAMPLES]
    assert kinds == sorted(kinds, key=lambda kind: kind != "JobTemplate")
    assert kustomization["sortOptions"] == {"order": "fifo"}


def test_examples_are_the_two_pipelines_and_the_nightly_cronjobflow_in_default() -> None:
    names = {(d["kind"], d["metadata"]["name"]) for d in EXAMPLES}
    assert names == {
        ("JobFlow", "ml-pipeline"),
        ("JobFlow", "parallel-pipeline"),
        ("CronJobFlow", "nightly-etl"),
        *(
            ("JobTemplate", t)
            for t in [
                "data-preprocess",
                "model-training",
                "model-evaluation",
                "data-download",
                "feature-engineering",
                "model-training-v1",
                "model-training-v2",
                "model-ensemble",
            ]
        ),
    }
    assert {d["metadata"]["namespace"] for d in EXAMPLES} == {"default"}
    policies = {d["metadata"]["name"]: d["spec"]["jobRetainPolicy"] for d in EXAMPLES if d["kind"] == "JobFlow"}
    assert policies == {"ml-pipeline": "retain", "parallel-pipeline": "delete"}


@pytest.mark.parametrize("document", EXAMPLES, ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_example_validates_against_its_crd_schema_with_nothing_pruned(document: dict[str, Any]) -> None:
    group = document["apiVersion"].split("/")[0]
    schema = SCHEMAS[(group, document["kind"])]
    jsonschema.Draft202012Validator(closed(schema)).validate(document)


@pytest.mark.parametrize(
    "document", [d for d in EXAMPLES if d["kind"] == "JobFlow"], ids=lambda d: d["metadata"]["name"]
)
def test_example_jobflows_pass_the_validation_package(document: dict[str, Any]) -> None:
    assert validate_job_flow(document) == []
    templates = {d["metadata"]["name"] for d in EXAMPLES if d["kind"] == "JobTemplate"}
    assert {f["name"] for f in document["spec"]["flows"]} <= templates


def test_example_cronjobflow_passes_admission_and_runs_the_diamond() -> None:
    (nightly,) = [d for d in EXAMPLES if d["kind"] == "CronJobFlow"]
    assert cron_job_flow_problems(nightly) == []
    (diamond,) = [d for d in EXAMPLES if d["metadata"]["name"] == "parallel-pipeline"]
    assert nightly["spec"]["jobFlowTemplate"]["spec"] == diamond["spec"]


def test_diamond_has_the_shape_of_the_brief() -> None:
    (diamond,) = [d for d in EXAMPLES if d["metadata"]["name"] == "parallel-pipeline"]
    edges = {f["name"]: f.get("dependsOn", {}).get("targets", []) for f in diamond["spec"]["flows"]}
    assert edges == {
        "data-download": [],
        "feature-engineering": ["data-download"],
        "model-training-v1": ["data-download"],
        "model-training-v2": ["feature-engineering"],
        "model-ensemble": ["model-training-v1", "model-training-v2"],
    }


PHASE_SCRIPT = re.compile(r"(?:[A-Z][a-z]+:\d+s,)+(?:Completed|Failed|Terminated|Aborted)")


@pytest.mark.parametrize(
    "document", [d for d in EXAMPLES if d["kind"] == "JobTemplate"], ids=lambda d: d["metadata"]["name"]
)
def test_example_templates_carry_a_short_simulator_script(document: dict[str, Any]) -> None:
    for task in document["spec"]["tasks"]:
        script = task["template"]["metadata"]["annotations"][PHASES_ANNOTATION]
        assert PHASE_SCRIPT.fullmatch(script), script
        seconds = sum(int(step.split(":")[1].rstrip("s")) for step in script.split(",")[:-1])
        assert 2 <= seconds <= 10
