"""`dependsOn.probe` as a dependency condition (ours: upstream stores the field and never reads it).

What a probe gates (docs/probe.md): upstream's design (docs/design/jobflow/README.md) lists probes
among the *dependency types* ("depend on the completion of the previous job or other status when
running ... conditional dependencies, probes"), so a probe is another way for a target to be met,
not an extra hurdle after Completed. An HTTP or TCP check against the pods of a Completed Job could
never pass (Volcano's pods have exited by then), so "Completed AND probes" would make two of the
three lists dead. Our rule, per target of a flow:

* the target is met when its Job is Completed (upstream's rule, unchanged), or
* when the probe entries that apply to it (those naming one of its Job's tasks) all pass.

A target no entry applies to keeps upstream's rule alone. An entry whose task no target's Job (or,
before the Job exists, JobTemplate) has is a spec error: a Warning `InvalidProbe` and that flow
waits. A flow without a probe is judged exactly as upstream judges it.

Network checks never run on a worker thread: `ProbeCache` (probes/cache.py) runs them on a small
bounded pool, fair across namespaces, and caches each result per (JobFlow uid, flow, check, pod)
for `PROBE_POLL_PERIOD`; a worker only reads the cache and, while a check is failing or still
running, puts the JobFlow back with `add_after`. A finished check also enqueues its JobFlow at once,
so a pass is acted on without waiting for the poll. The checks themselves, each under one deadline,
and the addresses never checked are in probes/net.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import structlog

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.probe import HttpGet, Probe, TaskStatus, TcpSocket
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.probes.cache import (
    PROBE_POLL_PERIOD,
    ProbeCache,
    ProbeKey,
)
from jobflow_controller.jobflow.probes.net import (
    PROBE_TIMEOUT,
    ProbeResult,
    ProbeRunner,
    refused_target,
)

__all__ = [
    "PodSource",
    "ProbeGate",
    "ProbeOutlet",
    "job_tasks",
    "ready_pods",
    "task_phase_count",
    "unmatched_tasks",
]

log = structlog.get_logger(__name__)

#: At most this many failing checks remembered as logged (then the memory starts again).
MAX_FAILURES_LOGGED = 10_000

Obj = Mapping[str, Any]


class PodSource(Protocol):
    """The pods of one task of one Job, from a cache; None while that cache has not synced."""

    def task_pods(self, namespace: str, job_name: str, task: str) -> list[Obj] | None: ...


def job_tasks(job_or_template: Obj) -> dict[str, int]:
    """Task name -> replicas of a Volcano Job (or JobTemplate) spec."""
    spec = job_or_template.get("spec")
    tasks = spec.get("tasks") if isinstance(spec, Mapping) else None
    out: dict[str, int] = {}
    for task in tasks if isinstance(tasks, list) else []:
        if isinstance(task, Mapping):
            replicas = task.get("replicas")
            out[str(task.get("name") or "")] = replicas if isinstance(replicas, int) else 0
    return out


def task_phase_count(job: Obj, task: str, phase: str) -> int:
    """`status.taskStatusCount[task].phase[phase]`, 0 when absent."""
    status = job.get("status")
    counts = status.get("taskStatusCount") if isinstance(status, Mapping) else None
    entry = counts.get(task) if isinstance(counts, Mapping) else None
    phases = entry.get("phase") if isinstance(entry, Mapping) else None
    value = phases.get(phase) if isinstance(phases, Mapping) else None
    return value if isinstance(value, int) else 0


def ready_pods(pods: Sequence[Obj], job: Obj) -> list[tuple[Obj, str]]:
    """(pod, pod IP) of the pods the checks run against: controlled by this Job (by uid), Running,
    not being deleted, with an IP."""
    out = []
    for pod in pods:
        if not meta.is_controlled_by(pod, job) or meta.metadata(pod).get("deletionTimestamp"):
            continue
        status = pod.get("status")
        if not isinstance(status, Mapping) or status.get("phase") != "Running" or not status.get("podIP"):
            continue
        out.append((pod, str(status["podIP"])))
    return out


class ProbeOutlet(Protocol):
    """Where a probe check's consequences go (probes/judge.py): the JobFlow back in the queue, a Warning."""

    def react(self, namespace: str, name: str, delay: float = 0.0) -> None:
        """Sync the JobFlow again after `delay` seconds (0: now): a check finished, or a poll is due."""

    def warn_invalid_probe(self, job_flow: Obj, message: str, *args: Any) -> None:
        """A Warning `InvalidProbe` on the JobFlow."""


class ProbeGate:
    """Decides whether a target's probes pass, from the Job, the pod cache and the probe cache.

    `outlet.react` puts the JobFlow back (a check finished, a poll is due). A pod `refused_target`
    refuses is never checked and counts as not passing: `outlet.warn_invalid_probe` names it.
    """

    def __init__(
        self,
        cache: ProbeCache,
        runner: ProbeRunner,
        pods: PodSource,
        outlet: ProbeOutlet,
        *,
        allow_loopback: bool = False,
        timeout: float = PROBE_TIMEOUT,
        poll_period: float = PROBE_POLL_PERIOD,
    ) -> None:
        self.cache = cache
        self.runner = runner
        self.pods = pods
        self.outlet = outlet
        self.allow_loopback = allow_loopback
        self.timeout = timeout
        self.poll_period = poll_period
        #: The failure last logged for each pod's check, so each is logged once, not at every sync.
        self._failures_logged: dict[ProbeKey, str] = {}

    def target_met(self, job_flow: Obj, flow: str, probe: Probe, job: Obj) -> bool:
        """Whether the entries of `probe` that name a task of `job` all pass (False when none does).

        Every check is looked at (none short-circuits), so all of one target's network checks are
        started in one sync. A failing or unfinished network check puts the JobFlow back after the
        poll period; a task phase needs no poll, as a Job status change enqueues the JobFlow, and
        neither does a check held back only by refused pods (a pod event syncs it again).
        """
        tasks = job_tasks(job)
        checks = probe.for_tasks(set(tasks))
        if not checks:
            return False
        met, poll, refused = True, False, set[str]()
        for check in checks:
            replicas = max(1, tasks[check.task_name])
            if isinstance(check, TaskStatus):
                met = task_phase_count(job, check.task_name, check.phase) >= replicas and met
                continue
            passed, waiting = self._network_check_passed(job_flow, flow, check, job, replicas, refused)
            met = passed and met
            poll = poll or waiting
        if poll:
            self.outlet.react(meta.namespace(job_flow), meta.name(job_flow), self.poll_period)
        return met

    def _network_check_passed(
        self, job_flow: Obj, flow: str, check: HttpGet | TcpSocket, job: Obj, replicas: int, refused: set[str]
    ) -> tuple[bool, bool]:
        """(whether at least `replicas` Running pods of the task pass `check`, whether a poll is
        due). Each pod is checked on the pool; `refused` collects the pods warned about."""
        ns = meta.namespace(job_flow)
        pods = self.pods.task_pods(ns, meta.name(job), check.task_name)
        if pods is None:
            return False, True  # the pod cache is still filling
        ready = ready_pods(pods, job)
        passing, refusals = 0, 0
        for pod, ip in ready:
            if self._refused(job_flow, flow, pod, ip, refused):
                refusals += 1
                continue
            key = ProbeKey(meta.uid(job_flow), flow, check, f"{meta.uid(pod) or meta.name(pod)}@{ip}", ns)
            outcome = self.cache.result(key, self._runner_for(check, ip), self._done(job_flow))
            if outcome is not None and outcome.ok:
                passing += 1
                self._failures_logged.pop(key, None)
            elif outcome is not None and self._failures_logged.get(key) != outcome.message:
                # Once per pod and message, not at every sync that reads the same cached failure.
                if len(self._failures_logged) >= MAX_FAILURES_LOGGED:
                    self._failures_logged.clear()
                self._failures_logged[key] = outcome.message
                log.info(
                    f"probe {check.describe()} of flow {flow} failed on {ip}: {outcome.message}",
                    jobflow=f"{ns}/{meta.name(job_flow)}",
                )
        if passing >= replicas:
            return True, False
        # Short only of refused pods: nothing a poll could change (a pod event syncs the JobFlow).
        return False, not refusals or passing + refusals < len(ready)

    def _refused(self, job_flow: Obj, flow: str, pod: Obj, ip: str, refused: set[str]) -> bool:
        why = refused_target(pod, ip, allow_loopback=self.allow_loopback)
        if why is None:
            return False
        if meta.name(pod) not in refused:
            job_name = jf.job_name(meta.name(job_flow), flow)
            self.outlet.warn_invalid_probe(
                job_flow, c.MESSAGE_PROBE_TARGET_REFUSED, job_name, flow, meta.name(pod), ip, why
            )
        refused.add(meta.name(pod))
        return True

    def _runner_for(self, check: HttpGet | TcpSocket, ip: str) -> Callable[[], ProbeResult]:
        if isinstance(check, HttpGet):
            return lambda: self.runner.http_get(ip, check, self.timeout)
        return lambda: self.runner.tcp_socket(ip, check, self.timeout)

    def _done(self, job_flow: Obj) -> Callable[[], None]:
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        return lambda: self.outlet.react(ns, name, 0.0)


def unmatched_tasks(probe: Probe, target_tasks: Mapping[str, set[str] | None]) -> list[str]:
    """The tasks `probe` names that no target has; [] while some target's tasks are unknown.

    `target_tasks` maps each target to the task names of its Job (or, before the Job exists, of its
    JobTemplate), or None when neither can be seen yet: then nothing can be said.
    """
    if any(tasks is None for tasks in target_tasks.values()):
        return []
    known: set[str] = set().union(*(t for t in target_tasks.values() if t is not None))
    return [task for task in probe.task_names() if task not in known]
