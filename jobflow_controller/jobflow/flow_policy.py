"""The flow policy: what a flow *is* for one sync, chosen once per sync and asked by upstream's functions.

Upstream has one answer to each question a sync asks about a flow: its Job is `<jobflow>-<flow>`,
it is due once every target's Job is Completed, it has ended when its Job has, and the JobFlow's
phase is the state's `updateStateFn`. `FlowPolicy` is that answer. `choose_policy(world)`
(policies.py) picks it, or `FailureAwarePolicy` (rules_policy.py, docs/rules.md) for a JobFlow that
sets a failure-aware field, or `ParamsPolicy` (params_policy.py, docs/params.md) for one that sets
`params`, `when` or `matrix`, once per sync (sync.py `_observe`), and every step asks that one.
action.py's upstream functions (`deploy_job`, `judge`, `get_all_job_status`) ask the policy and test
no feature themselves.

The questions, each a method a policy answers:
- `jobs(flow)`: the flow's Job names, a list (upstream: one; a matrix: one per combination);
- `unmade(out)`: the flows' Jobs that may be created now, in order, each a `FlowJob` (its attempt,
  whether to read the JobFlow afresh first, extra annotations); a limit of unfinished Jobs per flow
  belongs here (stop yielding a flow's Jobs once that many are unfinished);
- `is_due(flow, out, judge)`: whether the flow's Jobs are due (`judge` is upstream's rule);
- `ended(flow)`: None while the flow may still run, else how it ended (`Outcome`: Completed,
  Failed, Skipped); a flow a condition skips answers Skipped (and is never unmade, hence never due);
- `closing(room, out, build)`: Jobs created once nothing else can run (the finally flows);
- `decide_phase(status, update_state_fn, total)`: the JobFlow's phase; `record_outcomes(status,
  plan)`: what the flows came to (`skippedJobs`, events); `halted`, `stop`: nothing more is created
  or retried, and why.

How an extension plugs in: never by a test in action.py, and never by an import here (this module
imports no extension; the hooks' protocols are declared here). A new kind of flow subclasses
`FlowPolicy` (overriding the questions it answers differently and calling `super()` for the rest)
and `choose_policy` picks it from the spec (policies.py; a JobFlow template resolved before planning
belongs before `observe`, not here). An extension that refines one answer for every kind of flow is
a hook in `FlowHooks`, composed per JobFlow in policies.py (`hooks_for`) and handed to its policy;
each hook is a small protocol at a named point:
- `attempts` (`AttemptsHook`, retry.py `HOOK`: retries and re-runs): a Job's `attempt`, the `wait`
  before the next one (its backoff), `fresh_read`, `superseded` (a Job its next attempt replaces),
  and, around the phase, `plan_retries` and `record_retries` (`before_phase`, `after_phase`);
- `lifecycle` (`LifecycleHook`, lifecycle.py `HOOK`): `may_create` (a suspended JobFlow creates
  nothing), `carry_stamps` (the stamps the stored status keeps, in `new_status`) and `apply` (stamps,
  events and terminations once the phase is known, `after_phase`);
- `patch` (`PatchHook`, patch.py `HOOK`): a waiting flow's patch checked (`waiting`), a Job's patch
  merged into its spec before anything else is set (`finish_job`);
- probes (probes/judge.py's verdicts, in the world): `_targets_met` hands upstream's `judge` the
  targets that passed the probe (`passed`);
- other kinds of flows (params_policy.py): `shape` (outcomes.py's `FlowShape`: a flow's outcome from
  its Jobs', a flow Skipped though its rule is met) and `rerun_jobs` (the Jobs a re-run creates again).
`FlowPolicy(world)` without hooks is upstream's rule alone. policies.py composes, per JobFlow, only
the hooks of the extensions it uses (`World.spec.uses`): a hook a JobFlow does not use is never called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from jobflow_controller.apis import FINISHED_PHASES, UNFINISHED_PHASES, meta
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.jobflow import Outcome
from jobflow_controller.apis.status import JobStatus, RecordedEntries
from jobflow_controller.jobflow.world import (
    Build,
    Deploy,
    FlowJob,
    JobCreate,
    Judge,
    PlannedStatus,
    SyncPlan,
    UpdateJobFlowStatusFn,
    WarningEvent,
    World,
    resource_exists,
)

#: One Job's outcome and whether it is still going, by Job name (outcomes.py, for one sync).
JobOutcome = Callable[[str], tuple[str | None, bool]]


class FlowShape(Protocol):
    """The named seam where an extension says what a flow is beyond upstream's one Job (params_policy.py).

    `flow_outcome`: the flow's outcome and whether it is going, from its Jobs' (`job_outcome`);
    `outcome_when_met`: what a flow whose rule is met gets instead of being due: Skipped (a `when`
    that does not hold), Failed (a `when` that cannot be judged, docs/results.md), None (it is due).
    """

    def flow_outcome(self, flow: jf.Flow, job_outcome: JobOutcome) -> tuple[str | None, bool]: ...

    def outcome_when_met(self, flow: jf.Flow) -> str | None: ...


class LifecycleHook(Protocol):
    """The lifecycle's named points (lifecycle.py `HOOK`, docs/lifecycle.md)."""

    def may_create(self, world: World) -> bool:
        """False while nothing may be created (a suspended JobFlow)."""
        ...

    def carry_stamps(self, world: World, status: PlannedStatus) -> None:
        """The stamps of the stored status that a sync's fresh status keeps."""
        ...

    def apply(self, world: World, status: PlannedStatus, plan: SyncPlan, stop: str | None) -> None:
        """Once the phase is known: the stamps, the events and the Jobs to terminate."""
        ...


class AttemptsHook(Protocol):
    """The named points of Jobs created again (retry.py `HOOK`: retries and re-runs, docs/retry.md)."""

    def attempt(self, entry: JobStatus | None) -> int:
        """The attempt of the Job created next under the entry's name (0: the first)."""
        ...

    def wait(self, world: World, flow: jf.Flow, entry: JobStatus | None) -> float:
        """Seconds until the flow's next attempt is due (its backoff); 0: now."""
        ...

    def fresh_read(self, world: World, flow: jf.Flow) -> bool:
        """Whether to read the JobFlow from the API server before creating the flow's Job."""
        ...

    def superseded(self, job: meta.Obj, entry: JobStatus | None) -> bool:
        """A Job its next attempt replaces (retried or re-run, not gone yet): its entry is the record."""
        ...

    def mark(self, job: dict[str, Any], attempt: int) -> None:
        """Record on a Job being built which attempt it is."""
        ...

    def plan_retries(self, world: World, status: PlannedStatus, plan: SyncPlan) -> None:
        """Before the phase: the failed Jobs to retry (`plan.retries`), not counted as failures."""
        ...

    def record_retries(self, world: World, status: PlannedStatus, plan: SyncPlan, ended: bool) -> None:
        """After the phase: none once the flows `ended`; else each recorded in the status, then deleted."""
        ...


class PatchHook(Protocol):
    """A flow's patch (patch.py `HOOK`, docs/patch.md)."""

    def check(self, world: World, flow: jf.Flow) -> WarningEvent | None:
        """Why the patch of a flow still waiting can never apply, if it cannot."""
        ...

    def apply(self, world: World, made: FlowJob, job: dict[str, Any]) -> dict[str, Any] | WarningEvent:
        """`job` with the flow's patch merged into its spec, or why it cannot apply."""
        ...


@dataclass(frozen=True)
class FlowHooks:
    """The extensions plugged into a policy, each at its named point; None: upstream's answer there."""

    lifecycle: LifecycleHook | None = None
    attempts: AttemptsHook | None = None
    patch: PatchHook | None = None


#: Upstream's rule alone: no extension at any point.
UPSTREAM = FlowHooks()


class FlowPolicy:
    """Upstream's rule: one Job per flow, due once its targets Completed; the state decides the phase."""

    def __init__(self, world: World, hooks: FlowHooks = UPSTREAM) -> None:
        self.world = world
        self.hooks = hooks
        #: The stored `jobStatusList` by name: only the attempts hook reads it (a Job's attempt, its backoff).
        self._recorded = RecordedEntries(world.job_flow) if hooks.attempts is not None else None

    def judged(self, world: World) -> None:
        """The sync's world once the probe verdicts are in (observe.check_probes asked this policy which
        flows to judge, so it was chosen before them); nothing else of the world changes."""
        self.world = world

    # -- what a flow is ---------------------------------------------------------------------------
    def jobs(self, flow: jf.Flow) -> list[str]:
        """The flow's Jobs (World.flow_job_names: one under upstream's rule, a matrix flow's many)."""
        return self.world.flow_job_names(flow.name)

    def ended(self, flow: jf.Flow) -> str | None:
        """Completed once each of its Jobs ran to completion (a failed Job is created again, as upstream)."""
        done = self.world.completed
        return Outcome.COMPLETED if all(n in done for n in self.jobs(flow)) else None

    def flow_outcomes(self) -> Mapping[str, str]:
        """What each flow came to, by name, as this sync's policy judged it (a flow with none is absent):
        under upstream's rule only Completed; the failure-aware rules' own evaluation otherwise."""
        return {f.name: o for f in self.world.spec.flows if (o := self.ended(f)) is not None}

    def may_create(self) -> bool:
        """Not a finished JobFlow (Succeed, Failed), one being deleted, nor (lifecycle) a suspended one."""
        world = self.world
        if jf.phase(world.job_flow) in FINISHED_PHASES or meta.metadata(world.job_flow).get("deletionTimestamp"):
            return False
        return self.hooks.lifecycle is None or self.hooks.lifecycle.may_create(world)

    def unmade(self, out: Deploy) -> Iterator[FlowJob]:
        """The flows' Jobs that may be created now, in spec order.

        Not a flow that ended, nor a Job that ran to completion, exists (someone else's is an
        `ErrResourceExists` WarningEvent in `out`), was created moments ago (the informer has not shown
        it yet), or whose next attempt is not due yet (`out.requeue_after`).
        """
        world = self.world
        done = world.completed
        for flow in world.spec.flows:
            if self.ended(flow) is not None:
                continue
            for job_name in self.jobs(flow):
                if job_name in done or self._held(job_name, out) or job_name in world.expected:
                    continue
                attempts = self.hooks.attempts
                if attempts is None or self._recorded is None:
                    yield FlowJob(flow, job_name)
                    continue
                entry = self._recorded.get(job_name)
                wait = attempts.wait(world, flow, entry)
                if wait > 0:
                    out.requeue_in(wait)
                    continue
                yield FlowJob(flow, job_name, attempts.attempt(entry), attempts.fresh_read(world, flow))

    def is_due(self, flow: jf.Flow, out: Deploy, judge: Judge) -> bool:
        """Upstream's: no targets, or `judge` says every target's Job Completed."""
        return flow.targets is None or self._targets_met(flow, out, judge)

    def waiting(self, flow: jf.Flow) -> WarningEvent | None:
        """What a flow not due yet tells now (the patch hook: a patch that can never apply); None under
        upstream's rule."""
        if flow.patch is None or self.hooks.patch is None:
            return None
        return self.hooks.patch.check(self.world, flow)

    def closing(self, room: int, out: Deploy, build: Build) -> list[JobCreate | WarningEvent]:
        """Jobs created once nothing else can run: none under upstream's rule."""
        return []

    def decide_phase(self, status: PlannedStatus, update_state_fn: UpdateJobFlowStatusFn, total: int) -> None:
        """Upstream's: the state's `updateStateFn`."""
        update_state_fn(status, total)

    def record_outcomes(self, status: PlannedStatus, plan: SyncPlan) -> None:
        """What the flows came to, into the status and the events: nothing more under upstream's rule."""

    def shape(self) -> FlowShape | None:
        """The named point for flows other than upstream's one Job (params_policy.py); None: upstream's."""
        return None

    def rerun_jobs(self, flow: jf.Flow) -> list[str]:
        """The flow's Jobs a re-run creates again (rerun.py): all of them (a matrix flow: its Failed ones)."""
        return self.jobs(flow)

    @property
    def stop(self) -> str | None:
        """What halted the flows early (a shutdown, a passed deadline), if anything (lifecycle.py)."""
        return None

    @property
    def halted(self) -> bool:
        """No further flow is created, nor a failed Job retried (a failure-aware JobFlow's FailFast)."""
        return False

    # -- the named points -------------------------------------------------------------------------
    def before_phase(self, status: PlannedStatus, plan: SyncPlan) -> None:
        """Between upstream's status and its phase rule: what the flows came to, the Jobs to retry."""
        self.record_outcomes(status, plan)
        if self.hooks.attempts is not None:
            self.hooks.attempts.plan_retries(self.world, status, plan)

    def after_phase(self, status: PlannedStatus, plan: SyncPlan) -> None:
        """Once the phase is known: the retries recorded (none once the flows ended), then the lifecycle's
        stamps, events and terminations."""
        if self.hooks.attempts is not None:
            ended = status.phase not in UNFINISHED_PHASES or self.halted
            self.hooks.attempts.record_retries(self.world, status, plan, ended)
        if self.hooks.lifecycle is not None:
            self.hooks.lifecycle.apply(self.world, status, plan, self.stop)

    def new_status(self) -> PlannedStatus:
        """The status a sync computes afresh: the phase, and the stamps the stored one keeps (lifecycle)."""
        status = PlannedStatus(phase=jf.phase(self.world.job_flow))
        if self.hooks.lifecycle is not None:
            self.hooks.lifecycle.carry_stamps(self.world, status)
        return status

    def superseded(self, job: meta.Obj, entry: JobStatus | None) -> bool:
        """A Job its next attempt replaces (attempts): upstream has no such Job."""
        return self.hooks.attempts is not None and self.hooks.attempts.superseded(job, entry)

    def refused(self, made: FlowJob) -> WarningEvent | None:
        """Why `made` must not be built (an extension's budget, params_budget.py); None under upstream's rule."""
        return None

    def finish_job(self, made: FlowJob, job: dict[str, Any]) -> dict[str, Any] | WarningEvent:
        """The Job upstream built from the template, finished by the extensions: the flow's patch merged
        into its spec first (the patch hook), then `set_job`."""
        if made.flow.patch is not None and self.hooks.patch is not None:
            patched = self.hooks.patch.apply(self.world, made, job)
            if isinstance(patched, WarningEvent):
                return patched
            job = patched
        return self.set_job(made, job)

    def set_job(self, made: FlowJob, job: dict[str, Any]) -> dict[str, Any] | WarningEvent:
        """The Job's attempt (the attempts hook) and the annotations and labels `made` carries (none
        under upstream's rule)."""
        if self.hooks.attempts is not None:
            self.hooks.attempts.mark(job, made.attempt)
        if made.annotations:
            job["metadata"]["annotations"].update(made.annotations)
        if made.labels:
            job["metadata"]["labels"].update(made.labels)
        return job

    def _targets_met(self, flow: jf.Flow, out: Deploy, judge: Judge) -> bool:
        """Upstream's `judge`; a flow with a probe whose verdict is in: the targets that passed the probe
        count as Completed (probes/judge.py), and a probe that cannot be judged is never met."""
        verdict = self.world.probes.get(flow.name) if flow.probe is not None else None
        if verdict is None or (verdict.probe is not None and not verdict.probe):
            return judge(self.world, flow, self.world.completed, out.missing_targets)
        if verdict.probe is None:
            return False
        return judge(self.world, flow, self.world.completed, out.missing_targets, verdict.met)

    def _held(self, job_name: str, out: Deploy) -> bool:
        """Whether a Job of the name exists; one this JobFlow does not control gets a Warning."""
        existing = self.world.named_jobs.get(job_name)
        if existing is None:
            return False
        if not meta.is_controlled_by(existing, self.world.job_flow):
            out.steps.append(resource_exists(job_name))
        return True
