"""Schema builders and the CRD envelope, as controller-gen writes them: keys sorted, no descriptions.

Every builder returns a fresh dict with its keys in sorted order, so that the YAML dump (which keeps
insertion order) lists them as controller-gen does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

JSONDict = dict[str, Any]

CONTROLLER_GEN_VERSION: Final = "v0.20.0"

ANNOTATIONS: Final = {
    "controller-gen.kubebuilder.io/version": CONTROLLER_GEN_VERSION,
    "helm.sh/resource-policy": "keep",
}


def sorted_keys(schema: JSONDict) -> JSONDict:
    return {key: schema[key] for key in sorted(schema)}


def obj(properties: Mapping[str, JSONDict], required: list[str] | None = None, **extra: Any) -> JSONDict:
    schema: JSONDict = {"properties": {key: properties[key] for key in sorted(properties)}}
    if required:
        schema["required"] = required
    schema["type"] = "object"
    schema.update(extra)
    return sorted_keys(schema)


def string(**extra: Any) -> JSONDict:
    return sorted_keys({"type": "string", **extra})


def int32(**extra: Any) -> JSONDict:
    return sorted_keys({"format": "int32", "type": "integer", **extra})


def integer(**extra: Any) -> JSONDict:
    return sorted_keys({"type": "integer", **extra})


def array(items: JSONDict, **extra: Any) -> JSONDict:
    return sorted_keys({"items": items, "type": "array", **extra})


def map_of(values: JSONDict) -> JSONDict:
    return {"additionalProperties": values, "type": "object"}


def date_time() -> JSONDict:
    return {"format": "date-time", "type": "string"}


def root(spec: JSONDict, status: JSONDict) -> JSONDict:
    return obj(
        {
            "apiVersion": string(),
            "kind": string(),
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        }
    )


def custom_resource_definition(
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
        "metadata": {"annotations": dict(ANNOTATIONS), "name": f"{plural}.{group}"},
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
