"""flow.volcano.sh/v1alpha1 JobFlowTrigger (ours, docs/triggers.md): read-only accessors and the run it makes.

A trigger names a JobFlowTemplate (`spec.jobFlowTemplateRef`), binds the template's params from the
event (`spec.params`, each a literal `value` or a `cel` expression), and fires on one source:
`spec.http` (a POST to the manager's trigger endpoint) or `spec.resource` (a watched object
changes). `spec.concurrencyPolicy` and the two history limits are CronJobFlow's, read by the same
accessors (`apis.cronjobflow`), so the CronJobFlow's decisions apply to a trigger unchanged.
The readers never raise on a bad shape: the controller validates first (validation/jobflowtrigger.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import FLOW_GROUP_VERSION, JOB_FLOW_KIND, JOB_FLOW_TRIGGER_KIND
from jobflow_controller.apis.jobflowtemplate import TEMPLATE_LABEL
from jobflow_controller.apis.meta import Obj

__all__ = [
    "EVENTS",
    "JOB_FLOW_TRIGGER_KIND",
    "TRIGGERED_BY_ANNOTATION",
    "Binding",
    "ResourceSource",
]

#: On every run a trigger makes: the trigger's name.
TRIGGERED_BY_ANNOTATION: Final = "flow.volcano.sh/triggered-by"
#: A run's name is `<trigger>-<RUN_SUFFIX_CHARS random lowercase letters>`.
RUN_SUFFIX_CHARS: Final = 5
#: `status.triggeredCount` stops counting here (the CRD's int32 bound).
MAX_TRIGGERED: Final = 2**31 - 1
#: The event kinds a resource trigger may fire on.
EVENT_CREATE: Final = "create"
EVENT_UPDATE: Final = "update"
EVENT_DELETE: Final = "delete"
EVENTS: Final = (EVENT_CREATE, EVENT_UPDATE, EVENT_DELETE)
#: The trigger kinds (the printer column `Kind` shows which one is set).
HTTP: Final = "http"
RESOURCE: Final = "resource"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, (dict, Mapping)) else {}


def spec(obj: Obj) -> Mapping[str, Any]:
    return _mapping(obj.get("spec"))


def status(obj: Obj) -> Mapping[str, Any]:
    return _mapping(obj.get("status"))


def template_name(obj: Obj) -> str:
    value = _mapping(spec(obj).get("jobFlowTemplateRef")).get("name")
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Binding:
    """One `spec.params` entry: a literal `value`, or a `cel` expression over the event."""

    name: str
    value: str | None = None
    cel: str | None = None


def bindings(obj: Obj) -> list[Binding]:
    """`spec.params` as bindings; entries that are not objects are skipped (validation reports them)."""
    raw = spec(obj).get("params")
    out: list[Binding] = []
    for entry in raw if isinstance(raw, list) else []:
        if not isinstance(entry, Mapping):
            continue
        value, cel = entry.get("value"), entry.get("cel")
        out.append(
            Binding(
                str(entry.get("name") or ""),
                value if isinstance(value, str) else None,
                cel if isinstance(cel, str) else None,
            )
        )
    return out


def kind_of(obj: Obj) -> str:
    """`http` or `resource` (whichever is set; `http` wins if both are, which admission refuses), or ""."""
    s = spec(obj)
    if isinstance(s.get("http"), Mapping):
        return HTTP
    if isinstance(s.get("resource"), Mapping):
        return RESOURCE
    return ""


@dataclass(frozen=True)
class ResourceSource:
    """`spec.resource`: what to watch and which changes fire."""

    api_version: str
    kind: str
    label_selector: Mapping[str, Any]
    events: tuple[str, ...]

    @property
    def watch_key(self) -> str:
        """`<apiVersion>/<kind>`: how a watched kind is named (and listed in --trigger-watch-kinds)."""
        return f"{self.api_version}/{self.kind}"


def resource_source(obj: Obj) -> ResourceSource | None:
    raw = spec(obj).get("resource")
    if not isinstance(raw, Mapping):
        return None
    events = raw.get("events")
    chosen = tuple(e for e in events if isinstance(e, str)) if isinstance(events, list) else EVENTS
    return ResourceSource(
        str(raw.get("apiVersion") or ""),
        str(raw.get("kind") or ""),
        _mapping(raw.get("labelSelector")),
        chosen,
    )


def triggered_count(obj: Obj) -> int:
    value = status(obj).get("triggeredCount")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def last_trigger_time(obj: Obj) -> str | None:
    value = status(obj).get("lastTriggerTime")
    return value if isinstance(value, str) and value else None


def controller_reference(trigger: Obj) -> dict[str, Any]:
    """The run is controlled by its trigger (history limits, garbage collection) and blocks its deletion."""
    return {
        "apiVersion": FLOW_GROUP_VERSION,
        "kind": JOB_FLOW_TRIGGER_KIND,
        "name": meta.name(trigger),
        "uid": meta.uid(trigger),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def new_run(trigger: Obj, name: str, params: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """The JobFlow a firing creates: a run of the template with the bound `params`, named `name`."""
    template = template_name(trigger)
    return {
        "apiVersion": FLOW_GROUP_VERSION,
        "kind": JOB_FLOW_KIND,
        "metadata": {
            "name": name,
            "namespace": meta.namespace(trigger),
            "labels": {TEMPLATE_LABEL: template},
            "annotations": {TRIGGERED_BY_ANNOTATION: meta.name(trigger)},
            "ownerReferences": [controller_reference(trigger)],
        },
        "spec": {
            "jobFlowTemplateRef": {"name": template},
            "params": [{"name": str(p["name"]), "value": str(p["value"])} for p in params],
        },
    }
