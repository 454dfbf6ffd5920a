"""bench/hostile.py's CronJobFlow scenarios (issue 42, items 3 and 4), kept apart so the benchmark's
own module stays short; each returns the dict that goes into its scenario's result.

* ``cron_overflow``: in a namespace the webhook does not admit (a CRD-only install), CronJobFlows
  every minute with ``startingDeadlineSeconds`` 10^11 and 2^63-1 (the CRD may refuse them once it
  carries its maximum: then that refusal is the result), and one whose status holds a
  ``lastScheduleTime`` in the year 9999 (what a hand-written status can store). Across a minute
  boundary: the controller's ``requeue`` log lines about them (a sync that raised; the issue saw 14
  in 90 s), tracebacks, the Warnings on each, and whether each still made its run.
* ``cron_foreign_run``: a Replace and a Forbid CronJobFlow whose ``status.active`` records a run that
  is deleted and re-created by someone else under the same name; at the next minute: is the foreign
  JobFlow still there (same uid), and did each make its run.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from jobflow_controller.apis.cronjobflow import controller_reference, object_reference, time_hash_in_minutes
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ApiStatusError, ConflictError
from jobflow_controller.kube.resources import EVENTS
from jobflow_controller.local.processes import Process
from tests.e2e.jobflows import template

OVERFLOW_NAMESPACE = "hostile-cron"
FOREIGN_NAMESPACE = "hostile-cron-foreign"
NAMESPACES = (OVERFLOW_NAMESPACE, FOREIGN_NAMESPACE)
DEADLINES = {"deadline-1e11": 10**11, "deadline-int64": 2**63 - 1}
LAST_9999 = "last-9999"
#: How long after the minute boundary the results are read (the runs are made within seconds).
AFTER_MINUTE = 15.0
RUN_SCRIPT = "Pending:0.1s,Running:0.2s,Completed"
LONG_SCRIPT = "Pending:0.1s,Running:600s,Completed"
#: A run name no minute of this run can have: the recorded run that someone else re-creates.
STALE_MINUTES = 29_000_000


def _cron_job_flow(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "CronJobFlow",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedule": "* * * * *",
            "jobFlowTemplate": {"spec": {"jobRetainPolicy": "delete", "flows": [{"name": "step"}]}},
            **spec,
        },
    }


def _job_flow(name: str, namespace: str, owner: dict[str, Any] | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if owner is not None:
        metadata["ownerReferences"] = [controller_reference(owner)]
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": metadata,
        "spec": {"flows": [{"name": "step"}]},
    }


def _put_status(clientset: Clientset, namespace: str, name: str, status: dict[str, Any]) -> None:
    for _ in range(5):
        current = clientset.cron_job_flows(namespace).get(name)
        try:
            clientset.cron_job_flows(namespace).update_status({**current, "status": status})
            return
        except ConflictError:
            continue


def _next_minute() -> datetime.datetime:
    now = datetime.datetime.now(datetime.UTC)
    return (now + datetime.timedelta(minutes=1)).replace(second=0, microsecond=0)


def _sleep_until(t: datetime.datetime) -> None:
    time.sleep(max(0.0, (t - datetime.datetime.now(datetime.UTC)).total_seconds()))


def _runs_at(clientset: Clientset, namespace: str, names: list[str], minute: datetime.datetime) -> dict[str, bool]:
    present = {f["metadata"]["name"] for f in clientset.job_flows(namespace).list()}
    return {name: f"{name}-{time_hash_in_minutes(minute)}" in present for name in names}


def _warnings(clientset: Clientset, namespace: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for event in clientset.resource(EVENTS, namespace).list():
        involved = event.get("involvedObject") or {}
        if event.get("type") == "Warning" and involved.get("kind") == "CronJobFlow":
            reasons = out.setdefault(str(involved.get("name")), {})
            reasons[str(event.get("reason"))] = reasons.get(str(event.get("reason")), 0) + int(event.get("count") or 1)
    return out


def cron_overflow(clientset: Clientset, controller: Process, no_webhook: dict[str, str]) -> dict[str, Any]:
    namespace = OVERFLOW_NAMESPACE
    from bench._common import create_namespace

    create_namespace(clientset, namespace, no_webhook)
    clientset.job_templates(namespace).create(template("step", namespace, RUN_SCRIPT))
    log_before = len(controller.log_tail(1_000_000).splitlines())
    admitted: list[str] = []
    refused: dict[str, str] = {}
    for name, deadline in DEADLINES.items():
        try:
            clientset.cron_job_flows(namespace).create(
                _cron_job_flow(name, namespace, startingDeadlineSeconds=deadline)
            )
            admitted.append(name)
        except ApiStatusError as err:
            refused[name] = err.message[:300]
    clientset.cron_job_flows(namespace).create(_cron_job_flow(LAST_9999, namespace))
    _put_status(clientset, namespace, LAST_9999, {"lastScheduleTime": "9999-12-31T23:59:59Z"})
    admitted.append(LAST_9999)
    minute = _next_minute()
    _sleep_until(minute + datetime.timedelta(seconds=AFTER_MINUTE))
    lines = controller.log_tail(1_000_000).splitlines()[log_before:]
    about = [line for line in lines if f"{namespace}/" in line]
    return {
        "cronjobflows_admitted": admitted,
        "refused_by_the_api_server": refused,
        "minute_boundary_crossed": minute.isoformat(),
        "requeue_log_lines_about_them": sum("requeue" in line for line in about),
        "tracebacks_in_log": sum("Traceback" in line for line in lines),
        "run_made_at_the_minute": _runs_at(clientset, namespace, admitted, minute),
        "warnings_by_cronjobflow": _warnings(clientset, namespace),
    }


def cron_foreign_run(clientset: Clientset) -> dict[str, Any]:
    from bench._common import create_namespace

    namespace = FOREIGN_NAMESPACE
    create_namespace(clientset, namespace)
    clientset.job_templates(namespace).create(template("step", namespace, LONG_SCRIPT))
    foreign: dict[str, str] = {}
    for name, policy in (("replace", "Replace"), ("forbid", "Forbid")):
        owner = clientset.cron_job_flows(namespace).create(_cron_job_flow(name, namespace, concurrencyPolicy=policy))
        stale = f"{name}-{STALE_MINUTES}"
        ours = clientset.job_flows(namespace).create(_job_flow(stale, namespace, owner))
        _put_status(clientset, namespace, name, {"active": [object_reference(ours)]})
        clientset.job_flows(namespace).delete(stale, uid=ours["metadata"]["uid"])
        for _ in range(100):  # the JobFlow has no finalizer: gone at once, but the cache may lag
            try:
                clientset.job_flows(namespace).create(_job_flow(stale, namespace, None))
                break
            except ApiStatusError:
                time.sleep(0.1)
        foreign[name] = clientset.job_flows(namespace).get(stale)["metadata"]["uid"]
    minute = _next_minute()
    _sleep_until(minute + datetime.timedelta(seconds=AFTER_MINUTE))
    present = {f["metadata"]["name"]: f["metadata"]["uid"] for f in clientset.job_flows(namespace).list()}
    return {
        "minute_boundary_crossed": minute.isoformat(),
        "foreign_jobflow_kept": {n: present.get(f"{n}-{STALE_MINUTES}") == uid for n, uid in foreign.items()},
        "run_made_at_the_minute": _runs_at(clientset, namespace, list(foreign), minute),
    }


def checks(name: str, result: dict[str, Any]) -> dict[str, bool]:
    """The scenario's own verdicts, beside the common ones (peak RSS, bystanders, /healthz)."""
    if name == "cron_overflow":
        warned = result["warnings_by_cronjobflow"]
        return {
            "no_requeue_storm_no_traceback": result["requeue_log_lines_about_them"] == 0
            and result["tracebacks_in_log"] == 0,
            "each_admitted_one_warned_invalid": all(
                "InvalidCronJobFlow" in warned.get(n, {}) for n in result["cronjobflows_admitted"]
            ),
            "each_admitted_one_still_runs": all(result["run_made_at_the_minute"].values()),
        }
    if name == "cron_foreign_run":
        return {
            "foreign_jobflows_never_deleted": all(result["foreign_jobflow_kept"].values()),
            "replace_and_forbid_still_run": all(result["run_made_at_the_minute"].values()),
        }
    return {}
