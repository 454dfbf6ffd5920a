"""Our JobFlow CRD's schema with every object closed (`additionalProperties: false`), so that a field
the API server would prune from an example fails validation instead of vanishing."""

from __future__ import annotations

import copy
from typing import Any

import crdgen as crds


def closed_jobflow_schema() -> dict[str, Any]:
    (version,) = crds.jobflow_crd(with_rules=True)["spec"]["versions"]
    schema: dict[str, Any] = copy.deepcopy(version["schema"]["openAPIV3Schema"])
    stack = [schema]
    while stack:
        node = stack.pop()
        if "properties" in node:
            node.setdefault("additionalProperties", False)
            stack.extend(node["properties"].values())
        if isinstance(node.get("items"), dict):
            stack.append(node["items"])
    return schema
