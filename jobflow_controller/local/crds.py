"""The three CustomResourceDefinitions (JobFlow, JobTemplate, Volcano Job), built as dicts.

``hack/gen_crds.py`` writes them to ``manifests/crds/``; tests and the local control plane import
them from here, e.g. ``jobflow_crd(with_rules=False)`` for a JobFlow CRD without the CEL rules.

What upstream's controller-gen output (``config/crd/*/bases``) looks like, and so what this builds:

* no descriptions (upstream generates with ``maxDescLen=0``), keys sorted, the two annotations
  ``controller-gen.kubebuilder.io/version: v0.20.0`` and ``helm.sh/resource-policy: keep``;
* the Volcano ``JobSpec`` written out here field by field (its markers: minimums, patterns, enums,
  and the defaults ``maxRetry: 3``, ``queue: default``, ``networkTopology.mode: hard``,
  ``partitionPolicy.minPartitions: 0``);
* the Kubernetes types it embeds (``PodTemplateSpec`` for tasks, ``PersistentVolumeClaimSpec`` for
  volumes) converted from the Kubernetes 1.37 OpenAPI schemas shipped in ``kubernetes-validate``
  into structural schemas: every ``$ref`` inlined, ``type: [X, "null"]`` made ``type: X``, the
  ``IntOrString`` and ``Quantity`` unions made ``x-kubernetes-int-or-string``, list and map types
  kept, enums dropped (controller-gen ignores Kubernetes' ``+enum``), and the handful of
  ``+default`` markers of ``k8s.io/api`` (which the OpenAPI v2 schemas lack) restored from a table;
* an embedded ``ObjectMeta`` as controller-gen's ``generateEmbeddedObjectMeta`` emits it: only
  ``annotations``, ``finalizers``, ``labels``, ``name`` and ``namespace``.

Beyond upstream, the JobFlow CRD has CEL rules on ``spec.flows`` so that an API server rejects
duplicate names, undefined targets and self-dependencies even without the webhook (longer cycles
need the webhook or the controller), and the bounds (``maxItems``, ``maxLength``) those rules need
to be admitted; see the comment above ``MAX_FLOWS`` for the cost reasoning.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final

import yaml

__all__ = [
    "CONTROLLER_GEN_VERSION",
    "CRD_FILES",
    "KUBERNETES_SCHEMA_VERSION",
    "MAX_FLOWS",
    "MAX_FLOW_NAME_LENGTH",
    "MAX_TARGETS",
    "all_crds",
    "crd_files",
    "job_crd",
    "job_spec_schema",
    "jobflow_crd",
    "jobtemplate_crd",
    "render_crd",
]

JSONDict = dict[str, Any]

CONTROLLER_GEN_VERSION: Final = "v0.20.0"
#: The directory of kubernetes-validate's schema set the embedded Kubernetes types come from.
KUBERNETES_SCHEMA_VERSION: Final = "v1.37.0-local"

# --------------------------------------------------------------------------------------------
# CEL rules on spec.flows, and the bounds their cost needs.
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
# previous minor). `jobflow_crd(with_rules=False)` is upstream's schema for older servers.
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


def _flow_rules() -> list[JSONDict]:
    return [
        {"message": FLOW_NAMES_UNIQUE_MESSAGE, "rule": FLOW_NAMES_UNIQUE_RULE},
        {"message": FLOW_TARGETS_DEFINED_MESSAGE, "rule": FLOW_TARGETS_DEFINED_RULE},
    ]


def _flows(with_rules: bool) -> JSONDict:
    name_bound: JSONDict = {"maxLength": MAX_FLOW_NAME_LENGTH} if with_rules else {}
    flow_extra: JSONDict = {}
    if with_rules:
        flow_extra["x-kubernetes-validations"] = [
            {"message": FLOW_NO_SELF_DEPENDENCY_MESSAGE, "rule": FLOW_NO_SELF_DEPENDENCY_RULE}
        ]
    flow = _obj(
        {
            "dependsOn": _obj(
                {
                    "probe": _probe(),
                    "targets": _array(_str(**name_bound), **({"maxItems": MAX_TARGETS} if with_rules else {})),
                }
            ),
            "name": _str(minLength=1, **name_bound),
            "patch": _obj({"jobSpec": job_spec_schema()}),
        },
        required=["name"],
        **flow_extra,
    )
    flows_extra: JSONDict = {}
    if with_rules:
        flows_extra["maxItems"] = MAX_FLOWS
        flows_extra["x-kubernetes-validations"] = _flow_rules()
    return _array(flow, **flows_extra)


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


def jobflow_crd(with_rules: bool = True) -> JSONDict:
    """``jobflows.flow.volcano.sh``; ``with_rules=False`` gives upstream's schema, without CEL rules or bounds."""
    spec = _obj(
        {
            "flows": _flows(with_rules),
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


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------

#: The file names under manifests/crds/, as upstream names them.
CRD_FILES: Final = (
    "batch.volcano.sh_jobs.yaml",
    "flow.volcano.sh_jobflows.yaml",
    "flow.volcano.sh_jobtemplates.yaml",
)

_HEADER: Final = (
    "# Code generated by hack/gen_crds.py (jobflow_controller/local/crds.py) from the Kubernetes 1.37\n"
    "# OpenAPI schemas in kubernetes-validate. DO NOT EDIT; run `.venv/bin/python hack/gen_crds.py`.\n"
)
_JOBFLOW_NOTE: Final = (
    "#\n"
    "# Not upstream: the x-kubernetes-validations on spec.flows (unique names, defined targets, no\n"
    f"# self-dependency) and the bounds they need, maxItems {MAX_FLOWS} (flows), maxItems {MAX_TARGETS} (targets)\n"
    f"# and maxLength {MAX_FLOW_NAME_LENGTH} (names). The bounds keep every rule's estimated CEL cost under the API\n"
    "# server's 1,000,000 per-call limit (estimates 507,027 and 830,575 once, 111 per flow); the rules\n"
    "# need Kubernetes 1.35 or later. The reasoning is in jobflow_controller/local/crds.py.\n"
)


def all_crds() -> dict[str, JSONDict]:
    """File name under manifests/crds/ -> CRD, for every CRD the project ships."""
    return {
        "batch.volcano.sh_jobs.yaml": job_crd(),
        "flow.volcano.sh_jobflows.yaml": jobflow_crd(with_rules=True),
        "flow.volcano.sh_jobtemplates.yaml": jobtemplate_crd(),
    }


class _Dumper(yaml.SafeDumper):
    """Block style, no aliases (the schemas repeat sub-dicts), and long lines kept whole."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def render_crd(crd: Mapping[str, Any]) -> str:
    """The YAML text of one CRD file, deterministic for a given CRD."""
    body = yaml.dump(
        dict(crd),
        Dumper=_Dumper,
        default_flow_style=False,
        sort_keys=False,
        width=1 << 16,
        allow_unicode=True,
    )
    header = _HEADER
    if _has_validations(crd):
        header += _JOBFLOW_NOTE
    return f"{header}---\n{body}"


def crd_files() -> dict[str, str]:
    """File name under manifests/crds/ -> its exact text: what hack/gen_crds.py writes."""
    return {name: render_crd(crd) for name, crd in all_crds().items()}


def _has_validations(node: object) -> bool:
    if isinstance(node, Mapping):
        return "x-kubernetes-validations" in node or any(_has_validations(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_validations(v) for v in node)
    return False
