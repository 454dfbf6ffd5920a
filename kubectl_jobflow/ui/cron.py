"""The CronJobFlows section of `kubectl jobflow ui` (docs/cron.md): each with its next run and links
to its JobFlows.

CronJobFlows are few and change rarely, so they are not watched: `CronList` lists them at most every
`LIST_TTL` seconds, when a page asks; the JobFlows they own come from the UI's JobFlow cache. A
cluster without the CronJobFlow CRD, or a user who may not list them, shows an empty section with a
note instead of failing the page. The next run is computed as the controller does
(`apis.cron_schedule`), so the UI and the controller agree.
"""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.apis import cronjobflow as cjf
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import CRON_JOB_FLOW_KIND
from jobflow_controller.apis.cron_schedule import ScheduleError, TimeZoneError, parse_schedule
from jobflow_controller.apis.meta import format_time
from jobflow_controller.kube.clientset import Clientset

#: How long one list of CronJobFlows is shown before the next page load lists them again.
LIST_TTL = 5.0


def next_run(cron_job_flow: Mapping[str, Any], now: datetime.datetime) -> tuple[str | None, str]:
    """(the next schedule time in RFC 3339 UTC, or None; why there is none, or "")."""
    if cjf.suspend(cron_job_flow):
        return None, "suspended"
    try:
        schedule = parse_schedule(cjf.schedule(cron_job_flow), cjf.time_zone(cron_job_flow))
    except (ScheduleError, TimeZoneError) as err:
        return None, str(err)
    return format_time(schedule.next(now)), ""


def _owned_by(job_flow: Mapping[str, Any], cron_job_flow: Mapping[str, Any]) -> bool:
    ref = meta.get_controller_of(job_flow)
    return ref is not None and ref.get("kind") == CRON_JOB_FLOW_KIND and ref.get("uid") == meta.uid(cron_job_flow)


def cron_row(
    cron_job_flow: Mapping[str, Any], job_flows: Iterable[Mapping[str, Any]], now: datetime.datetime
) -> dict[str, Any]:
    """One CronJobFlow as the page shows it; `runs` newest first, each linkable by namespace and name."""
    upcoming, why = next_run(cron_job_flow, now)
    runs = sorted(
        (f for f in job_flows if meta.namespace(f) == meta.namespace(cron_job_flow) and _owned_by(f, cron_job_flow)),
        key=lambda f: (meta.creation_timestamp(f) or "", meta.name(f)),
        reverse=True,
    )
    return {
        "key": f"{meta.namespace(cron_job_flow)}/{meta.name(cron_job_flow)}",
        "namespace": meta.namespace(cron_job_flow),
        "name": meta.name(cron_job_flow),
        "schedule": cjf.schedule(cron_job_flow),
        "timeZone": cjf.time_zone(cron_job_flow) or "",
        "suspend": cjf.suspend(cron_job_flow),
        "concurrencyPolicy": cjf.concurrency_policy(cron_job_flow),
        "next": upcoming,
        "nextProblem": why,
        "lastSchedule": cjf.last_schedule_time(cron_job_flow),
        "lastSuccessful": cjf.last_successful_time(cron_job_flow),
        "active": [str(r.get("name") or "") for r in cjf.active(cron_job_flow)],
        "runs": [{"name": meta.name(f), "phase": jf.phase(f) or "Pending"} for f in runs],
    }


class CronList:
    """The CronJobFlows of the UI's scope, listed through the user's client at most every `LIST_TTL`."""

    def __init__(
        self,
        clientset: Clientset,
        namespace: str | None,
        job_flows: Callable[[], list[Any]],
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self._clientset, self._namespace = clientset, namespace
        self._job_flows = job_flows
        self._clock, self._now = clock, now
        self._lock = threading.Lock()
        self._listed: tuple[float, list[Any], str] | None = None

    def _list(self) -> tuple[list[Any], str]:
        with self._lock:
            if self._listed is not None and self._clock() - self._listed[0] < LIST_TTL:
                return self._listed[1], self._listed[2]
        try:
            items, note = self._clientset.cron_job_flows(self._namespace).list(), ""
        except NotFoundError:
            items, note = [], "the CronJobFlow CRD is not installed"
        except ApiStatusError as err:
            items, note = [], f"cannot list CronJobFlows: {err.message}"
        except (ConnectionError, OSError) as err:
            items, note = [], f"cannot reach the API server: {err}"
        with self._lock:
            self._listed = (self._clock(), items, note)
        return items, note

    def snapshot(self) -> dict[str, Any]:
        items, note = self._list()
        now, flows = self._now(), self._job_flows()
        rows = sorted((cron_row(c, flows, now) for c in items), key=lambda r: (r["namespace"], r["name"]))
        return {"rows": rows, "note": note, "now": format_time(now)}
