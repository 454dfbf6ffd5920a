"""YAML in and out, with a stable key order: the builder's own order, never sorted, never aliased.

A pipeline's YAML is read and diffed by people, so the keys come in the order the builder writes
them (apiVersion, kind, metadata, spec; within a flow name, dependsOn, ...), which is the order the
examples and the docs use, and the same object always gives the same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    """SafeDumper that never writes anchors (`&id001`): a shared list stays written out twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump(documents: Iterable[Mapping[str, Any]]) -> str:
    """One or more documents, separated by `---`."""
    return yaml.dump_all(
        list(documents), Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120
    )


def load(text: str) -> list[dict[str, Any]]:
    """Every non-empty document of `text`, each of which must be a mapping."""
    documents = [d for d in yaml.safe_load_all(text) if d is not None]
    for document in documents:
        if not isinstance(document, dict):
            raise ValueError(f"a YAML document must be a mapping, not {type(document).__name__}")
    return documents
