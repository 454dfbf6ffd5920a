"""``jobflows.flow.volcano.sh`` and ``jobtemplates.flow.volcano.sh``: upstream's, and our one retry field.

The JobFlow CRD we ship is upstream's plus one additive, optional field, ``spec.flows[].retry``
(docs/retry.md): without it the API server would prune the retry policy. An object valid for
upstream's CRD is valid for ours and stored the same.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from crdgen.jsonpatch import parent_of
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
from crdgen.volcano import job_spec_schema, task_state

#: Where spec.flows' schema is in the JobFlow CRD, as a JSON pointer.
FLOWS_POINTER: Final = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/flows"
#: Where our one additive field goes: ``spec.flows[].retry``.
RETRY_FIELD_POINTER: Final = f"{FLOWS_POINTER}/items/properties/retry"
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
    """``spec.flows[].retry`` (ours, docs/retry.md): ``maxRetries`` required and >= 0, ``backoff`` "0s" by default.

    ``backoff`` is a Go duration string; its syntax is the webhook's to check (a pattern here would
    refuse a bad one with the API server's generic message instead of the webhook's precise one).
    """
    return obj(
        {"backoff": string(default=DEFAULT_RETRY_BACKOFF), "maxRetries": int32(minimum=0)},
        required=["maxRetries"],
    )


def retry_field_patch() -> list[JSONDict]:
    """The one difference between our JobFlow CRD and upstream's: an ``add`` of ``spec.flows[].retry``."""
    return [{"op": "add", "path": RETRY_FIELD_POINTER, "value": retry_schema()}]


def without_retry_field(crd: Mapping[str, Any]) -> JSONDict:
    """``crd`` (not modified) without ``spec.flows[].retry``: undoes ``retry_field_patch``; KeyError if absent."""
    result: JSONDict = copy.deepcopy(dict(crd))
    node, last = parent_of(result, RETRY_FIELD_POINTER)
    del node[last]
    return result
