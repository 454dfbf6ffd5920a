"""The sync's input and output: what one sync sees (`World`) and what it decided (`SyncPlan`).

The decisions (action.py) are a pure function from a `World` to a `SyncPlan`; the I/O that reads
the world from the caches and carries the plan out is sync.py's. Keeping both sides as plain data
is what lets a table test or a property test drive the algorithm with no controller at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta, rules
from jobflow_controller.apis.jobflow import Extension, extensions
from jobflow_controller.apis.lifecycle import Lifecycle
from jobflow_controller.apis.params import ParamsSpec, flow_job_names
from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.apis.probe import Probe
from jobflow_controller.apis.results import Reading, ResultsSpec
from jobflow_controller.apis.retry import RetryPolicies, retry_policies
from jobflow_controller.apis.rules import FailurePolicy
from jobflow_controller.apis.status import JobFlowStatus, recorded_completed, replaced_since_deleted
from jobflow_controller.jobflow import constants as c

Obj = Mapping[str, Any]
#: The readings of a sync that read none: one shared empty mapping (no new memory per sync).
NO_READINGS: Mapping[str, Reading] = MappingProxyType({})


#: Applies a phase's transition rule to a freshly computed status; `all_job_list` is len(spec.flows).
UpdateJobFlowStatusFn = Callable[["PlannedStatus", int], None]
#: The controller's sync (a state's callback): given the JobFlow and the phase's status function.
JobFlowActionFn = Callable[[Mapping[str, Any], UpdateJobFlowStatusFn], None]


@dataclass(frozen=True)
class JobFlowSpec:
    """The JobFlow's spec, parsed once per sync; every step reads it from here."""

    flows: tuple[jf.Flow, ...]
    retain_policy: str
    retry: RetryPolicies
    #: The Job spec fields a patch may set (--jobflow-patch-allowed-fields); None: every field.
    patch_fields: PatchFields | None = None
    #: Ours (docs/rules.md): whether any failure-aware field is set; without one, upstream's rule.
    failure_aware: bool = False
    failure_policy: str = FailurePolicy.FAIL_FAST
    #: `spec.finally`: run once nothing else can.
    finally_flows: tuple[jf.Flow, ...] = ()
    #: Ours (docs/lifecycle.md): suspend, shutdown, deadlines, TTL.
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    #: Ours (docs/params.md): `params`, `when`, `matrix`; None when the JobFlow sets none of them.
    params: ParamsSpec | None = None
    #: Ours (docs/results.md): the flows' declared `results`; None when no flow declares any.
    results: ResultsSpec | None = None
    #: The extensions the JobFlow uses (`extensions`): only their fields are parsed, only their seams run.
    uses: frozenset[Extension] = frozenset()

    @classmethod
    def of(
        cls, job_flow: Obj, patch_fields: PatchFields | None = None, uses: frozenset[Extension] | None = None
    ) -> JobFlowSpec:
        """The spec parsed; an extension's fields only when the JobFlow uses it (`uses`, else `extensions`)."""
        uses = extensions(job_flow) if uses is None else uses
        flows = tuple(jf.flows(job_flow))
        if not uses:
            return cls(flows, jf.job_retain_policy(job_flow), RetryPolicies(), patch_fields)
        lifecycle = Lifecycle.of(job_flow) if Extension.LIFECYCLE in uses else Lifecycle()
        params = ParamsSpec.of(job_flow, flows) if Extension.PARAMS in uses else None
        results = None
        if Extension.RESULTS in uses:
            results = ResultsSpec.of([(f.name, f.results) for f in flows], jf.spec(job_flow).get("results"))
        if results is not None and params is None:
            params = ParamsSpec()  # results are planned by the params policy's rules (results_policy.py)
        ruled = Extension.RULES in uses
        return cls(
            flows,
            jf.job_retain_policy(job_flow),
            retry_policies(job_flow) if Extension.RETRY in uses else RetryPolicies(),
            patch_fields,
            failure_aware=(ruled and rules.failure_aware(job_flow, flows)) or lifecycle.halts or params is not None,
            failure_policy=rules.failure_policy(job_flow) if ruled else FailurePolicy.FAIL_FAST,
            finally_flows=tuple(rules.finally_flows(job_flow)) if ruled else (),
            lifecycle=lifecycle,
            params=params,
            results=results,
            uses=uses,
        )

    def template_names(self) -> set[str]:
        """The JobTemplates the JobFlow names: its flows' and its finally flows'."""
        return {f.name for f in self.flows} | {f.name for f in self.finally_flows}

    def job_names(self, job_flow_name: str, flow_name: str) -> list[str]:
        """A flow's Jobs (apis/params.py `flow_job_names`, the one answer, matrix included): upstream's one
        `<jobflow>-<flow>` for a JobFlow without params."""
        if self.params is None:
            return [jf.job_name(job_flow_name, flow_name)]
        return flow_job_names(self.params, job_flow_name, flow_name)


@dataclass(frozen=True)
class ProbeVerdict:
    """A probe flow's dependency as the probe extension judged it before the sync (probes/judge.py).

    `probe` is None when the probe cannot be judged (its Warning is already recorded); `met` names
    the targets whose not-yet-Completed Job passed the probe entries that apply to it.
    """

    probe: Probe | None
    met: frozenset[str] = frozenset()


@dataclass(frozen=True)
class World:
    """Everything one sync of one JobFlow reads, taken from the caches and the clock at its start."""

    #: The JobFlow the sync starts from (with our own status not written yet, if any).
    job_flow: Obj
    spec: JobFlowSpec
    #: The Jobs this JobFlow controls (by uid), in creation order.
    jobs: tuple[Obj, ...]
    #: The Job that holds each flow's Job name in the namespace, whoever controls it.
    named_jobs: Mapping[str, Obj]
    #: The JobTemplates of the namespace that the flows name, by name.
    templates: Mapping[str, Obj]
    #: The last state of this JobFlow's Jobs seen deleted while Completed (observe.py `DeletedJobs`).
    deleted_completed: Mapping[str, Obj]
    #: The Job names created by this process that the informer has not shown yet (expectations.py).
    expected: frozenset[str]
    #: The probe flows' verdicts, by flow name (only flows with a probe that the sync may judge).
    probes: Mapping[str, ProbeVerdict]
    now: datetime
    #: Ours (docs/results.md): what the ended Jobs' pods reported, read in this sync (results_reader.py),
    #: by Job name; empty for a JobFlow that declares no results.
    readings: Mapping[str, Reading] = field(default_factory=lambda: NO_READINGS)
    #: More ended Jobs were due to be read than one sync reads (`MAX_READS_PER_SYNC`): sync again at once.
    readings_left: bool = False

    @property
    def namespace(self) -> str:
        return meta.namespace(self.job_flow)

    @property
    def name(self) -> str:
        return meta.name(self.job_flow)

    def job_name(self, flow_name: str) -> str:
        """`<jobflow>-<flow>`: a flow's one Job under upstream's rule, and the name a flow is listed
        under as a whole (`skippedJobs`, a Warning); its Jobs are `flow_job_names`."""
        return jf.job_name(self.name, flow_name)

    def flow_job_names(self, flow_name: str) -> list[str]:
        """The flow's Jobs (one; a matrix flow's, one per index): every step asks this (or the policy's
        `jobs`, which is this)."""
        return self.spec.job_names(self.name, flow_name)

    @cached_property
    def recorded_completed(self) -> frozenset[str]:
        """The Jobs this JobFlow's status records as Completed (apis/status.py `recorded_completed`)."""
        return frozenset(recorded_completed(self.job_flow))

    @cached_property
    def completed(self) -> frozenset[str]:
        """The Jobs of this JobFlow object that ran to completion: recorded so, or seen deleted so."""
        gone = set(self.deleted_completed) - replaced_since_deleted(self.job_flow, self.deleted_completed)
        return self.recorded_completed | frozenset(gone)


@dataclass(frozen=True)
class WarningEvent:
    """A Warning event the sync records on the JobFlow: `eventf(reason, message_fmt, *args)`."""

    reason: str
    message_fmt: str
    args: tuple[Any, ...] = ()


def resource_exists(job_name: str) -> WarningEvent:
    """`ErrResourceExists`: a Job of the name exists that this JobFlow does not control."""
    return WarningEvent(c.REASON_RESOURCE_EXISTS, c.MESSAGE_RESOURCE_EXISTS, (job_name,))


@dataclass
class PlannedStatus(JobFlowStatus):
    """The status a sync computes, and what the planner derives beside it (never written).

    The lists of `JobFlowStatus` name the Jobs that exist, as upstream's; the phase rules also count
    the Jobs below, which the written status does not list.
    """

    #: Jobs of the spec's flows that the status records as Completed but that no longer exist
    #: (deleted by hand or by `ttlSecondsAfterFinished`): the phase rules count them as Completed.
    deleted_completed_jobs: list[str] = field(default_factory=list)
    #: Failed or Terminated Jobs that a retry policy (or a re-run) creates again (docs/retry.md): the
    #: lists still name them, while the phase rules do not count them as failures.
    retrying_jobs: list[str] = field(default_factory=list)

    def failures(self) -> list[str]:
        """What the phase rules count as failed: Failed and Terminated Jobs not being retried."""
        retrying = set(self.retrying_jobs)
        return [n for n in self.failed_jobs + self.terminated_jobs if n not in retrying]

    def all_completed_jobs(self) -> list[str]:
        """What the phase rules count as Completed: `completedJobs` and the Completed Jobs since deleted."""
        completed = set(self.completed_jobs)
        return self.completed_jobs + [n for n in self.deleted_completed_jobs if n not in completed]


@dataclass(frozen=True)
class Notice:
    """An event the sync records on the JobFlow once its status is written (Normal unless `warning`)."""

    reason: str
    message_fmt: str
    args: tuple[Any, ...] = ()
    warning: bool = False


@dataclass(frozen=True)
class Termination:
    """A Job to terminate with a `TerminateJob` Command (docs/lifecycle.md), and the Warning to say why."""

    job: Obj
    warning: WarningEvent | None = None


@dataclass(frozen=True)
class JobCreate:
    """A Job to create, in spec order; `body` is None when its JobTemplate is missing (`error`)."""

    flow: str
    job_name: str
    body: dict[str, Any] | None
    #: Raised instead of creating: the JobTemplate is not there (upstream's lister error).
    error: Exception | None = None
    #: Read the JobFlow from the API server first (a flow with a retry policy): a cache behind our
    #: last status write would create the Job under a wrong attempt.
    fresh_read: bool = False


class FlowJob(NamedTuple):
    """One Job of a flow that may be created now (the flow policy's `unmade`, flow_policy.py)."""

    flow: jf.Flow
    job_name: str
    #: The times the Job was created again (a retry, a re-run): its attempt annotation.
    attempt: int = 0
    #: Read the JobFlow from the API server before creating it (a flow with a retry policy).
    fresh_read: bool = False
    #: Annotations the Job gets besides the template's (a finally Job's outcome, a matrix Job's values).
    annotations: tuple[tuple[str, str], ...] = ()
    #: Labels the Job gets besides the createdBy keys (a matrix Job's index, docs/params.md).
    labels: tuple[tuple[str, str], ...] = ()
    #: The `$(VAR)` values its spec, labels and annotations are expanded with (docs/params.md), before
    #: `annotations` and `labels` are added; None: nothing is expanded (upstream's Job).
    variables: Mapping[str, str] | None = None
    #: Why the Job must not be built (params_budget.py: the JobFlow's expansion budget), or None.
    problem: str | None = None


class Judge(Protocol):
    """Upstream's dependency rule, action.py's `judge(world, flow, done, missing, passed)`."""

    def __call__(
        self,
        world: World,
        flow: jf.Flow,
        done: AbstractSet[str],
        missing: list[str],
        passed: AbstractSet[str] = ...,
    ) -> bool: ...


#: action.py's `load_job_template_and_set_job`, handed to the policy to build a Job.
Build = Callable[[World, FlowJob], JobCreate | WarningEvent]


@dataclass(frozen=True)
class Retry:
    """A retry decided in this sync: recorded in the status, then the Job is deleted."""

    job: Obj
    attempt: int
    max_retries: int
    backoff: float


@dataclass
class Deploy:
    """What `deploy_job` decided, in spec order."""

    #: Jobs to create and Warnings to record, interleaved in spec order.
    steps: list[JobCreate | WarningEvent] = field(default_factory=list)
    #: Seconds until a retried flow's backoff is over (the JobFlow is synced again then).
    requeue_after: float | None = None
    #: Target Job names that are missing (upstream logs each, every sync).
    missing_targets: list[str] = field(default_factory=list)
    #: More Jobs are due than one sync creates (`MAX_CREATES_PER_SYNC`): sync again at once.
    more: bool = False

    def requeue_in(self, seconds: float) -> None:
        self.requeue_after = seconds if self.requeue_after is None else min(self.requeue_after, seconds)


@dataclass
class SyncPlan:
    """What one sync does, in upstream's order: delete (retain policy), create, write the status."""

    #: `jobRetainPolicy: delete` of a Succeeded JobFlow: these Jobs go, and nothing else happens.
    retain_deletes: list[Obj] | None = None
    deploy: Deploy = field(default_factory=Deploy)
    #: Problems of the retry policies in force (one Warning).
    retry_warning: WarningEvent | None = None
    status: PlannedStatus | None = None
    retries: list[Retry] = field(default_factory=list)
    #: Jobs the status records as retried that are still there: deleted after the status is written.
    retry_deletes: list[Obj] = field(default_factory=list)
    #: The status was too large to store: the JobFlow is failed with a reduced one (status_writer.py `fit_status`).
    size_warning: WarningEvent | None = None
    #: Normal events to record after the status write (a flow newly Skipped, docs/rules.md).
    notices: list[Notice] = field(default_factory=list)
    #: Warnings given once per (cause, JobFlow generation) whatever the number of syncs (a `when`
    #: item's `cel` that cannot be judged, docs/results.md): (cause, Warning).
    once_warnings: list[tuple[str, WarningEvent]] = field(default_factory=list)
    #: Jobs to terminate, after the creates (a shutdown or a deadline, docs/lifecycle.md).
    terminations: list[Termination] = field(default_factory=list)
    #: Write the status at once (not paced): Jobs are deleted after it (a re-run, docs/lifecycle.md).
    write_at_once: bool = False
    #: `status` as the JSON written, once `fit_status` (status_writer.py) has measured it (so it is built once).
    body: dict[str, Any] | None = None

    @property
    def writes_at_once(self) -> bool:
        """Whether the status skips the pacing: one recording a retry (the Job is deleted only after it)."""
        return bool(self.retries) or self.write_at_once

    def status_body(self) -> dict[str, Any]:
        if self.body is None:
            assert self.status is not None
            self.body = self.status.to_dict()
        return self.body
