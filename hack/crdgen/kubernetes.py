"""The Kubernetes types a Volcano Job embeds, as structural CRD schemas from the OpenAPI definitions.

controller-gen inlines ``PodTemplateSpec`` and ``PersistentVolumeClaimSpec`` into Volcano's CRDs;
here they come from the OpenAPI schemas shipped in ``kubernetes-validate`` for the Kubernetes minor
upstream builds against: every ``$ref`` inlined, ``type: [X, "null"]`` made ``type: X``, the
``IntOrString`` and ``Quantity`` unions made ``x-kubernetes-int-or-string``, list and map types kept,
enums dropped (controller-gen ignores Kubernetes' ``+enum``), and the ``+default`` markers of
``k8s.io/api`` (which the OpenAPI v2 schemas lack) restored from a table.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final

from crdgen.schema import JSONDict, sorted_keys

#: The directory of kubernetes-validate's schema set the embedded Kubernetes types come from: the
#: minor of the ``k8s.io/api`` upstream's go.mod pins (v0.36.1 at volcano-sh/volcano ed72c7c81).
#: A newer set adds pod-template fields upstream's CRDs lack (1.37: ``evictionResponders``,
#: ``volumeMounts[].bindMountOptions``, probes' ``grpc.mode`` and ``httpGet.protocol``, ``emptyDir.mode``,
#: the projected volumes' ``defaultUser``/``user``), which Volcano's own Job CRD would then prune.
KUBERNETES_SCHEMA_VERSION: Final = "v1.36.0-local"

_QUANTITY_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

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
            schema["properties"][prop] = sorted_keys({**schema["properties"][prop], "default": default})
        if name in _EMBEDS_ATOMIC_REFERENCE:
            schema["x-kubernetes-map-type"] = "atomic"
        return sorted_keys(schema)

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
        return sorted_keys(out)


def kubernetes_type(name: str) -> JSONDict:
    return _Converter(_kubernetes_definitions()).definition(name)
