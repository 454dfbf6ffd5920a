"""The three CustomResourceDefinitions (JobFlow, JobTemplate, Volcano Job), built as dicts.

``hack/gen_crds.py`` writes them out: the JobFlow and JobTemplate CRDs to ``manifests/crds/`` (what
``kubectl apply -k manifests/`` installs), Volcano's Job CRD to ``hack/local-crds/`` (for the local
control plane only: a cluster that runs Volcano has its own, which must not be overwritten), and
the CEL rules as the JSON patch of the optional kustomize Component ``manifests/crd-validation/``.
Tests and the local control plane import them from here, e.g. ``jobflow_crd(with_rules=True)`` for
the JobFlow CRD with that Component's patch applied.

What upstream's controller-gen output (``config/crd/*/bases``) looks like, and so what this builds:

* no descriptions (upstream generates with ``maxDescLen=0``), keys sorted, the two annotations
  ``controller-gen.kubebuilder.io/version: v0.20.0`` and ``helm.sh/resource-policy: keep``;
* the Volcano ``JobSpec`` written out here field by field (its markers: minimums, patterns, enums,
  and the defaults ``maxRetry: 3``, ``queue: default``, ``networkTopology.mode: hard``,
  ``partitionPolicy.minPartitions: 0``);
* the Kubernetes types it embeds (``PodTemplateSpec`` for tasks, ``PersistentVolumeClaimSpec`` for
  volumes) converted from the OpenAPI schemas shipped in ``kubernetes-validate`` for the Kubernetes
  minor upstream builds against (``KUBERNETES_SCHEMA_VERSION``) into structural schemas: every
  ``$ref`` inlined, ``type: [X, "null"]`` made ``type: X``, the ``IntOrString`` and ``Quantity``
  unions made ``x-kubernetes-int-or-string``, list and map types kept, enums dropped
  (controller-gen ignores Kubernetes' ``+enum``), and the handful of ``+default`` markers of
  ``k8s.io/api`` (which the OpenAPI v2 schemas lack) restored from a table;
* an embedded ``ObjectMeta`` as controller-gen's ``generateEmbeddedObjectMeta`` emits it: only
  ``annotations``, ``finalizers``, ``labels``, ``name`` and ``namespace``.

The result is upstream's CRDs exactly: parsed, ``upstream_jobflow_crd()``, ``jobtemplate_crd()`` and
``job_crd()`` are equal to volcano-sh/volcano's committed
``config/crd/jobflow/bases/flow.volcano.sh_{jobflows,jobtemplates}.yaml`` and
``config/crd/volcano/bases/batch.volcano.sh_jobs.yaml`` (``UPSTREAM_CRD_SHA256`` pins them).

The JobFlow CRD we ship (``jobflow_crd()``) is upstream's plus one additive, optional field,
``spec.flows[].retry`` (``retry_field_patch``, docs/retry.md): without it the API server would prune
the retry policy. An object valid for upstream's CRD is valid for ours and stored the same.

Beyond upstream, and only in the optional Component, the JobFlow CRD gets CEL rules on
``spec.flows`` so that an API server rejects duplicate names, undefined targets and
self-dependencies even without the webhook (longer cycles need the webhook or the controller), and
the bounds (``maxItems``, ``maxLength``) those rules need to be admitted; see the comment above
``MAX_FLOWS`` for the cost reasoning.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final

import yaml

__all__ = [
    "CONTROLLER_GEN_VERSION",
    "CRD_FILES",
    "DEFAULT_RETRY_BACKOFF",
    "JOB_CRD_FILE",
    "KUBERNETES_SCHEMA_VERSION",
    "MAX_FLOWS",
    "MAX_FLOW_NAME_LENGTH",
    "MAX_TARGETS",
    "RETRY_FIELD_POINTER",
    "UPSTREAM_CRD_SHA256",
    "VALIDATION_PATCH_FILE",
    "all_crds",
    "apply_patch",
    "canonical_sha256",
    "generated_files",
    "job_crd",
    "job_spec_schema",
    "jobflow_crd",
    "jobtemplate_crd",
    "render_crd",
    "render_validation_patch",
    "retry_field_patch",
    "retry_schema",
    "upstream_jobflow_crd",
    "validation_patch",
    "without_retry_field",
]

JSONDict = dict[str, Any]

CONTROLLER_GEN_VERSION: Final = "v0.20.0"
#: The directory of kubernetes-validate's schema set the embedded Kubernetes types come from: the
#: minor of the ``k8s.io/api`` upstream's go.mod pins (v0.36.1 at volcano-sh/volcano ed72c7c81).
#: A newer set adds pod-template fields upstream's CRDs lack (1.37: ``evictionResponders``,
#: ``volumeMounts[].bindMountOptions``, probes' ``grpc.mode`` and ``httpGet.protocol``, ``emptyDir.mode``,
#: the projected volumes' ``defaultUser``/``user``), which Volcano's own Job CRD would then prune.
KUBERNETES_SCHEMA_VERSION: Final = "v1.36.0-local"

#: sha256 of upstream's committed CRDs, parsed and dumped as canonical JSON (``canonical_sha256``):
#: volcano-sh/volcano ed72c7c81 (2026-08-20), ``config/crd/jobflow/bases/`` and
#: ``config/crd/volcano/bases/``. ``all_crds()`` must hash the same.
UPSTREAM_CRD_SHA256: Final[Mapping[str, str]] = {
    "jobflows.flow.volcano.sh": "ac6fa01c9d5eabb919f5cf3bde201707c84cdd5b567acb523d1e5061b75a0e85",
    "jobtemplates.flow.volcano.sh": "20b5e3a82bb054ed85ddd5afa2b948b678ac1423ec646a3dedd103cba7208bb7",
    "jobs.batch.volcano.sh": "bdaa9d392f30c6544873ba58d3c834b3784aaa7fe9f816b62ee0c6492cccef15",
}

#: Where spec.flows' schema is in the JobFlow CRD, as a JSON pointer.
_FLOWS_POINTER: Final = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/flows"
#: Where our one additive field goes: ``spec.flows[].retry``.
RETRY_FIELD_POINTER: Final = f"{_FLOWS_POINTER}/items/properties/retry"
#: ``spec.flows[].retry.backoff`` when left out (the API server fills it in).
DEFAULT_RETRY_BACKOFF: Final = "0s"

# --------------------------------------------------------------------------------------------
# CEL rules on spec.flows, and the bounds their cost needs (the Component manifests/crd-validation/).
#
# Budgets (k8s.io/apiextensions-apiserver and k8s.io/apiserver v0.37.2): when a CRD is created or
# updated the API server estimates every x-kubernetes-validations rule's worst-case cost from the
# maxItems/maxLength bounds of what it reads, and refuses the CRD if one rule (times the number of
# times it can run) exceeds 10,000,000 (StaticEstimatedCostLimit) or all rules together exceed
# 100,000,000 (StaticEstimatedCRDCostLimit). At run time one evaluation may not cost more than
# 1,000,000 (PerCallLimit) and all rules for one object not more than 10,000,000
# (RuntimeCELCostBudget); a valid object over those limits would be refused. So the bounds are
# chosen so that every rule's *estimate* is under the 1,000,000 per-call limit: whatever fits the
# schema can always be evaluated.
#
# Uniqueness is quadratic whatever the spelling (CEL cannot build a set from a list without
# failing on the very duplicates to be reported): `distinct()` is estimated (and charged) at
# 2 * n^2, against about 108 * n^2 for `self.all(f, self.exists_one(g, g.name == f.name))` with
# 253-character names. It fixes maxItems of flows: 2 * 500^2 = 500,000, leaving room for the rest.
#
# The targets rule builds a name -> index map once (`transformMapEntry`, bound to `names` by
# iterating over a one-element list, since the Kubernetes CEL environment has no cel.bind) and then
# costs about 6 per target (a map lookup is O(1) in the estimate), instead of flows x targets x
# flows for `self.exists(g, g.name == t)` per target (10,900,512,002 for 1000 flows of 100
# targets). transformMapEntry fails on a duplicate key, so the rule first checks uniqueness and
# leaves duplicates to the uniqueness rule; that check is most of its cost.
#
# Estimates with MAX_FLOWS = 500, MAX_TARGETS = 100, MAX_FLOW_NAME_LENGTH = 253, from the API
# server's own estimator (apiextensions-apiserver v0.37.2, compiled against this schema):
#   names unique                507,027  (once)
#   targets defined             830,575  (once)
#   no self-dependency              111  (per flow, 55,500 for 500 flows)
#   total                     1,393,102  (limits: 1,000,000 per rule, 10,000,000 per object)
# (600 flows would put the targets rule at 1,116,675, and 200 targets per flow at 1,130,575.)
# The actual cost of a worst-case object (500 flows with 253-character names, 100 targets each)
# measured with the same validator is 1,441,831 for all three rules together.
#
# The rules need CEL libraries of Kubernetes 1.34 (lists `distinct`, two-variable comprehensions
# from 1.32); an API server admits them from 1.35 on (new expressions may use libraries of the
# previous minor). Hence a Component, off by default: manifests/crds/ is upstream's schema, which
# any server takes.
#
# Updates ratchet: none of the rules reads oldSelf, so the API server's CRD validation ratcheting
# (KEP-4008; GA and always on from 1.33, so on every server that admits the rules) lets an UPDATE
# through whatever these rules and bounds say as long as spec.flows is unchanged. spec.flows is the
# nearest correlatable node (flows is an atomic list, whose items are not correlated), so an error
# in a flow (the per-flow rule, a bound on a name) is ratcheted when the whole list is unchanged:
# a metadata-only edit of a JobFlow stored before the rules were installed is never refused, an
# UPDATE that changes spec.flows is checked in full -- the webhook's own ratchet.
#
# The name bound is 253, a DNS-1123 subdomain, the longest name a JobTemplate (which a flow
# names) can have; the validation package refuses, with a message naming the value, names whose
# Job name or label values would be too long.
# --------------------------------------------------------------------------------------------
MAX_FLOWS: Final = 500
MAX_TARGETS: Final = 100
MAX_FLOW_NAME_LENGTH: Final = 253

#: On spec.flows: no two flows share a name.
FLOW_NAMES_UNIQUE_RULE: Final = "self.map(f, f.name).distinct().size() == self.size()"
#: On spec.flows: every target names a flow.
FLOW_TARGETS_DEFINED_RULE: Final = (
    "self.map(f, f.name).distinct().size() != self.size()"
    " || [self.transformMapEntry(i, f, {f.name: i})].all(names, self.all(f,"
    " !has(f.dependsOn) || !has(f.dependsOn.targets) || f.dependsOn.targets.all(t, t in names)))"
)
#: On each flow: it does not wait for itself.
FLOW_NO_SELF_DEPENDENCY_RULE: Final = (
    "!has(self.dependsOn) || !has(self.dependsOn.targets) || !(self.name in self.dependsOn.targets)"
)
#: The messages: upstream's webhook messages (as its ValidatingAdmissionPolicy words them).
FLOW_NAMES_UNIQUE_MESSAGE: Final = "jobflow Flow names must be unique"
FLOW_TARGETS_DEFINED_MESSAGE: Final = "jobflow Flow is not DAG: vertex is not defined"
FLOW_NO_SELF_DEPENDENCY_MESSAGE: Final = "jobflow Flow is not DAG"

_ANNOTATIONS: Final = {
    "controller-gen.kubebuilder.io/version": CONTROLLER_GEN_VERSION,
    "helm.sh/resource-policy": "keep",
}

_DNS1123_SUBDOMAIN_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_DNS1123_LABEL_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_QUANTITY_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

#: Volcano's JobPhase values, in the order of the upstream enum marker.
JOB_PHASES: Final = (
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
)
#: Volcano's bus events a lifecycle policy may react to (``batch/v1alpha1`` Event enum).
_POLICY_EVENTS: Final = (
    "*",
    "PodPending",
    "PodRunning",
    "PodFailed",
    "PodEvicted",
    "Unknown",
    "TaskCompleted",
    "OutOfSync",
    "CommandIssued",
    "JobUpdated",
    "TaskFailed",
)
#: JobFlow phases (``flow/v1alpha1`` Phase enum).
JOB_FLOW_PHASES: Final = ("Succeed", "Terminating", "Failed", "Running", "Pending")

# The +default markers of k8s.io/api types reachable from a PodTemplateSpec, which the OpenAPI v2
# schemas do not carry but controller-gen copies into the CRD: {definition: {property: default}}.
_KUBERNETES_DEFAULTS: Final[Mapping[str, Mapping[str, object]]] = {
    "io.k8s.api.core.v1.AzureDiskVolumeSource": {"fsType": "ext4", "readOnly": False},
    "io.k8s.api.core.v1.ConfigMapEnvSource": {"name": ""},
    "io.k8s.api.core.v1.ConfigMapKeySelector": {"name": ""},
    "io.k8s.api.core.v1.ConfigMapProjection": {"name": ""},
    "io.k8s.api.core.v1.ConfigMapVolumeSource": {"name": ""},
    "io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.FileKeySelector": {"optional": False},
    "io.k8s.api.core.v1.GRPCAction": {"service": ""},
    "io.k8s.api.core.v1.ISCSIVolumeSource": {"iscsiInterface": "default"},
    "io.k8s.api.core.v1.LocalObjectReference": {"name": ""},
    "io.k8s.api.core.v1.RBDVolumeSource": {"keyring": "/etc/ceph/keyring", "pool": "rbd", "user": "admin"},
    "io.k8s.api.core.v1.ScaleIOVolumeSource": {"fsType": "xfs", "storageMode": "ThinProvisioned"},
    "io.k8s.api.core.v1.SecretEnvSource": {"name": ""},
    "io.k8s.api.core.v1.SecretKeySelector": {"name": ""},
    "io.k8s.api.core.v1.SecretProjection": {"name": ""},
}

# Definitions that embed LocalObjectReference, which is +structType=atomic: controller-gen makes the
# embedding struct atomic too (openapi-gen does not), so the CRD marks them.
_EMBEDS_ATOMIC_REFERENCE: Final = frozenset(
    {
        "io.k8s.api.core.v1.ConfigMapEnvSource",
        "io.k8s.api.core.v1.ConfigMapProjection",
        "io.k8s.api.core.v1.ConfigMapVolumeSource",
        "io.k8s.api.core.v1.SecretEnvSource",
        "io.k8s.api.core.v1.SecretProjection",
    }
)

_OBJECT_META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_INT_OR_STRING: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"

# Keywords of the OpenAPI schemas that carry over unchanged into a structural CRD schema.
_KEPT_KEYWORDS: Final = (
    "format",
    "required",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
)
# Keywords that have no place in a CRD schema (documentation, strategic-merge-patch hints, Go
# union hints, and enums, which controller-gen does not emit for Kubernetes types).
_DROPPED_KEYWORDS: Final = frozenset(
    {
        "description",
        "enum",
        "x-kubernetes-group-version-kind",
        "x-kubernetes-patch-merge-key",
        "x-kubernetes-patch-strategy",
        "x-kubernetes-unions",
    }
)


# --------------------------------------------------------------------------------------------
# Kubernetes types, from the OpenAPI schemas
# --------------------------------------------------------------------------------------------


@functools.cache
def _kubernetes_definitions() -> Mapping[str, Any]:
    path = (
        resources.files("kubernetes_validate")
        / "kubernetes-json-schema"
        / KUBERNETES_SCHEMA_VERSION
        / "_definitions.json"
    )
    definitions: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))["$defs"]
    return definitions


def _embedded_object_meta() -> JSONDict:
    string_map = {"additionalProperties": {"type": "string"}, "type": "object"}
    return {
        "properties": {
            "annotations": copy.deepcopy(string_map),
            "finalizers": {"items": {"type": "string"}, "type": "array"},
            "labels": copy.deepcopy(string_map),
            "name": {"type": "string"},
            "namespace": {"type": "string"},
        },
        "type": "object",
    }


def _int_or_string(pattern: str | None = None) -> JSONDict:
    schema: JSONDict = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    if pattern is not None:
        schema["pattern"] = pattern
    schema["x-kubernetes-int-or-string"] = True
    return schema


def _single_type(value: object, where: str) -> str:
    # The OpenAPI schemas mark optional fields nullable with ``type: [X, "null"]``; a structural
    # schema has one type, and the API server prunes nulls of fields that are not nullable.
    types = value if isinstance(value, list) else [value]
    concrete = [t for t in types if t != "null"]
    if len(concrete) != 1 or not isinstance(concrete[0], str):
        raise ValueError(f"{where}: cannot make a structural type of {value!r}")
    return concrete[0]


class _Converter:
    """Inlines Kubernetes OpenAPI definitions into structural CRD schemas."""

    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self._definitions = definitions
        self._stack: list[str] = []

    def definition(self, name: str) -> JSONDict:
        if name == _OBJECT_META:
            return _embedded_object_meta()
        if name == _INT_OR_STRING:
            return _int_or_string()
        if name == _QUANTITY:
            return _int_or_string(_QUANTITY_PATTERN)
        if name in self._stack:
            raise ValueError(f"recursive definition {' -> '.join([*self._stack, name])}")
        self._stack.append(name)
        try:
            schema = self.schema(self._definitions[name], name)
        finally:
            self._stack.pop()
        for prop, default in _KUBERNETES_DEFAULTS.get(name, {}).items():
            schema["properties"][prop] = _sorted({**schema["properties"][prop], "default": default})
        if name in _EMBEDS_ATOMIC_REFERENCE:
            schema["x-kubernetes-map-type"] = "atomic"
        return _sorted(schema)

    def schema(self, node: Mapping[str, Any], where: str) -> JSONDict:
        if "$ref" in node:
            extra = set(node) - {"$ref"} - _DROPPED_KEYWORDS
            if extra:
                raise ValueError(f"{where}: unexpected keywords beside $ref: {sorted(extra)}")
            return self.definition(str(node["$ref"]).rsplit("/", 1)[-1])
        unknown = set(node) - _DROPPED_KEYWORDS - set(_KEPT_KEYWORDS)
        unknown -= {"type", "properties", "items", "additionalProperties"}
        if unknown:
            raise ValueError(f"{where}: unsupported keywords {sorted(unknown)}")
        out: JSONDict = {}
        if "additionalProperties" in node:
            extra_schema = node["additionalProperties"]
            if not isinstance(extra_schema, Mapping):
                raise ValueError(f"{where}: additionalProperties must be a schema")
            out["additionalProperties"] = self.schema(extra_schema, f"{where}{{}}")
        for keyword in _KEPT_KEYWORDS:
            if keyword in node:
                out[keyword] = copy.deepcopy(node[keyword])
        if "required" in out:
            # controller-gen lists required properties alphabetically.
            out["required"] = sorted(out["required"])
        if "items" in node:
            out["items"] = self.schema(node["items"], f"{where}[]")
        if "properties" in node:
            out["properties"] = {
                prop: self.schema(node["properties"][prop], f"{where}.{prop}") for prop in sorted(node["properties"])
            }
        out["type"] = _single_type(node.get("type"), where)
        return _sorted(out)


def _kubernetes_type(name: str) -> JSONDict:
    return _Converter(_kubernetes_definitions()).definition(name)


def _sorted(schema: JSONDict) -> JSONDict:
    return {key: schema[key] for key in sorted(schema)}


# --------------------------------------------------------------------------------------------
# Small schema builders for the hand-written Volcano types
# --------------------------------------------------------------------------------------------


def _obj(properties: Mapping[str, JSONDict], required: list[str] | None = None, **extra: Any) -> JSONDict:
    schema: JSONDict = {"properties": {key: properties[key] for key in sorted(properties)}}
    if required:
        schema["required"] = required
    schema["type"] = "object"
    schema.update(extra)
    return _sorted(schema)


def _str(**extra: Any) -> JSONDict:
    return _sorted({"type": "string", **extra})


def _int32(**extra: Any) -> JSONDict:
    return _sorted({"format": "int32", "type": "integer", **extra})


def _int(**extra: Any) -> JSONDict:
    return _sorted({"type": "integer", **extra})


def _array(items: JSONDict, **extra: Any) -> JSONDict:
    return _sorted({"items": items, "type": "array", **extra})


def _map(values: JSONDict) -> JSONDict:
    return {"additionalProperties": values, "type": "object"}


def _date_time() -> JSONDict:
    return {"format": "date-time", "type": "string"}


# --------------------------------------------------------------------------------------------
# batch.volcano.sh/v1alpha1 Job
# --------------------------------------------------------------------------------------------


def _network_topology() -> JSONDict:
    return _obj(
        {
            "highestTierAllowed": _int(minimum=0),
            "highestTierName": _str(maxLength=253),
            "mode": _str(default="hard", enum=["hard", "soft"]),
        }
    )


def _lifecycle_policies() -> JSONDict:
    return _array(
        _obj(
            {
                "action": _str(),
                "event": _str(enum=list(_POLICY_EVENTS)),
                "events": _array(_str(enum=list(_POLICY_EVENTS))),
                "exitCode": _int32(),
                "timeout": _str(),
            }
        )
    )


def _task_spec() -> JSONDict:
    return _obj(
        {
            "dependsOn": _obj({"iteration": _str(), "name": _array(_str())}),
            "maxRetry": _int32(minimum=0),
            "minAvailable": _int32(minimum=0),
            "name": _str(maxLength=63, pattern=_DNS1123_LABEL_PATTERN),
            "partitionPolicy": _obj(
                {
                    "minPartitions": _int32(default=0, minimum=0),
                    "networkTopology": _network_topology(),
                    "partitionSize": _int32(minimum=1),
                    "totalPartitions": _int32(minimum=1),
                },
                required=["partitionSize", "totalPartitions"],
            ),
            "policies": _lifecycle_policies(),
            "replicas": _int32(minimum=0),
            "template": _kubernetes_type("io.k8s.api.core.v1.PodTemplateSpec"),
            "topologyPolicy": _str(enum=["none", "best-effort", "restricted", "single-numa-node"]),
        }
    )


def job_spec_schema() -> JSONDict:
    """The schema of Volcano's ``JobSpec``: a Job's ``spec``, a JobTemplate's ``spec``, ``patch.jobSpec``."""
    return _obj(
        {
            "maxRetry": _int32(default=3, minimum=0),
            "minAvailable": _int32(minimum=0),
            "minSuccess": _int32(minimum=1),
            "networkTopology": _network_topology(),
            "plugins": _map(_array(_str())),
            "policies": _lifecycle_policies(),
            "priorityClassName": _str(maxLength=253, pattern=_DNS1123_SUBDOMAIN_PATTERN),
            "queue": _str(default="default", maxLength=253, pattern=_DNS1123_SUBDOMAIN_PATTERN),
            "runningEstimate": _str(),
            "schedulerName": _str(maxLength=63),
            "tasks": _array(_task_spec(), minItems=1),
            "ttlSecondsAfterFinished": _int32(minimum=0),
            "volumes": _array(
                _obj(
                    {
                        "mountPath": _str(minLength=1, pattern="^[^:]+$"),
                        "volumeClaim": _kubernetes_type("io.k8s.api.core.v1.PersistentVolumeClaimSpec"),
                        "volumeClaimName": _str(maxLength=253),
                    },
                    required=["mountPath"],
                )
            ),
        }
    )


def _task_state() -> JSONDict:
    # Volcano's TaskState: {phase: {<PodPhase>: count}}.
    return _obj({"phase": _map(_int32())})


def _job_status_schema() -> JSONDict:
    counter = _int32(minimum=0)
    return _obj(
        {
            "conditions": _array(_obj({"lastTransitionTime": _date_time(), "status": _str()}, required=["status"])),
            "controlledResources": _map(_str()),
            "failed": dict(counter),
            "minAvailable": dict(counter),
            "pending": dict(counter),
            "retryCount": dict(counter),
            "running": dict(counter),
            "runningDuration": _str(),
            "state": _obj(
                {
                    "lastTransitionTime": _date_time(),
                    "message": _str(),
                    "phase": _str(enum=list(JOB_PHASES)),
                    "reason": _str(),
                }
            ),
            "succeeded": dict(counter),
            "taskStatusCount": _map(_task_state()),
            "terminating": dict(counter),
            "unknown": dict(counter),
            "version": dict(counter),
        }
    )


def _root(spec: JSONDict, status: JSONDict) -> JSONDict:
    return _obj(
        {
            "apiVersion": _str(),
            "kind": _str(),
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        }
    )


def _crd(
    group: str,
    kind: str,
    plural: str,
    singular: str,
    short_names: list[str],
    schema: JSONDict,
    printer_columns: list[JSONDict] | None = None,
) -> JSONDict:
    version: JSONDict = {}
    if printer_columns:
        version["additionalPrinterColumns"] = printer_columns
    version.update(
        {
            "name": "v1alpha1",
            "schema": {"openAPIV3Schema": schema},
            "served": True,
            "storage": True,
            "subresources": {"status": {}},
        }
    )
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"annotations": dict(_ANNOTATIONS), "name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "shortNames": short_names,
                "singular": singular,
            },
            "scope": "Namespaced",
            "versions": [version],
        },
    }


def job_crd() -> JSONDict:
    """``jobs.batch.volcano.sh``, for the local control plane (Volcano itself is not installed there)."""
    return _crd(
        "batch.volcano.sh",
        "Job",
        "jobs",
        "job",
        ["vcjob", "vj"],
        _root(job_spec_schema(), _job_status_schema()),
        [
            {"jsonPath": ".status.state.phase", "name": "STATUS", "type": "string"},
            {"jsonPath": ".status.minAvailable", "name": "minAvailable", "type": "integer"},
            {"jsonPath": ".status.running", "name": "RUNNINGS", "type": "integer"},
            {"jsonPath": ".metadata.creationTimestamp", "name": "AGE", "type": "date"},
            {"jsonPath": ".spec.queue", "name": "QUEUE", "priority": 1, "type": "string"},
        ],
    )


# --------------------------------------------------------------------------------------------
# flow.volcano.sh/v1alpha1 JobTemplate and JobFlow
# --------------------------------------------------------------------------------------------


def jobtemplate_crd() -> JSONDict:
    """``jobtemplates.flow.volcano.sh``: ``spec`` is a Volcano JobSpec."""
    return _crd(
        "flow.volcano.sh",
        "JobTemplate",
        "jobtemplates",
        "jobtemplate",
        ["jt"],
        _root(job_spec_schema(), _obj({"jobDependsOnList": _array(_str())})),
    )


def _probe() -> JSONDict:
    port = _int(maximum=65535, minimum=0)
    task_name = _str(maxLength=253)
    return _obj(
        {
            "httpGetList": _array(
                _obj(
                    {
                        "httpHeader": _obj({"name": _str(), "value": _str()}, required=["name", "value"]),
                        "path": _str(),
                        "port": dict(port),
                        "taskName": dict(task_name),
                    }
                )
            ),
            "taskStatusList": _array(_obj({"phase": _str(maxLength=63), "taskName": dict(task_name)})),
            "tcpSocketList": _array(_obj({"port": dict(port), "taskName": dict(task_name)}, required=["port"])),
        }
    )


def _flows() -> JSONDict:
    flow = _obj(
        {
            "dependsOn": _obj({"probe": _probe(), "targets": _array(_str())}),
            "name": _str(minLength=1),
            "patch": _obj({"jobSpec": job_spec_schema()}),
        },
        required=["name"],
    )
    return _array(flow)


def _jobflow_status() -> JSONDict:
    names = _array(_str())
    history = _obj({"endTimestamp": _date_time(), "startTimestamp": _date_time(), "state": _str()})
    return _obj(
        {
            "completedJobs": copy.deepcopy(names),
            "conditions": _map(
                _obj(
                    {
                        "createTime": _date_time(),
                        "phase": _str(),
                        "runningDuration": _str(),
                        "taskStatusCount": _map(_task_state()),
                    }
                )
            ),
            "failedJobs": copy.deepcopy(names),
            "jobStatusList": _array(
                _obj(
                    {
                        "endTimestamp": _date_time(),
                        "name": _str(),
                        "restartCount": _int32(minimum=0),
                        "runningHistories": _array(history),
                        "startTimestamp": _date_time(),
                        "state": _str(),
                    }
                )
            ),
            "pendingJobs": copy.deepcopy(names),
            "runningJobs": copy.deepcopy(names),
            "state": _obj({"phase": _str(enum=list(JOB_FLOW_PHASES))}),
            "terminatedJobs": copy.deepcopy(names),
            "unKnowJobs": copy.deepcopy(names),
        }
    )


def upstream_jobflow_crd() -> JSONDict:
    """``jobflows.flow.volcano.sh`` exactly as upstream ships it (``UPSTREAM_CRD_SHA256`` pins it)."""
    spec = _obj(
        {
            "flows": _flows(),
            "jobRetainPolicy": _str(enum=["retain", "delete"]),
        }
    )
    return _crd(
        "flow.volcano.sh",
        "JobFlow",
        "jobflows",
        "jobflow",
        ["jf"],
        _root(spec, _jobflow_status()),
        [
            {"jsonPath": ".status.state.phase", "name": "Status", "type": "string"},
            {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
        ],
    )


def retry_schema() -> JSONDict:
    """``spec.flows[].retry`` (ours, docs/retry.md): ``maxRetries`` required and >= 0, ``backoff`` "0s" by default.

    ``backoff`` is a Go duration string; its syntax is the webhook's to check (a pattern here would
    refuse a bad one with the API server's generic message instead of the webhook's precise one).
    """
    return _obj(
        {"backoff": _str(default=DEFAULT_RETRY_BACKOFF), "maxRetries": _int32(minimum=0)},
        required=["maxRetries"],
    )


def retry_field_patch() -> list[JSONDict]:
    """The one difference between our JobFlow CRD and upstream's: an ``add`` of ``spec.flows[].retry``."""
    return [{"op": "add", "path": RETRY_FIELD_POINTER, "value": retry_schema()}]


def without_retry_field(crd: Mapping[str, Any]) -> JSONDict:
    """``crd`` (not modified) without ``spec.flows[].retry``: undoes ``retry_field_patch``; KeyError if absent."""
    result: JSONDict = copy.deepcopy(dict(crd))
    *parents, last = [_unescape(step) for step in RETRY_FIELD_POINTER.split("/")[1:]]
    node: Any = result
    for step in parents:
        node = node[int(step)] if isinstance(node, list) else node[step]
    del node[last]
    return result


def jobflow_crd(with_rules: bool = False) -> JSONDict:
    """``jobflows.flow.volcano.sh`` as we ship it; ``with_rules=True`` adds the CEL rules and bounds.

    Upstream's CRD plus one additive, optional field, ``spec.flows[].retry`` (``retry_field_patch``).
    With the rules it is what ``kubectl kustomize`` makes of ``manifests/crds`` with the Component
    ``manifests/crd-validation`` (``validation_patch()`` applied).
    """
    crd = apply_patch(upstream_jobflow_crd(), retry_field_patch())
    return apply_patch(crd, validation_patch()) if with_rules else crd


# --------------------------------------------------------------------------------------------
# The CEL rules as a JSON patch (RFC 6902), the Component's
# --------------------------------------------------------------------------------------------


def validation_patch() -> list[JSONDict]:
    """The JSON patch ``manifests/crd-validation/`` applies to ``jobflows.flow.volcano.sh``: only ``add``s.

    The rules on ``spec.flows`` (unique names, defined targets) and on each flow (no
    self-dependency), and the bounds their cost estimate needs: ``maxItems`` of flows and of
    targets, ``maxLength`` of flow names and targets.
    """
    flows = _FLOWS_POINTER
    flow = f"{flows}/items"
    targets = f"{flow}/properties/dependsOn/properties/targets"
    return [
        {"op": "add", "path": f"{flows}/maxItems", "value": MAX_FLOWS},
        {
            "op": "add",
            "path": f"{flows}/x-kubernetes-validations",
            "value": [
                {"message": FLOW_NAMES_UNIQUE_MESSAGE, "rule": FLOW_NAMES_UNIQUE_RULE},
                {"message": FLOW_TARGETS_DEFINED_MESSAGE, "rule": FLOW_TARGETS_DEFINED_RULE},
            ],
        },
        {
            "op": "add",
            "path": f"{flow}/x-kubernetes-validations",
            "value": [{"message": FLOW_NO_SELF_DEPENDENCY_MESSAGE, "rule": FLOW_NO_SELF_DEPENDENCY_RULE}],
        },
        {"op": "add", "path": f"{flow}/properties/name/maxLength", "value": MAX_FLOW_NAME_LENGTH},
        {"op": "add", "path": f"{targets}/maxItems", "value": MAX_TARGETS},
        {"op": "add", "path": f"{targets}/items/maxLength", "value": MAX_FLOW_NAME_LENGTH},
    ]


def apply_patch(document: Mapping[str, Any], patch: list[JSONDict]) -> JSONDict:
    """``document`` (not modified) with the ``add`` operations of ``patch`` applied, as kustomize does.

    Only what ``validation_patch`` uses: ``add`` of a new member to an object (array indexes are
    followed, never inserted into). An ``add`` over an existing member raises, so a patch that no
    longer fits the CRD fails loudly here rather than quietly replacing something upstream's.
    """
    result: JSONDict = copy.deepcopy(dict(document))
    for operation in patch:
        if operation["op"] != "add":
            raise ValueError(f"unsupported operation {operation['op']!r}")
        *parents, last = [_unescape(step) for step in operation["path"].split("/")[1:]]
        node: Any = result
        for step in parents:
            node = node[int(step)] if isinstance(node, list) else node[step]
        if not isinstance(node, dict) or last in node:
            raise ValueError(f"cannot add {operation['path']}: no such object, or the member exists")
        node[last] = copy.deepcopy(operation["value"])
    return result


def _unescape(step: str) -> str:
    return step.replace("~1", "/").replace("~0", "~")


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------

#: The CRD files under manifests/crds/ (what `kubectl apply -k manifests/` installs), named as upstream.
CRD_FILES: Final = (
    "flow.volcano.sh_jobflows.yaml",
    "flow.volcano.sh_jobtemplates.yaml",
)
#: Volcano's Job CRD, for the local control plane only (repository-relative).
JOB_CRD_FILE: Final = "hack/local-crds/batch.volcano.sh_jobs.yaml"
#: The Component's JSON patch (repository-relative).
VALIDATION_PATCH_FILE: Final = "manifests/crd-validation/jobflow-validation.yaml"

_HEADER: Final = (
    "# Code generated by hack/gen_crds.py (jobflow_controller/local/crds.py) from the Kubernetes 1.36\n"
    "# OpenAPI schemas in kubernetes-validate. DO NOT EDIT; run `.venv/bin/python hack/gen_crds.py`.\n"
)
_JOBFLOW_CRD_NOTE: Final = (
    "#\n# Upstream's CRD plus one additive, optional field: spec.flows[].retry (docs/retry.md).\n"
)
_JOB_CRD_NOTE: Final = (
    "#\n"
    "# Volcano's own CRD, for the local control plane and the tests, where no Volcano runs. Never apply it\n"
    "# to a cluster that runs Volcano: its chart installs this CRD at the version its job controller needs.\n"
)
_PATCH_HEADER: Final = (
    "# Code generated by hack/gen_crds.py (jobflow_controller/local/crds.py). DO NOT EDIT; run\n"
    "# `.venv/bin/python hack/gen_crds.py`.\n"
    "#\n"
    "# Not upstream: a JSON patch (RFC 6902) of jobflows.flow.volcano.sh adding x-kubernetes-validations on\n"
    "# spec.flows (unique names, defined targets) and on each flow (no self-dependency), and the bounds\n"
    f"# they need: maxItems {MAX_FLOWS} (flows), maxItems {MAX_TARGETS} (targets), maxLength {MAX_FLOW_NAME_LENGTH}"
    " (names, targets).\n"
    "# The bounds keep every rule's estimated CEL cost under the API server's 1,000,000 per-call limit\n"
    "# (estimates 507,027 and 830,575 once, 111 per flow); the rules need Kubernetes 1.35 or later. The\n"
    "# reasoning is in jobflow_controller/local/crds.py.\n"
)


def all_crds() -> dict[str, JSONDict]:
    """Repository-relative path -> CRD, for the three CRD files the generator writes.

    Upstream's schemas, but for the JobFlow CRD's one additive field (``jobflow_crd``).
    """
    return {
        f"manifests/crds/{CRD_FILES[0]}": jobflow_crd(),
        f"manifests/crds/{CRD_FILES[1]}": jobtemplate_crd(),
        JOB_CRD_FILE: job_crd(),
    }


def canonical_sha256(document: object) -> str:
    """sha256 of ``document`` as JSON with sorted keys and no spaces: equal for equal parsed YAML."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class _Dumper(yaml.SafeDumper):
    """Block style, no aliases (the schemas repeat sub-dicts), and long lines kept whole."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # The empty string as controller-gen (sigs.k8s.io/yaml) writes it, "" rather than PyYAML's '':
    # with it the CRD files are byte for byte upstream's below the header.
    if value == "":
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_str(value)


_Dumper.add_representer(str, _represent_str)


def _dump(document: object) -> str:
    return yaml.dump(
        document,
        Dumper=_Dumper,
        default_flow_style=False,
        sort_keys=False,
        width=1 << 16,
        allow_unicode=True,
    )


def render_crd(crd: Mapping[str, Any]) -> str:
    """The YAML text of one CRD file, deterministic for a given CRD."""
    header = _HEADER
    if crd["metadata"]["name"] == "jobs.batch.volcano.sh":
        header += _JOB_CRD_NOTE
    if crd["metadata"]["name"] == "jobflows.flow.volcano.sh" and crd != upstream_jobflow_crd():
        header += _JOBFLOW_CRD_NOTE
    return f"{header}---\n{_dump(dict(crd))}"


def render_validation_patch() -> str:
    """The YAML text of the Component's JSON patch."""
    return f"{_PATCH_HEADER}{_dump(validation_patch())}"


def generated_files() -> dict[str, str]:
    """Repository-relative path -> exact text, for every file hack/gen_crds.py writes."""
    files = {path: render_crd(crd) for path, crd in all_crds().items()}
    files[VALIDATION_PATCH_FILE] = render_validation_patch()
    return files
