"""``cronjobflows.flow.volcano.sh`` (ours, docs/cron.md) and its CEL rules for the Component.

The CRD is Kubernetes' CronJob API with JobFlow in place of Job. ``spec.jobFlowTemplate.spec`` is
the JobFlow CRD's own ``spec`` schema as we ship it (``files.jobflow_crd()``), taken whole, so every
JobFlow field, today's and any added later, is accepted in a template exactly as in a JobFlow. The
defaults are CronJob's (``concurrencyPolicy: Allow``, ``suspend: false``, history limits 3 and 1),
the printer columns ``kubectl get cronjob``'s.

The Component's rules (``cron_validation_patch``) are the JobFlow rules re-rooted at the template's
spec, plus the rules of the CronJobFlow itself: the schedule's shape and no ``TZ=``/``CRON_TZ=``,
the time zone's shape, the name's 52 characters and the Job names of its runs. Whether a schedule's
fields are in range and a time zone exists is for the webhook, which parses both as the controller
does (CEL has no cron parser and no zone database).
"""

from __future__ import annotations

import copy
from typing import Any, Final

from crdgen.schema import JSONDict, array, custom_resource_definition, int32, integer, map_of, obj, sorted_keys, string
from jobflow_controller.apis.cronjobflow import MAX_STARTING_DEADLINE_SECONDS
from jobflow_controller.apis.meta import MAX_TIME_TEXT
from jobflow_controller.validation.cronjobflow import (
    DESCRIPTOR_NAMES,
    MAX_NAME_LENGTH,
    MAX_SCHEDULE_LENGTH,
    MAX_TIME_ZONE_LENGTH,
    RUN_SUFFIX_LENGTH,
)
from jobflow_controller.validation.names import MAX_JOB_NAME_LENGTH, MAX_TEMPLATE_NAME_LENGTH

ROOT_POINTER: Final = "/spec/versions/0/schema/openAPIV3Schema"
CRON_SPEC_POINTER: Final = f"{ROOT_POINTER}/properties/spec"
TEMPLATE_SPEC_POINTER: Final = f"{CRON_SPEC_POINTER}/properties/jobFlowTemplate/properties/spec"
JOBFLOW_SPEC_POINTER: Final = "/spec/versions/0/schema/openAPIV3Schema/properties/spec"

_DESCRIPTORS: Final = "|".join(n[1:] for n in DESCRIPTOR_NAMES)
SCHEDULE_SHAPE_RULE: Final = "self.schedule.matches('^\\\\s*(@(" + _DESCRIPTORS + ")|\\\\S+(\\\\s+\\\\S+){4})\\\\s*$')"
SCHEDULE_SHAPE_MESSAGE: Final = (
    "schedule must have five fields (minute hour day-of-month month day-of-week) or be one of "
    + ", ".join(DESCRIPTOR_NAMES)
)
SCHEDULE_NO_TZ_RULE: Final = "!self.schedule.contains('TZ')"
SCHEDULE_NO_TZ_MESSAGE: Final = "cannot use TZ or CRON_TZ in schedule, use the timeZone field instead"
TIME_ZONE_RULE: Final = (
    "!has(self.timeZone) || (self.timeZone.matches('^[A-Za-z][-+_A-Za-z0-9]*(/[-+_A-Za-z0-9]+)*$')"
    " && self.timeZone.lowerAscii() != 'local')"
)
TIME_ZONE_MESSAGE: Final = "timeZone must be an IANA time zone name such as Europe/Berlin"
NAME_LENGTH_RULE: Final = f"size(self.metadata.name) <= {MAX_NAME_LENGTH}"
NAME_LENGTH_MESSAGE: Final = f"metadata.name must be no more than {MAX_NAME_LENGTH} characters"
#: Every flow's Job `<name>-<minutes>-<flow>` within the Job name limit.
RUN_JOB_NAMES_RULE: Final = (
    "!has(self.spec.jobFlowTemplate.spec) || !has(self.spec.jobFlowTemplate.spec.flows) || "
    "self.spec.jobFlowTemplate.spec.flows.all(f, size(self.metadata.name) + size(f.name) <= "
    f"{MAX_JOB_NAME_LENGTH - RUN_SUFFIX_LENGTH - 1})"
)
RUN_JOB_NAMES_MESSAGE: Final = (
    f"the Job of each flow of a run, <name>-<minutes since the epoch>-<flow>, must be at most {MAX_JOB_NAME_LENGTH}"
    " characters: shorten metadata.name or the flow's name"
)


# The bounds of the fields that are ours alone (issue 42, docs/hostile-input.md): none a real CronJobFlow
# reaches, each far under what the API server stores in one object.
#: The most labels and annotations a template may carry, and the longest annotation value: Kubernetes'
#: own limit on an object's annotations together (TotalAnnotationSizeLimitB), which a run must pass.
MAX_TEMPLATE_METADATA_ENTRIES: Final = 256
MAX_ANNOTATION_VALUE_LENGTH: Final = 256 * 1024
#: A label value's limit (Kubernetes' validation of the run refuses a longer one anyway).
MAX_LABEL_VALUE_LENGTH: Final = 63
#: The most runs ``status.active`` lists (CronJob's has no bound; a schedule with that many runs
#: unfinished at once is past what one object's status holds anyway, about 250 bytes each).
MAX_ACTIVE_RUNS: Final = 4096
#: An object reference's strings: an API version is a group (a DNS subdomain) / a version.
_REFERENCE_BOUNDS: Final = {
    "apiVersion": MAX_TEMPLATE_NAME_LENGTH + 1 + 63,
    "fieldPath": 1024,
    "kind": 63,
    "name": MAX_TEMPLATE_NAME_LENGTH,
    "namespace": 63,
    "resourceVersion": 128,
    "uid": 128,
}
#: The history limits' bound: CronJob's int32, written out.
MAX_HISTORY_LIMIT: Final = 2**31 - 1


def _bounded_map(max_entries: int, max_value_length: int) -> JSONDict:
    return sorted_keys({**map_of(string(maxLength=max_value_length)), "maxProperties": max_entries})


def _template_metadata() -> JSONDict:
    # What a run takes from the template: its labels and annotations.
    return obj(
        {
            "annotations": _bounded_map(MAX_TEMPLATE_METADATA_ENTRIES, MAX_ANNOTATION_VALUE_LENGTH),
            "labels": _bounded_map(MAX_TEMPLATE_METADATA_ENTRIES, MAX_LABEL_VALUE_LENGTH),
        }
    )


def _object_reference() -> JSONDict:
    reference = obj({key: string(maxLength=bound) for key, bound in _REFERENCE_BOUNDS.items()})
    reference["x-kubernetes-map-type"] = "atomic"
    return reference


def _time() -> JSONDict:
    return {"format": "date-time", "maxLength": MAX_TIME_TEXT, "type": "string"}


def cronjobflow_crd(jobflow_spec: JSONDict) -> JSONDict:
    """``cronjobflows.flow.volcano.sh``, with ``jobflow_spec`` (the JobFlow CRD's spec schema) as the template's."""
    spec = obj(
        {
            "concurrencyPolicy": string(default="Allow", enum=["Allow", "Forbid", "Replace"]),
            "failedJobFlowsHistoryLimit": int32(default=1, maximum=MAX_HISTORY_LIMIT, minimum=0),
            "jobFlowTemplate": obj({"metadata": _template_metadata(), "spec": copy.deepcopy(jobflow_spec)}),
            "schedule": string(maxLength=MAX_SCHEDULE_LENGTH, minLength=1),
            "startingDeadlineSeconds": integer(format="int64", maximum=MAX_STARTING_DEADLINE_SECONDS, minimum=0),
            "successfulJobFlowsHistoryLimit": int32(default=3, maximum=MAX_HISTORY_LIMIT, minimum=0),
            "suspend": {"default": False, "type": "boolean"},
            "timeZone": string(maxLength=MAX_TIME_ZONE_LENGTH),
        },
        required=["jobFlowTemplate", "schedule"],
    )
    status = obj(
        {
            "active": array(_object_reference(), maxItems=MAX_ACTIVE_RUNS, **{"x-kubernetes-list-type": "atomic"}),
            "lastScheduleTime": _time(),
            "lastSuccessfulTime": _time(),
        }
    )
    schema = obj(
        {"apiVersion": string(), "kind": string(), "metadata": {"type": "object"}, "spec": spec, "status": status}
    )
    return custom_resource_definition(
        "flow.volcano.sh",
        "CronJobFlow",
        "cronjobflows",
        "cronjobflow",
        ["cjf"],
        schema,
        [
            {"jsonPath": ".spec.schedule", "name": "Schedule", "type": "string"},
            {"jsonPath": ".spec.timeZone", "name": "Timezone", "type": "string"},
            {"jsonPath": ".spec.suspend", "name": "Suspend", "type": "boolean"},
            {"jsonPath": ".status.active[*].name", "name": "Active", "type": "string"},
            {"jsonPath": ".status.lastScheduleTime", "name": "Last Schedule", "type": "date"},
            {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
        ],
    )


def _rerooted(patch: list[JSONDict]) -> list[JSONDict]:
    """The JobFlow Component's operations, moved from a JobFlow's spec to the template's spec."""
    out: list[JSONDict] = []
    for operation in patch:
        path = str(operation["path"])
        if not path.startswith(JOBFLOW_SPEC_POINTER + "/") and path != JOBFLOW_SPEC_POINTER:
            raise ValueError(f"a JobFlow rule outside spec cannot be carried into the template: {path}")
        out.append({**operation, "path": TEMPLATE_SPEC_POINTER + path[len(JOBFLOW_SPEC_POINTER) :]})
    return out


def cron_validation_patch(jobflow_patch: list[JSONDict]) -> list[JSONDict]:
    """The Component's patch of ``cronjobflows.flow.volcano.sh``: the JobFlow rules (``jobflow_patch``)
    on the template's spec, the CronJobFlow's own rules on its spec and on the object."""
    own: list[dict[str, Any]] = [
        {
            "op": "add",
            "path": f"{ROOT_POINTER}/x-kubernetes-validations",
            "value": [
                {"message": NAME_LENGTH_MESSAGE, "rule": NAME_LENGTH_RULE},
                {"message": RUN_JOB_NAMES_MESSAGE, "rule": RUN_JOB_NAMES_RULE},
            ],
        },
        {
            "op": "add",
            "path": f"{CRON_SPEC_POINTER}/x-kubernetes-validations",
            "value": [
                {"message": SCHEDULE_NO_TZ_MESSAGE, "rule": SCHEDULE_NO_TZ_RULE},
                {"message": SCHEDULE_SHAPE_MESSAGE, "rule": SCHEDULE_SHAPE_RULE},
                {"message": TIME_ZONE_MESSAGE, "rule": TIME_ZONE_RULE},
            ],
        },
    ]
    return [*own, *_rerooted(jobflow_patch)]
