"""Ours: a status that cannot be stored is not sent again and again; the JobFlow fails with one that fits.

etcd refuses a request over 1.5 MiB (its `--max-request-bytes`), so a JobFlow whose status grows
past that can never record anything again, not even Failed: every PUT fails, is retried with the
same full-size body, and again at every resync (Argo, Kubeflow Pipelines, Tekton and Flyte all met
this). Flows are capped, running histories bounded (action.py) and retries bounded (apis/retry.py),
so only what the Jobs report without bound (`taskStatusCount` of a Job with many tasks, copied into
`conditions`) or what someone wrote into the status by hand can still get there. Called at one named
point, the end of the sync's decisions (action.py): past `STATUS_SIZE_LIMIT` the JobFlow is Failed,
a Warning names the size, and the status keeps only what fits, dropping in this order: running
histories but the last of each Job, the `conditions`, the `jobStatusList`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from jobflow_controller.apis import Phase
from jobflow_controller.apis.status import JobFlowStatus
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.plan import SyncPlan, WarningEvent

#: The most bytes of status JSON a JobFlow may hold, whatever its spec: a third of etcd's 1.5 MiB
#: request limit is left for the spec, the metadata and the managedFields the API server adds.
STATUS_SIZE_LIMIT = 1024 * 1024
#: etcd's default `--max-request-bytes`: the whole object must fit in it.
OBJECT_SIZE_LIMIT = 1536 * 1024
#: What the API server may add to the object besides our status (managedFields, a resourceVersion).
HEADROOM = 64 * 1024


def status_size(body: dict[str, Any]) -> int:
    return len(orjson.dumps(body))


def status_size_limit(job_flow: Mapping[str, Any]) -> int:
    """`STATUS_SIZE_LIMIT`, or less when the rest of the JobFlow leaves less of etcd's limit: params,
    `when` and matrix values let a spec itself reach well over 1 MB."""
    rest = {key: value for key, value in job_flow.items() if key not in ("status", "metadata")}
    # managedFields (on an object read from the API server, not on the informer's) describe the status
    # being replaced; the API server writes them anew for the one written, within `STATUS_SIZE_LIMIT`'s
    # third of etcd's limit as before.
    metadata = job_flow.get("metadata")
    if isinstance(metadata, Mapping):
        rest["metadata"] = {key: value for key, value in metadata.items() if key != "managedFields"}
    try:
        rest_size = len(orjson.dumps(rest))
    except TypeError:  # not JSON (a test's object): the flat limit
        return STATUS_SIZE_LIMIT
    return max(0, min(STATUS_SIZE_LIMIT, OBJECT_SIZE_LIMIT - HEADROOM - rest_size))


def fit(plan: SyncPlan, job_flow: Mapping[str, Any]) -> SyncPlan:
    """`plan` unchanged when its status fits; else Failed, reduced until it fits, with the Warning."""
    if plan.status is None:
        return plan
    plan.body = None
    size = status_size(plan.status_body())
    limit = status_size_limit(job_flow) if size > 4096 else STATUS_SIZE_LIMIT
    if size <= limit:
        return plan
    status = plan.status
    status.phase = Phase.FAILED
    dropped = []
    for name, reduce in _REDUCTIONS:
        if status_size(status.to_dict()) <= limit:
            break
        reduce(status)
        dropped.append(name)
    plan.body = status.to_dict()
    plan.retries, plan.retry_deletes = [], []
    plan.size_warning = WarningEvent(
        c.REASON_STATUS_TOO_LARGE, c.MESSAGE_STATUS_TOO_LARGE, (size, limit, ", ".join(dropped))
    )
    return plan


def _last_histories(status: JobFlowStatus) -> None:
    for entry in status.job_status_list:
        entry.running_histories = entry.running_histories[-1:]


def _no_conditions(status: JobFlowStatus) -> None:
    status.conditions = {}


def _no_job_status_list(status: JobFlowStatus) -> None:
    status.job_status_list = []


_REDUCTIONS = (
    ("running histories but the last", _last_histories),
    ("conditions", _no_conditions),
    ("jobStatusList", _no_job_status_list),
)
