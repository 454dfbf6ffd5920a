"""The JSON patches (RFC 6902) the generator applies and undoes: only what kustomize needs of them."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from crdgen.schema import JSONDict


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
        node, last = parent_of(result, operation["path"])
        if not isinstance(node, dict) or last in node:
            raise ValueError(f"cannot add {operation['path']}: no such object, or the member exists")
        node[last] = copy.deepcopy(operation["value"])
    return result


def parent_of(document: JSONDict, pointer: str) -> tuple[Any, str]:
    """The node holding the member ``pointer`` names, and that member's (unescaped) name.

    Array indexes on the way are followed; a missing member on the way raises KeyError.
    """
    *parents, last = [_unescape(step) for step in pointer.split("/")[1:]]
    node: Any = document
    for step in parents:
        node = node[int(step)] if isinstance(node, list) else node[step]
    return node, last


def _unescape(step: str) -> str:
    return step.replace("~1", "/").replace("~0", "~")
