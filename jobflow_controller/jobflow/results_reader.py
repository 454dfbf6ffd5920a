"""Ours, opt-in (docs/results.md): the observe step that reads an ended Job's results from its pod.

Why a GET of one pod, not a pod informer: a JobFlow that declares no results must cost nothing
(no watch, no cache of every pod in the cluster), and a declaring one needs each Job's pod exactly
once, when the Job has ended; a GET of `<job>-<task>-0` then is one request per Job, and its answer
goes into the status (`jobStatusList[].results`), so nothing is kept in memory and a restart reads
nothing again. `jobs_to_read` is the pure choice; `ResultsReader.read` does the GETs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from jobflow_controller.apis import JobPhase, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis.results import (
    MAX_TOTAL_RESULT_BYTES,
    FlowResults,
    Reading,
    pod_name,
    read_pod,
    results_size,
)
from jobflow_controller.apis.retry import job_attempt
from jobflow_controller.apis.status import RecordedEntries
from jobflow_controller.jobflow import retry
from jobflow_controller.jobflow.world import World

Obj = Mapping[str, Any]
#: The Job phases whose pod is read: a `finally` flow may read what a failed flow reported.
READ_PHASES = frozenset({JobPhase.COMPLETED, JobPhase.FAILED})
#: `(namespace, pod name) -> the pod, or None when not found`.
GetPod = Callable[[str, str], Obj | None]
#: The most pods one sync reads: a 256-Job matrix flow ending at once would otherwise hold a worker for
#: 256 LISTs, one after another, while every other JobFlow waits (bench/hostile.py `results_hostile`).
#: The rest are read by the next sync, queued at once behind what waits already (as the creates past
#: action.py's `MAX_CREATES_PER_SYNC`); a Job not read yet has no outcome, so nothing depends on it yet.
MAX_READS_PER_SYNC = 8


def jobs_to_read(world: World) -> Iterator[tuple[str, Obj | None, FlowResults]]:
    """(Job name, its Job or None, the flow's declaration) of each Job whose results are due to be read.

    An ended Job of ours whose entry has no results yet, or whose results are an earlier attempt's
    (retried or re-run); a Job recorded Completed, gone before it was read (None: nothing to GET).
    """
    spec = world.spec.results
    if spec is None:
        return
    entries = RecordedEntries(world.job_flow)
    for flow_name, declared in spec.flows.items():
        for name in world.flow_job_names(flow_name):
            entry = entries.get(name)
            if entry is not None and entry.results is not None and not retry.awaiting_recreate(entry):
                continue
            job = world.named_jobs.get(name)
            if job is None or not meta.is_controlled_by(job, world.job_flow):
                if name in world.completed and (entry is None or not retry.awaiting_recreate(entry)):
                    yield name, None, declared
                continue
            if vcjob.phase(job) in READ_PHASES and job_attempt(job) >= retry.recreations(entry):
                yield name, job, declared


def within_budget(world: World, readings: dict[str, Reading]) -> dict[str, Reading]:
    """The readings, those past `MAX_TOTAL_RESULT_BYTES` for the whole JobFlow refused (in Job order)."""
    entries = RecordedEntries(world.job_flow)
    total = 0
    for flow_name in world.spec.results.flows if world.spec.results else ():
        for name in world.flow_job_names(flow_name):
            entry = entries.get(name)
            if name not in readings and entry is not None and entry.results:
                total += results_size(entry.results)
    out = {}
    for name, reading in readings.items():
        size = results_size(reading.values)
        if total + size > MAX_TOTAL_RESULT_BYTES:
            problem = (
                f"results of {size} bytes would bring the JobFlow's to {total + size},"
                f" more than the {MAX_TOTAL_RESULT_BYTES} allowed"
            )
            out[name] = Reading({}, (*reading.problems, problem))
            continue
        total += size
        out[name] = reading
    return out


class ResultsReader:
    """Reads the due Jobs' pods (one GET each) into `World.readings`; a JobFlow without results untouched."""

    def __init__(self, get_pod: GetPod) -> None:
        self._get_pod = get_pod

    def read(self, world: World) -> World:
        if world.spec.results is None:
            return world
        readings: dict[str, Reading] = {}
        reads, left = 0, False
        for name, job, declared in jobs_to_read(world):
            if job is not None and reads == MAX_READS_PER_SYNC:
                left = True
                break
            if job is None:
                why = "its Job was deleted before its results were read"
                readings[name] = Reading({}, tuple(f"result {n!r}: {why}" for n in declared.names), pod_missing=True)
                continue
            reads += 1
            readings[name] = read_pod(self._get_pod(world.namespace, pod_name(job, declared)), job, declared)
        if not readings:
            return world
        return replace(world, readings=within_budget(world, readings), readings_left=left)


def pod_getter(pods: Callable[[str], Any]) -> GetPod:
    """A `GetPod` over a clientset's `pods(namespace)` client: a LIST of the one pod by its name (a field
    selector), so the controller needs no more than the `list` on pods the probes' informer has; none
    found is None, any error raises (the sync fails and is retried through the queue, as any API error)."""

    def get(namespace: str, name: str) -> Obj | None:
        found: list[Obj] = pods(namespace).list(field_selector=f"metadata.name={name}")
        return next((pod for pod in found if pod.get("metadata", {}).get("name") == name), None)

    return get
