"""flow.volcano.sh/v1alpha1 CronJobFlow (ours, docs/cron.md): read-only accessors and the run it makes.

Kubernetes' CronJob API with JobFlow in place of Job: `spec.schedule`, `spec.timeZone`,
`spec.concurrencyPolicy`, `spec.startingDeadlineSeconds`, `spec.suspend`, the two history limits and
`spec.jobFlowTemplate` (metadata and a JobFlow spec); `status.active`, `status.lastScheduleTime`,
`status.lastSuccessfulTime`. Shared by the controller (a scheduled run) and the kubectl plugin
(`create --from=cronjobflow/NAME`, a manual run), so both build the same JobFlow.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import CRON_JOB_FLOW_KIND, FLOW_GROUP_VERSION, JOB_FLOW_KIND
from jobflow_controller.apis.meta import Obj

#: On every run: the scheduled time, RFC 3339 in the CronJobFlow's time zone (CronJob's
#: `batch.kubernetes.io/cronjob-scheduled-timestamp`).
SCHEDULED_TIMESTAMP_ANNOTATION: Final = "flow.volcano.sh/scheduled-timestamp"
#: On a run made by `kubectl jobflow create --from=cronjobflow/NAME` (as kubectl's
#: `cronjob.kubernetes.io/instantiate: manual` on `kubectl create job --from=cronjob/`).
MANUAL_TRIGGER_ANNOTATION: Final = "flow.volcano.sh/created-by-manual-trigger"
#: The largest `spec.startingDeadlineSeconds` admitted (one year). Admission refuses more; the
#: controller takes a larger stored value as this (a deadline longer than the look-back since the
#: last schedule behaves as none anyway), so no date arithmetic ever sees it.
MAX_STARTING_DEADLINE_SECONDS: Final = 31_536_000
#: CronJob's defaults for the two history limits.
DEFAULT_SUCCESSFUL_HISTORY_LIMIT: Final = 3
DEFAULT_FAILED_HISTORY_LIMIT: Final = 1


class ConcurrencyPolicy(StrEnum):
    ALLOW = "Allow"
    FORBID = "Forbid"
    REPLACE = "Replace"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, (dict, Mapping)) else {}


def spec(obj: Obj) -> Mapping[str, Any]:
    return _mapping(obj.get("spec"))


def status(obj: Obj) -> Mapping[str, Any]:
    return _mapping(obj.get("status"))


def schedule(obj: Obj) -> str:
    value = spec(obj).get("schedule")
    return value if isinstance(value, str) else ""


def time_zone(obj: Obj) -> str | None:
    """`spec.timeZone`, None when unset (the controller's UTC)."""
    value = spec(obj).get("timeZone")
    return value if isinstance(value, str) else None


def concurrency_policy(obj: Obj) -> str:
    """`spec.concurrencyPolicy`, `Allow` when unset (an unknown value is also run as `Allow`, as
    CronJob's controller does; admission refuses it)."""
    value = spec(obj).get("concurrencyPolicy")
    return value if isinstance(value, str) and value else ConcurrencyPolicy.ALLOW.value


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def starting_deadline_seconds(obj: Obj) -> int | None:
    return _int_or_none(spec(obj).get("startingDeadlineSeconds"))


def suspend(obj: Obj) -> bool:
    return spec(obj).get("suspend") is True


def successful_history_limit(obj: Obj) -> int:
    value = _int_or_none(spec(obj).get("successfulJobFlowsHistoryLimit"))
    return DEFAULT_SUCCESSFUL_HISTORY_LIMIT if value is None else max(0, value)


def failed_history_limit(obj: Obj) -> int:
    value = _int_or_none(spec(obj).get("failedJobFlowsHistoryLimit"))
    return DEFAULT_FAILED_HISTORY_LIMIT if value is None else max(0, value)


def job_flow_template(obj: Obj) -> Mapping[str, Any]:
    return _mapping(spec(obj).get("jobFlowTemplate"))


def active(obj: Obj) -> list[Mapping[str, Any]]:
    value = status(obj).get("active")
    return [r for r in value if isinstance(r, (dict, Mapping))] if isinstance(value, list) else []


def last_schedule_time(obj: Obj) -> str | None:
    value = status(obj).get("lastScheduleTime")
    return value if isinstance(value, str) and value else None


def last_successful_time(obj: Obj) -> str | None:
    value = status(obj).get("lastSuccessfulTime")
    return value if isinstance(value, str) and value else None


def time_hash_in_minutes(scheduled_time: datetime.datetime) -> int:
    """CronJob's `getTimeHashInMinutes`: whole minutes since the epoch."""
    return int(scheduled_time.timestamp()) // 60


def run_name(cron_job_flow_name: str, scheduled_time: datetime.datetime) -> str:
    """A scheduled run's name: `<cronjobflow>-<minutes since the epoch>` (CronJob's `getJobName`)."""
    return f"{cron_job_flow_name}-{time_hash_in_minutes(scheduled_time)}"


def controller_reference(cron_job_flow: Obj) -> dict[str, Any]:
    """`metav1.NewControllerRef`: the run is controlled by its CronJobFlow and blocks its deletion."""
    return {
        "apiVersion": FLOW_GROUP_VERSION,
        "kind": CRON_JOB_FLOW_KIND,
        "name": meta.name(cron_job_flow),
        "uid": meta.uid(cron_job_flow),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _format_rfc3339(t: datetime.datetime) -> str:
    # Go's time.RFC3339: the offset as Z for UTC, else +hh:mm; whole seconds.
    text = t.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def new_job_flow(
    cron_job_flow: Obj, name: str, annotations: Mapping[str, str], *, owned: bool = True
) -> dict[str, Any]:
    """A JobFlow from `spec.jobFlowTemplate`: its labels and annotations plus `annotations`, its spec.

    The template comes from the informer cache: everything is copied, nothing shared.
    """
    template = job_flow_template(cron_job_flow)
    template_meta = _mapping(template.get("metadata"))
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": meta.namespace(cron_job_flow),
        "labels": dict(_mapping(template_meta.get("labels"))),
        "annotations": {**_mapping(template_meta.get("annotations")), **annotations},
    }
    if owned:
        metadata["ownerReferences"] = [controller_reference(cron_job_flow)]
    return {
        "apiVersion": FLOW_GROUP_VERSION,
        "kind": JOB_FLOW_KIND,
        "metadata": metadata,
        "spec": copy.deepcopy(dict(_mapping(template.get("spec")))),
    }


def scheduled_job_flow(cron_job_flow: Obj, scheduled_time: datetime.datetime, zone: datetime.tzinfo) -> dict[str, Any]:
    """CronJob's `getJobFromTemplate2`: the run for `scheduled_time`, named for it and stamped with it."""
    stamp = _format_rfc3339(scheduled_time.astimezone(zone))
    return new_job_flow(
        cron_job_flow,
        run_name(meta.name(cron_job_flow), scheduled_time),
        {SCHEDULED_TIMESTAMP_ANNOTATION: stamp},
    )


def manual_job_flow(cron_job_flow: Obj, name: str) -> dict[str, Any]:
    """`kubectl create job --from=cronjob/` for JobFlows: the template, the manual-trigger annotation,
    and the CronJobFlow as controlling owner, so its history limits and garbage collection cover it."""
    return new_job_flow(cron_job_flow, name, {MANUAL_TRIGGER_ANNOTATION: "true"})


def object_reference(job_flow: Obj) -> dict[str, Any]:
    """`ref.GetReference`: the entry of `status.active` for a run."""
    return {
        "apiVersion": str(job_flow.get("apiVersion") or FLOW_GROUP_VERSION),
        "kind": str(job_flow.get("kind") or JOB_FLOW_KIND),
        "name": meta.name(job_flow),
        "namespace": meta.namespace(job_flow),
        "resourceVersion": meta.resource_version(job_flow),
        "uid": meta.uid(job_flow),
    }
