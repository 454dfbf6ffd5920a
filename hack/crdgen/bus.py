"""``commands.bus.volcano.sh``: Volcano's Command, for the local control plane, where no Volcano runs.

Upstream's schema (``bus/v1alpha1`` ``Command``: ``action``, ``target`` an ``OwnerReference``,
``reason``, ``message``), without the descriptions, which upstream keeps in this one CRD (it is
generated without ``maxDescLen=0``); ``UPSTREAM_CRD_SHA256`` pins it against upstream's file with its
descriptions removed. No ``spec``, no ``status`` subresource, no short names, as upstream.
"""

from __future__ import annotations

from crdgen.schema import ANNOTATIONS, JSONDict, obj, string


def _owner_reference() -> JSONDict:
    boolean: JSONDict = {"type": "boolean"}
    return obj(
        {
            "apiVersion": string(),
            "blockOwnerDeletion": dict(boolean),
            "controller": dict(boolean),
            "kind": string(),
            "name": string(),
            "uid": string(),
        },
        required=["apiVersion", "kind", "name", "uid"],
        **{"x-kubernetes-map-type": "atomic"},
    )


def command_crd() -> JSONDict:
    """``commands.bus.volcano.sh`` as upstream's ``config/crd/volcano/bases`` has it, descriptions aside."""
    schema = obj(
        {
            "action": string(),
            "apiVersion": string(),
            "kind": string(),
            "message": string(),
            "metadata": {"type": "object"},
            "reason": string(),
            "target": _owner_reference(),
        }
    )
    version: JSONDict = {"name": "v1alpha1", "schema": {"openAPIV3Schema": schema}, "served": True, "storage": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"annotations": dict(ANNOTATIONS), "name": "commands.bus.volcano.sh"},
        "spec": {
            "group": "bus.volcano.sh",
            "names": {"kind": "Command", "listKind": "CommandList", "plural": "commands", "singular": "command"},
            "scope": "Namespaced",
            "versions": [version],
        },
    }
