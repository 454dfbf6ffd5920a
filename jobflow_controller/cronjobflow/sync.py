"""One CronJobFlow sync: CronJob's `sync` and the I/O of `syncCronJob`, around the pure `decide`.

The order is CronJob's: delete the finished runs beyond the history limits, reconcile the runs with
`status.active`, check the active entries missing from the cache against the API server, decide,
delete the active runs for `Replace`, create the run, write the status once if it changed, and
return the delay to the next schedule time (the controller requeues the key with it).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from informers.errors import NotFoundError, has_status_cause
from jobflow_controller.apis import cronjobflow as cjf
from jobflow_controller.apis import meta
from jobflow_controller.apis.cron_schedule import load_time_zone
from jobflow_controller.apis.meta import format_time, parse_time
from jobflow_controller.cronjobflow import events as ev
from jobflow_controller.cronjobflow.decide import (
    Decision,
    Reconciled,
    ScheduleOutcome,
    decide_schedule,
    history_deletes,
    is_finished,
    is_recorded_run,
    reconcile_children,
)
from jobflow_controller.cronjobflow.metrics import CronJobFlowMetrics
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.conflict import DEFAULT_RETRY, retry_on_conflict
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]
#: A run is deleted for `Replace` with foreground propagation (the JobFlow goes once its Jobs have);
#: beyond the history limits in the background (it goes at once, the garbage collector takes its Jobs).
FOREGROUND = "Foreground"
BACKGROUND = "Background"
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


@dataclass
class SyncResult:
    """What the controller does after a sync: requeue the key after this many seconds (or not), and
    count the missed times `decision` saw."""

    requeue_after: float | None
    decision: Decision | None = None


class CronJobFlowSyncer:
    """The I/O of one sync: the client, the recorder, the metrics; `now` comes from the controller."""

    def __init__(self, clientset: Clientset, recorder: Any, metrics: CronJobFlowMetrics | None) -> None:
        self.clientset = clientset
        self.recorder = recorder
        self.metrics = metrics

    def _record(self, cron_job_flow: Obj, events: Sequence[ev.Event]) -> None:
        for event in events:
            self.recorder.event(cron_job_flow, event.type, event.reason, event.message)

    def sync(self, cron_job_flow: Obj, children: Sequence[Obj], now: datetime.datetime) -> SyncResult:
        """Reconcile `cron_job_flow` with its runs `children` (the JobFlows it controls) at `now`."""
        working = self._fresh_if_unexpected(cron_job_flow, children)
        deleted = self._cleanup(working, children)
        if deleted:
            # As CronJob's deleteJob: a deleted run leaves the active list before the runs are looked at.
            kept = [ref for ref in cjf.active(working) if str(ref.get("uid") or "") not in deleted]
            working = {**working, "status": {**cjf.status(working), "active": kept}}
        reconciled = reconcile_children(working, children, now)
        changed = reconciled.changed or bool(deleted)
        self._record(working, reconciled.events)
        changed = self._drop_missing(working, reconciled) or changed
        decision = decide_schedule(working, reconciled.active, now)
        self._record(working, decision.events)
        last_schedule = cjf.last_schedule_time(working)
        try:
            if decision.outcome is ScheduleOutcome.CREATE:
                assert decision.scheduled_time is not None
                changed = self._replace(working, reconciled, decision) or changed
                ref = self._create(working, reconciled, decision.scheduled_time)
                if ref is not None:
                    reconciled.active.append(ref)
                    last_schedule = format_time(decision.scheduled_time)
                    changed = True
        finally:
            if changed:
                self._write_status(working, reconciled, last_schedule)
        return SyncResult(decision.requeue_after, decision)

    def _fresh_if_unexpected(self, cron_job_flow: Obj, children: Sequence[Obj]) -> Obj:
        """CronJob re-reads the object when it sees an unfinished run of its own that `status.active`
        lacks: usually its own status write the cache has not caught up with yet."""
        active = {str(ref.get("uid") or "") for ref in cjf.active(cron_job_flow)}
        if all(meta.uid(c) in active or is_finished(c) for c in children):
            return cron_job_flow
        fresh: Obj = self.clientset.cron_job_flows(meta.namespace(cron_job_flow)).get(meta.name(cron_job_flow))
        return fresh if meta.uid(fresh) == meta.uid(cron_job_flow) else cron_job_flow

    def _cleanup(self, cron_job_flow: Obj, children: Sequence[Obj]) -> set[str]:
        """`cleanupFinishedJobs`: the uids deleted (their Jobs follow through the garbage collector)."""
        deleted: set[str] = set()
        for child in history_deletes(cron_job_flow, children):
            if self._delete(cron_job_flow, child, BACKGROUND):
                deleted.add(meta.uid(child))
        return deleted

    def _delete(self, cron_job_flow: Obj, child: Obj, propagation: str) -> bool:
        """CronJob's `deleteJob`: one DELETE with a uid precondition (the uid of the run we mean, so a
        JobFlow re-created under the name meanwhile is never deleted), `SuccessfulDelete` or
        `FailedDelete`. Gone, or another object under the name (409): ours is gone, as deleted."""
        name = meta.name(child)
        try:
            self.clientset.job_flows(meta.namespace(child)).delete(
                name, propagation_policy=propagation, uid=meta.uid(child) or None
            )
        except NotFoundError:
            pass  # gone already: as deleted
        except ConflictError:
            self._record(cron_job_flow, [ev.normal(ev.MISSING_JOB, ev.MESSAGE_MISSING % name)])
            return True
        except Exception as err:  # noqa: BLE001 - reported as upstream does, the caller decides
            self._record(cron_job_flow, [ev.warning(ev.FAILED_DELETE, ev.MESSAGE_FAILED_DELETE % err)])
            log.error("could not delete jobflow", cronjobflow=_key(cron_job_flow), jobflow=name, error=str(err))
            return False
        self._record(cron_job_flow, [ev.normal(ev.SUCCESSFUL_DELETE, ev.MESSAGE_DELETED % name)])
        return True

    def _get_run(self, cron_job_flow: Obj, ref: Mapping[str, Any]) -> Obj | None:
        """The JobFlow named by an active entry, from the API server (None: not found)."""
        # The run is always in the CronJobFlow's namespace: an entry naming another is not followed.
        try:
            found: Obj = self.clientset.job_flows(meta.namespace(cron_job_flow)).get(str(ref.get("name") or ""))
        except NotFoundError:
            return None
        return found

    def _missing(self, cron_job_flow: Obj, reconciled: Reconciled, ref: Mapping[str, Any]) -> None:
        """`MissingJob`: the entry leaves `status.active` (nothing is deleted)."""
        name = str(ref.get("name") or "")
        self._record(cron_job_flow, [ev.normal(ev.MISSING_JOB, ev.MESSAGE_MISSING % name)])
        reconciled.active = [r for r in reconciled.active if r is not ref and r.get("uid") != ref.get("uid")]

    def _drop_missing(self, cron_job_flow: Obj, reconciled: Reconciled) -> bool:
        """Active entries whose run the cache lacks are checked with a GET; gone ones, and ones whose
        name now holds another JobFlow (`is_recorded_run`), are dropped."""
        changed = False
        for ref in reconciled.unverified:
            if not is_recorded_run(ref, self._get_run(cron_job_flow, ref), cron_job_flow):
                self._missing(cron_job_flow, reconciled, ref)
                changed = True
        return changed

    def _replace(self, cron_job_flow: Obj, reconciled: Reconciled, decision: Decision) -> bool:
        """`Replace`: every active run is deleted (foreground, uid precondition: the recorded uid)
        before the new one is created; an entry whose name now holds another JobFlow is dropped."""
        for ref in decision.replace:
            name = str(ref.get("name") or "")
            try:
                run = self._get_run(cron_job_flow, ref)
            except Exception as err:
                self._record(cron_job_flow, [ev.warning(ev.FAILED_GET, ev.MESSAGE_FAILED_GET % err)])
                raise
            if run is None or not is_recorded_run(ref, run, cron_job_flow):
                self._missing(cron_job_flow, reconciled, ref)
                continue
            if not self._delete(cron_job_flow, run, FOREGROUND):
                raise RuntimeError(f"could not replace jobflow {meta.namespace(run)}/{name}")
            reconciled.active = [r for r in reconciled.active if r.get("uid") != meta.uid(run)]
        return bool(decision.replace)

    def _create(
        self, cron_job_flow: Obj, reconciled: Reconciled, scheduled: datetime.datetime
    ) -> dict[str, Any] | None:
        """Create the run for `scheduled`; its `status.active` entry, or None when none is to be added."""
        ns = meta.namespace(cron_job_flow)
        body = cjf.scheduled_job_flow(cron_job_flow, scheduled, load_time_zone(cjf.time_zone(cron_job_flow)))
        try:
            created: Obj = self.clientset.job_flows(ns).create(body)
        except AlreadyExistsError as err:
            return self._already_exists(cron_job_flow, reconciled, body, err)
        except Exception as err:
            if not has_status_cause(err, NAMESPACE_TERMINATING_CAUSE):
                self._record(cron_job_flow, [ev.warning(ev.FAILED_CREATE, ev.MESSAGE_FAILED_CREATE % err)])
            raise
        if self.metrics is not None:
            stamped = meta.creation_timestamp(created)
            lag = (parse_time(stamped) - scheduled).total_seconds() if stamped else 0.0
            self.metrics.observe_scheduled(ns, lag)
        self._record(cron_job_flow, [ev.normal(ev.SUCCESSFUL_CREATE, ev.MESSAGE_CREATED % meta.name(created))])
        return cjf.object_reference(created)

    def _already_exists(
        self, cron_job_flow: Obj, reconciled: Reconciled, body: Obj, err: Exception
    ) -> dict[str, Any] | None:
        """A JobFlow has the run's name already. Ours (created before a status write was lost): it is
        added to `status.active` if missing. Not ours: never adopted nor replaced; `FailedCreate`."""
        name = meta.name(body)
        existing: Obj = self.clientset.job_flows(meta.namespace(cron_job_flow)).get(name)
        if not meta.is_controlled_by(existing, cron_job_flow):
            self._record(cron_job_flow, [ev.warning(ev.FAILED_CREATE, ev.MESSAGE_FAILED_CREATE % err)])
            log.info("jobflow exists and is not ours", cronjobflow=_key(cron_job_flow), jobflow=name)
            return None
        log.info("jobflow already exists", cronjobflow=_key(cron_job_flow), jobflow=name)
        if any(ref.get("uid") == meta.uid(existing) for ref in reconciled.active):
            return None
        return cjf.object_reference(existing)

    def _write_status(self, cron_job_flow: Obj, reconciled: Reconciled, last_schedule: str | None) -> None:
        """One PUT of the status; on a conflict (the spec changed meanwhile) the same status is put on
        a fresh copy: no one else writes a CronJobFlow's status."""
        status = _status(cron_job_flow, reconciled, last_schedule)
        client = self.clientset.cron_job_flows(meta.namespace(cron_job_flow))
        current: list[Obj] = [cron_job_flow]

        def attempt() -> None:
            try:
                client.update_status({**current[0], "status": status})
            except ConflictError:
                current[0] = client.get(meta.name(cron_job_flow))
                raise

        retry_on_conflict(DEFAULT_RETRY, attempt)


def _status(cron_job_flow: Obj, reconciled: Reconciled, last_schedule: str | None) -> dict[str, Any]:
    status = dict(cjf.status(cron_job_flow))
    for key, value in (
        ("active", reconciled.active),
        ("lastScheduleTime", last_schedule),
        ("lastSuccessfulTime", reconciled.last_successful_time),
    ):
        if value:
            status[key] = value
        else:
            status.pop(key, None)
    return status


def _key(cron_job_flow: Obj) -> str:
    return f"{meta.namespace(cron_job_flow)}/{meta.name(cron_job_flow)}"
