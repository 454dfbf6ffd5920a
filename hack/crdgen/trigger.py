"""``jobflowtriggers.flow.volcano.sh`` (ours, docs/triggers.md): JobFlows started by an event.

Every field is bounded with the numbers of ``jobflow_controller.validation.jobflowtrigger`` (the
webhook and the controller check the same ones); ``concurrencyPolicy`` and the history limits are
the CronJobFlow's (``crdgen.cron``), defaults included. What the schema cannot say (exactly one of
``http`` and ``resource``, exactly one of ``value`` and ``cel``, a ``cel`` that compiles) is
checked by the webhook and the controller.
"""

from __future__ import annotations

from typing import Final

from crdgen.cron import MAX_ACTIVE_RUNS, _object_reference, _time
from crdgen.schema import JSONDict, array, custom_resource_definition, int32, map_of, obj, string
from jobflow_controller.apis.jobflowtrigger import EVENTS, MAX_TRIGGERED
from jobflow_controller.apis.params import MAX_PARAM_NAME_LENGTH, MAX_PARAM_VALUE_LENGTH
from jobflow_controller.validation import jobflowtrigger as v
from jobflow_controller.validation.names import MAX_LABEL_VALUE_LENGTH

#: The largest `triggeredCount` (an int32: 68 years at the trigger's rate of one a second).
MAX_TRIGGERED_COUNT: Final = MAX_TRIGGERED


def _label_selector() -> JSONDict:
    expression = obj(
        {
            "key": string(maxLength=v.MAX_LABEL_KEY_LENGTH),
            "operator": string(enum=list(v.SELECTOR_OPERATORS)),
            "values": array(string(maxLength=MAX_LABEL_VALUE_LENGTH), maxItems=v.MAX_SELECTOR_VALUES),
        },
        required=["key", "operator"],
    )
    match_labels = {**map_of(string(maxLength=MAX_LABEL_VALUE_LENGTH)), "maxProperties": v.MAX_MATCH_LABELS}
    selector = obj(
        {
            "matchExpressions": array(expression, maxItems=v.MAX_MATCH_EXPRESSIONS),
            "matchLabels": dict(sorted(match_labels.items())),
        }
    )
    selector["x-kubernetes-map-type"] = "atomic"
    return selector


def _spec() -> JSONDict:
    binding = obj(
        {
            "cel": string(maxLength=v.MAX_CEL_LENGTH, minLength=1),
            "name": string(maxLength=MAX_PARAM_NAME_LENGTH, minLength=1),
            "value": string(maxLength=MAX_PARAM_VALUE_LENGTH),
        },
        required=["name"],
    )
    resource = obj(
        {
            "apiVersion": string(maxLength=v.MAX_API_VERSION_LENGTH, minLength=1),
            "events": array(
                string(enum=list(EVENTS)), maxItems=len(EVENTS), minItems=1, **{"x-kubernetes-list-type": "set"}
            ),
            "kind": string(maxLength=v.MAX_KIND_LENGTH, minLength=1),
            "labelSelector": _label_selector(),
        },
        required=["apiVersion", "kind"],
    )
    return obj(
        {
            "concurrencyPolicy": string(default="Allow", enum=list(v.CONCURRENCY_POLICIES)),
            "failedJobFlowsHistoryLimit": int32(default=1, maximum=v.MAX_HISTORY_LIMIT, minimum=0),
            # No fields: {} marks an http trigger (an empty "properties" is dropped by the API server).
            "http": {"maxProperties": 0, "type": "object"},
            "jobFlowTemplateRef": obj(
                {"name": string(maxLength=MAX_LABEL_VALUE_LENGTH, minLength=1)}, required=["name"]
            ),
            "params": array(binding, maxItems=v.MAX_TRIGGER_PARAMS),
            "resource": resource,
            "successfulJobFlowsHistoryLimit": int32(default=3, maximum=v.MAX_HISTORY_LIMIT, minimum=0),
        },
        required=["jobFlowTemplateRef"],
    )


def jobflowtrigger_crd() -> JSONDict:
    """``jobflowtriggers.flow.volcano.sh``, short name ``jftr``."""
    status = obj(
        {
            "active": array(_object_reference(), maxItems=MAX_ACTIVE_RUNS, **{"x-kubernetes-list-type": "atomic"}),
            "lastTriggerTime": _time(),
            "triggeredCount": int32(maximum=MAX_TRIGGERED_COUNT, minimum=0),
        }
    )
    schema = obj(
        {"apiVersion": string(), "kind": string(), "metadata": {"type": "object"}, "spec": _spec(), "status": status}
    )
    return custom_resource_definition(
        "flow.volcano.sh",
        "JobFlowTrigger",
        "jobflowtriggers",
        "jobflowtrigger",
        ["jftr"],
        schema,
        [
            {"jsonPath": ".spec.jobFlowTemplateRef.name", "name": "Template", "type": "string"},
            {"jsonPath": ".spec.resource.kind", "name": "Kind", "type": "string"},
            {"jsonPath": ".status.triggeredCount", "name": "Triggered", "type": "integer"},
            {"jsonPath": ".status.lastTriggerTime", "name": "Last Trigger", "type": "date"},
            {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
        ],
    )
