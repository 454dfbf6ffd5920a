"""Does a watched object's change fire a resource trigger? Pure.

A trigger only ever sees objects of its own namespace (a tenant's trigger must not read, or bind
from, another tenant's objects), of its `apiVersion` and `kind`, whose labels match its
`labelSelector` (Kubernetes' meaning: every `matchLabels` entry and every `matchExpressions`
requirement; an empty selector matches everything), on one of its `events`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis import meta
from jobflow_controller.apis.jobflowtrigger import ResourceSource


def _requirement_matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = str(expression.get("key") or ""), expression.get("operator")
    raw = expression.get("values")
    values = {str(v) for v in raw} if isinstance(raw, list) else set()
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False  # an unknown operator matches nothing (admission refuses it)


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, Mapping) and any(labels.get(str(k)) != v for k, v in match_labels.items()):
        return False
    expressions = selector.get("matchExpressions")
    return all(_requirement_matches(e, labels) for e in expressions or [] if isinstance(e, Mapping))


def event_fires(source: ResourceSource, trigger_namespace: str, event: str, obj: Mapping[str, Any]) -> bool:
    """Whether `event` (create, update, delete) on `obj` fires a trigger of `trigger_namespace` with `source`."""
    return (
        meta.namespace(obj) == trigger_namespace
        and event in source.events
        and selector_matches(source.label_selector, meta.labels(obj))
    )
