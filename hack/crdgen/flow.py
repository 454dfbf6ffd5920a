"""``jobflows.flow.volcano.sh`` and ``jobtemplates.flow.volcano.sh``: upstream's, our retry field and our caps.

The JobFlow CRD we ship is upstream's plus (``our_additions_patch``):

* one additive, optional field, ``spec.flows[].retry`` (docs/retry.md): without it the API server
  would prune the retry policy;
* the lifecycle fields (docs/lifecycle.md, ``crdgen.lifecycle``): ``spec.suspend``, ``spec.shutdown``,
  the deadlines and the TTL, and their status fields;
* two bounds, ``maxItems`` of ``spec.flows`` (``MAX_FLOWS``) and of ``spec.flows[].dependsOn.targets``
  (``MAX_TARGETS``), the size caps of ``jobflow_controller.validation.limits``, imported from there so
  that the CRD, the CEL Component and the webhook say the same number (docs/operations.md, "Limits");
* the failure-aware fields (docs/rules.md, issue 22), all optional and without defaults (a JobFlow
  that sets none is stored exactly as upstream's): ``spec.failurePolicy`` and
  ``spec.flows[].dependsOn.rule`` (enums of ``jobflow_controller.validation.rules``' values),
  ``spec.flows[].continueOnFailure`` (a boolean), ``spec.finally`` (at most ``MAX_FINALLY`` entries,
  each a name and a patch of the flows' schema), and ``status.skippedJobs``;
* the parameter fields (docs/params.md, issue 37, ``crdgen.params``): ``spec.params``,
  ``spec.flows[].when`` and ``spec.flows[].matrix``, optional and without defaults;
* the results fields (docs/results.md, issue 43, ``crdgen.results``): ``spec.flows[].results`` and
  ``status.jobStatusList[].results``.

An object valid for our CRD is valid for upstream's and stored the same, but for the fields above,
which upstream's CRD prunes; one valid for upstream's is valid for ours unless it has more flows, or
a flow more targets, than the caps.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from crdgen.jsonpatch import parent_of
from crdgen.lifecycle import LIFECYCLE_POINTERS, lifecycle_patch
from crdgen.params import PARAMS_POINTERS, params_patch
from crdgen.results import RESULTS_POINTERS, results_patch
from crdgen.schema import (
    JSONDict,
    array,
    custom_resource_definition,
    date_time,
    int32,
    integer,
    map_of,
    obj,
    root,
    string,
)
from crdgen.templates import TEMPLATE_RUN_POINTERS, template_run_patch
from crdgen.volcano import job_spec_schema, task_state
from jobflow_controller.apis.meta import MAX_DURATION_TEXT
from jobflow_controller.apis.retry import MAX_RETRIES_LIMIT
from jobflow_controller.validation.limits import MAX_FINALLY, MAX_FLOWS, MAX_TARGETS
from jobflow_controller.validation.names import MAX_TEMPLATE_NAME_LENGTH
from jobflow_controller.validation.rules import FAILURE_POLICIES, RULES

#: Where spec.flows' schema is in the JobFlow CRD, as a JSON pointer.
FLOWS_POINTER: Final = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/flows"
#: Where our one additive field goes: ``spec.flows[].retry``.
RETRY_FIELD_POINTER: Final = f"{FLOWS_POINTER}/items/properties/retry"
#: ``spec.flows[].dependsOn.targets``.
TARGETS_POINTER: Final = f"{FLOWS_POINTER}/items/properties/dependsOn/properties/targets"
#: Our two bounds, ``maxItems`` of ``spec.flows`` and of each flow's targets.
FLOWS_MAX_ITEMS_POINTER: Final = f"{FLOWS_POINTER}/maxItems"
TARGETS_MAX_ITEMS_POINTER: Final = f"{TARGETS_POINTER}/maxItems"
#: The failure-aware fields (docs/rules.md): ``spec.failurePolicy``, ``spec.finally``,
#: ``spec.flows[].dependsOn.rule``, ``spec.flows[].continueOnFailure``, ``status.skippedJobs``.
SPEC_POINTER: Final = "/spec/versions/0/schema/openAPIV3Schema/properties/spec"
FAILURE_POLICY_POINTER: Final = f"{SPEC_POINTER}/properties/failurePolicy"
FINALLY_POINTER: Final = f"{SPEC_POINTER}/properties/finally"
RULE_POINTER: Final = f"{FLOWS_POINTER}/items/properties/dependsOn/properties/rule"
CONTINUE_ON_FAILURE_POINTER: Final = f"{FLOWS_POINTER}/items/properties/continueOnFailure"
SKIPPED_JOBS_POINTER: Final = "/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/skippedJobs"
#: ``spec.flows[].retry.backoff`` when left out (the API server fills it in).
DEFAULT_RETRY_BACKOFF: Final = "0s"
JOB_FLOW_PHASES: Final = ("Succeed", "Terminating", "Failed", "Running", "Pending")


def jobtemplate_crd() -> JSONDict:
    """``jobtemplates.flow.volcano.sh``: ``spec`` is a Volcano JobSpec."""
    return custom_resource_definition(
        "flow.volcano.sh",
        "JobTemplate",
        "jobtemplates",
        "jobtemplate",
        ["jt"],
        root(job_spec_schema(), obj({"jobDependsOnList": array(string())})),
    )


def _probe() -> JSONDict:
    port = integer(maximum=65535, minimum=0)
    task_name = string(maxLength=253)
    return obj(
        {
            "httpGetList": array(
                obj(
                    {
                        "httpHeader": obj({"name": string(), "value": string()}, required=["name", "value"]),
                        "path": string(),
                        "port": dict(port),
                        "taskName": dict(task_name),
                    }
                )
            ),
            "taskStatusList": array(obj({"phase": string(maxLength=63), "taskName": dict(task_name)})),
            "tcpSocketList": array(obj({"port": dict(port), "taskName": dict(task_name)}, required=["port"])),
        }
    )


def _flows() -> JSONDict:
    flow = obj(
        {
            "dependsOn": obj({"probe": _probe(), "targets": array(string())}),
            "name": string(minLength=1),
            "patch": obj({"jobSpec": job_spec_schema()}),
        },
        required=["name"],
    )
    return array(flow)


def _jobflow_status() -> JSONDict:
    names = array(string())
    history = obj({"endTimestamp": date_time(), "startTimestamp": date_time(), "state": string()})
    return obj(
        {
            "completedJobs": copy.deepcopy(names),
            "conditions": map_of(
                obj(
                    {
                        "createTime": date_time(),
                        "phase": string(),
                        "runningDuration": string(),
                        "taskStatusCount": map_of(task_state()),
                    }
                )
            ),
            "failedJobs": copy.deepcopy(names),
            "jobStatusList": array(
                obj(
                    {
                        "endTimestamp": date_time(),
                        "name": string(),
                        "restartCount": int32(minimum=0),
                        "runningHistories": array(history),
                        "startTimestamp": date_time(),
                        "state": string(),
                    }
                )
            ),
            "pendingJobs": copy.deepcopy(names),
            "runningJobs": copy.deepcopy(names),
            "state": obj({"phase": string(enum=list(JOB_FLOW_PHASES))}),
            "terminatedJobs": copy.deepcopy(names),
            "unKnowJobs": copy.deepcopy(names),
        }
    )


def upstream_jobflow_crd() -> JSONDict:
    """``jobflows.flow.volcano.sh`` exactly as upstream ships it (``UPSTREAM_CRD_SHA256`` pins it)."""
    spec = obj(
        {
            "flows": _flows(),
            "jobRetainPolicy": string(enum=["retain", "delete"]),
        }
    )
    return custom_resource_definition(
        "flow.volcano.sh",
        "JobFlow",
        "jobflows",
        "jobflow",
        ["jf"],
        root(spec, _jobflow_status()),
        [
            {"jsonPath": ".status.state.phase", "name": "Status", "type": "string"},
            {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
        ],
    )


def retry_schema() -> JSONDict:
    """``spec.flows[].retry`` (ours, docs/retry.md): ``maxRetries`` required, 0..``MAX_RETRIES_LIMIT``, ``backoff``
    "0s" by default.

    ``backoff`` is a Go duration string of at most ``MAX_DURATION_TEXT`` characters (what the
    controller's parser reads); its syntax is the webhook's to check (a pattern here would refuse a bad
    one with the API server's generic message instead of the webhook's precise one).
    """
    backoff = string(default=DEFAULT_RETRY_BACKOFF, maxLength=MAX_DURATION_TEXT)
    return obj(
        {"backoff": backoff, "maxRetries": int32(minimum=0, maximum=MAX_RETRIES_LIMIT)},
        required=["maxRetries"],
    )


def retry_field_patch() -> list[JSONDict]:
    """Our one added field: an ``add`` of ``spec.flows[].retry``."""
    return [{"op": "add", "path": RETRY_FIELD_POINTER, "value": retry_schema()}]


def cap_patch() -> list[JSONDict]:
    """Our two bounds: ``maxItems`` ``MAX_FLOWS`` on ``spec.flows``, ``MAX_TARGETS`` on each flow's targets."""
    return [
        {"op": "add", "path": FLOWS_MAX_ITEMS_POINTER, "value": MAX_FLOWS},
        {"op": "add", "path": TARGETS_MAX_ITEMS_POINTER, "value": MAX_TARGETS},
    ]


def finally_schema() -> JSONDict:
    """``spec.finally`` (docs/rules.md): JobTemplates run once nothing else can, each patched as a flow may be.

    The name is required and not empty, as a flow's, and at most a JobTemplate name's 253 characters
    (the name it is); whether it repeats a flow's or another entry's is for the webhook (and the CEL
    Component) to say, with their messages.
    """
    name = string(maxLength=MAX_TEMPLATE_NAME_LENGTH, minLength=1)
    entry = obj({"name": name, "patch": obj({"jobSpec": job_spec_schema()})}, required=["name"])
    return array(entry, maxItems=MAX_FINALLY)


def skipped_jobs_schema() -> JSONDict:
    """``status.skippedJobs``: Job names, at most one per Job a valid JobFlow has (its flows' Jobs, counting
    every matrix index, and its finally entries'), each at most a name's 253 characters."""
    return array(string(maxLength=MAX_TEMPLATE_NAME_LENGTH), maxItems=MAX_FLOWS + MAX_FINALLY)


def failure_aware_patch() -> list[JSONDict]:
    """The failure-aware fields (issue 22), as ``add``s: optional, no defaults, values from ``validation.rules``."""
    return [
        {"op": "add", "path": FAILURE_POLICY_POINTER, "value": string(enum=list(FAILURE_POLICIES))},
        {"op": "add", "path": FINALLY_POINTER, "value": finally_schema()},
        {"op": "add", "path": RULE_POINTER, "value": string(enum=list(RULES))},
        {"op": "add", "path": CONTINUE_ON_FAILURE_POINTER, "value": {"type": "boolean"}},
        {"op": "add", "path": SKIPPED_JOBS_POINTER, "value": skipped_jobs_schema()},
    ]


def our_additions_patch() -> list[JSONDict]:
    """Every difference between our JobFlow CRD and upstream's, as ``add``s: the retry field, the caps,
    the failure-aware fields, the lifecycle fields, the parameter fields, the results fields."""
    return [
        *retry_field_patch(),
        *cap_patch(),
        *failure_aware_patch(),
        *lifecycle_patch(),
        *params_patch(),
        *results_patch(),
        *template_run_patch(),
    ]


#: The paths ``failure_aware_patch`` adds, in its order.
FAILURE_AWARE_ADDITIONS: Final = (
    FAILURE_POLICY_POINTER,
    FINALLY_POINTER,
    RULE_POINTER,
    CONTINUE_ON_FAILURE_POINTER,
    SKIPPED_JOBS_POINTER,
)
#: The paths ``our_additions_patch`` adds, in its order.
OUR_ADDITIONS: Final = (
    RETRY_FIELD_POINTER,
    FLOWS_MAX_ITEMS_POINTER,
    TARGETS_MAX_ITEMS_POINTER,
    *FAILURE_AWARE_ADDITIONS,
    *LIFECYCLE_POINTERS,
    *PARAMS_POINTERS,
    *RESULTS_POINTERS,
    *TEMPLATE_RUN_POINTERS,
)


def without_our_additions(crd: Mapping[str, Any]) -> JSONDict:
    """``crd`` (not modified) without what ``our_additions_patch`` adds: upstream's; KeyError if one is absent."""
    result: JSONDict = copy.deepcopy(dict(crd))
    for pointer in OUR_ADDITIONS:
        node, last = parent_of(result, pointer)
        del node[last]
    return result
