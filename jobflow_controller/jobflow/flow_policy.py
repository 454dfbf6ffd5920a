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
imports no extension). A new kind of flow subclasses `FlowPolicy` (overriding the questions it
answers differently and calling `super()` for the rest) and `choose_policy` picks it from the spec
(policies.py; a JobFlow template resolved before planning belongs before `observe`, not here). An
extension that refines one answer for every kind of flow is a hook in `FlowHooks`, composed once in
policies.py (`HOOKS`) and handed to every policy; each hook is a small protocol at a named point:
- `attempts` (`AttemptsHook`, retry.py `HOOK`: retries and re-runs): a Job's `attempt`, the `wait`
  before the next one (its backoff), `fresh_read`, and `superseded` (a Job its next attempt replaces);
- `lifecycle` (`LifecycleHook`, lifecycle.py `HOOK`): `may_create` (a suspended JobFlow creates
  nothing) and `carry_stamps` (the stamps the stored status keeps, in `new_status`);
- probes (probes/judge.py's verdicts, in the world): `_targets_met` hands upstream's `judge` the
  targets that passed the probe (`passed`);
- other kinds of flows (params_policy.py): `shape` (outcomes.py's `FlowShape`: a flow's outcome from
  its Jobs', a flow Skipped though its rule is met) and `rerun_jobs` (the Jobs a re-run creates again).
`FlowPolicy(world)` without hooks is upstream's rule alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from jobflow_controller.apis import FINISHED_PHASES, meta
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.rules import Outcome
from jobflow_controller.apis.status import JobStatus
from jobflow_controller.jobflow.job_status_index import RecordedEntries
from jobflow_controller.jobflow.plan import (
    Build,
    Deploy,
    FlowJob,
    JobCreate,
    Judge,
    PlannedStatus,
    SyncPlan,
    WarningEvent,
    World,
    resource_exists,
)
from jobflow_controller.jobflow.state.base import UpdateJobFlowStatusFn

if TYPE_CHECKING:
    from jobflow_controller.jobflow.outcomes import FlowShape


class LifecycleHook(Protocol):
    """The lifecycle's named points (lifecycle.py `HOOK`, docs/lifecycle.md)."""

    def may_create(self, world: World) -> bool:
        """False while nothing may be created (a suspended JobFlow)."""
        ...

    def carry_stamps(self, world: World, status: PlannedStatus) -> None:
        """The stamps of the stored status that a sync's fresh status keeps."""
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


@dataclass(frozen=True)
class FlowHooks:
    """The extensions plugged into a policy, each at its named point; None: upstream's answer there."""

    lifecycle: LifecycleHook | None = None
    attempts: AttemptsHook | None = None


#: Upstream's rule alone: no extension at any point.
UPSTREAM = FlowHooks()


class FlowPolicy:
    """Upstream's rule: one Job per flow, due once its targets Completed; the state decides the phase."""

    def __init__(self, world: World, hooks: FlowHooks = UPSTREAM) -> None:
        self.world = world
        self.hooks = hooks
        self._recorded = RecordedEntries(world.job_flow)

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
                if attempts is None:
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

    def set_job(self, made: FlowJob, job: dict[str, Any]) -> dict[str, Any] | WarningEvent:
        """The Job `load_job_template_and_set_job` built from the template, finished: its attempt (the
        attempts hook) and the annotations and labels `made` carries (none under upstream's rule)."""
        if self.hooks.attempts is not None:
            self.hooks.attempts.mark(job, made.attempt)
        job["metadata"]["annotations"].update(made.annotations)
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
