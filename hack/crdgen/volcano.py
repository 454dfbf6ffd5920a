"""``jobs.batch.volcano.sh``: Volcano's ``JobSpec`` and ``JobStatus``, written out field by field.

Its markers as upstream's Go types carry them: minimums, patterns, enums, and the defaults
``maxRetry: 3``, ``queue: default``, ``networkTopology.mode: hard`` and
``partitionPolicy.minPartitions: 0``. The JobTemplate CRD and a flow's ``patch.jobSpec`` reuse the
``JobSpec`` schema.
"""

from __future__ import annotations

from typing import Final

from crdgen.kubernetes import kubernetes_type
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

_DNS1123_SUBDOMAIN_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_DNS1123_LABEL_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"

#: Volcano's JobPhase values, in the order of the upstream enum marker.
JOB_PHASES: Final = (
    "Pending",
    "Aborting",
    "Aborted",
    "Running",
    "Restarting",
    "Completing",
    "Completed",
    "Terminating",
    "Terminated",
    "Failed",
)
#: Volcano's bus events a lifecycle policy may react to (``batch/v1alpha1`` Event enum).
_POLICY_EVENTS: Final = (
    "*",
    "PodPending",
    "PodRunning",
    "PodFailed",
    "PodEvicted",
    "Unknown",
    "TaskCompleted",
    "OutOfSync",
    "CommandIssued",
    "JobUpdated",
    "TaskFailed",
)
#: JobFlow phases (``flow/v1alpha1`` Phase enum).


def _network_topology() -> JSONDict:
    return obj(
        {
            "highestTierAllowed": integer(minimum=0),
            "highestTierName": string(maxLength=253),
            "mode": string(default="hard", enum=["hard", "soft"]),
        }
    )


def _lifecycle_policies() -> JSONDict:
    return array(
        obj(
            {
                "action": string(),
                "event": string(enum=list(_POLICY_EVENTS)),
                "events": array(string(enum=list(_POLICY_EVENTS))),
                "exitCode": int32(),
                "timeout": string(),
            }
        )
    )


def _task_spec() -> JSONDict:
    return obj(
        {
            "dependsOn": obj({"iteration": string(), "name": array(string())}),
            "maxRetry": int32(minimum=0),
            "minAvailable": int32(minimum=0),
            "name": string(maxLength=63, pattern=_DNS1123_LABEL_PATTERN),
            "partitionPolicy": obj(
                {
                    "minPartitions": int32(default=0, minimum=0),
                    "networkTopology": _network_topology(),
                    "partitionSize": int32(minimum=1),
                    "totalPartitions": int32(minimum=1),
                },
                required=["partitionSize", "totalPartitions"],
            ),
            "policies": _lifecycle_policies(),
            "replicas": int32(minimum=0),
            "template": kubernetes_type("io.k8s.api.core.v1.PodTemplateSpec"),
            "topologyPolicy": string(enum=["none", "best-effort", "restricted", "single-numa-node"]),
        }
    )


def job_spec_schema() -> JSONDict:
    """The schema of Volcano's ``JobSpec``: a Job's ``spec``, a JobTemplate's ``spec``, ``patch.jobSpec``."""
    return obj(
        {
            "maxRetry": int32(default=3, minimum=0),
            "minAvailable": int32(minimum=0),
            "minSuccess": int32(minimum=1),
            "networkTopology": _network_topology(),
            "plugins": map_of(array(string())),
            "policies": _lifecycle_policies(),
            "priorityClassName": string(maxLength=253, pattern=_DNS1123_SUBDOMAIN_PATTERN),
            "queue": string(default="default", maxLength=253, pattern=_DNS1123_SUBDOMAIN_PATTERN),
            "runningEstimate": string(),
            "schedulerName": string(maxLength=63),
            "tasks": array(_task_spec(), minItems=1),
            "ttlSecondsAfterFinished": int32(minimum=0),
            "volumes": array(
                obj(
                    {
                        "mountPath": string(minLength=1, pattern="^[^:]+$"),
                        "volumeClaim": kubernetes_type("io.k8s.api.core.v1.PersistentVolumeClaimSpec"),
                        "volumeClaimName": string(maxLength=253),
                    },
                    required=["mountPath"],
                )
            ),
        }
    )


def task_state() -> JSONDict:
    # Volcano's TaskState: {phase: {<PodPhase>: count}}.
    return obj({"phase": map_of(int32())})


def _job_status_schema() -> JSONDict:
    counter = int32(minimum=0)
    return obj(
        {
            "conditions": array(obj({"lastTransitionTime": date_time(), "status": string()}, required=["status"])),
            "controlledResources": map_of(string()),
            "failed": dict(counter),
            "minAvailable": dict(counter),
            "pending": dict(counter),
            "retryCount": dict(counter),
            "running": dict(counter),
            "runningDuration": string(),
            "state": obj(
                {
                    "lastTransitionTime": date_time(),
                    "message": string(),
                    "phase": string(enum=list(JOB_PHASES)),
                    "reason": string(),
                }
            ),
            "succeeded": dict(counter),
            "taskStatusCount": map_of(task_state()),
            "terminating": dict(counter),
            "unknown": dict(counter),
            "version": dict(counter),
        }
    )


def job_crd() -> JSONDict:
    """``jobs.batch.volcano.sh``, for the local control plane (Volcano itself is not installed there)."""
    return custom_resource_definition(
        "batch.volcano.sh",
        "Job",
        "jobs",
        "job",
        ["vcjob", "vj"],
        root(job_spec_schema(), _job_status_schema()),
        [
            {"jsonPath": ".status.state.phase", "name": "STATUS", "type": "string"},
            {"jsonPath": ".status.minAvailable", "name": "minAvailable", "type": "integer"},
            {"jsonPath": ".status.running", "name": "RUNNINGS", "type": "integer"},
            {"jsonPath": ".metadata.creationTimestamp", "name": "AGE", "type": "date"},
            {"jsonPath": ".spec.queue", "name": "QUEUE", "priority": 1, "type": "string"},
        ],
    )
