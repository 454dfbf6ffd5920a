"""Ours, opt-in (docs/rules.md): each flow's outcome, the flows due or Skipped, and the phase they give.

Upstream has one rule: a flow runs once all its targets Completed, and any failed Job fails the
JobFlow. A JobFlow that sets `dependsOn.rule`, `continueOnFailure`, `failurePolicy` or `finally`
is planned from its flows' outcomes instead, here, as a pure function of the sync's `World`:

- a flow's outcome is Completed, Failed (its Job ended Failed or Terminated with no retry left) or
  Skipped (its rule can no longer be met, so it never gets a Job); a running, aborted or retried
  flow has none yet;
- its rule over its targets' outcomes is met (`deploy_job` creates it), waiting, or never (Skipped,
  which propagates to the flows that wait on it);
- a failure is handled by `continueOnFailure` or by a dependent whose rule runs after a failure;
  under FailFast an unhandled one halts the JobFlow (`halted`): nothing more is created, and a
  Failed Job with retries left is not retried;
- once nothing more can run (`settled`) the finally flows are due, and once they ended too the
  phase is decided.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jobflow_controller.apis import UNFINISHED_PHASES, JobPhase, Phase, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.lifecycle import Shutdown
from jobflow_controller.apis.retry import job_attempt
from jobflow_controller.apis.rules import HANDLING_RULES, FailurePolicy, Outcome, Rule, rule_of
from jobflow_controller.apis.status import JobStatus, RecordedEntries
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow import retry
from jobflow_controller.jobflow.flow_policy import FlowShape
from jobflow_controller.jobflow.world import Notice, World

#: What a rule says of its targets' outcomes so far.
MET, WAITING, NEVER = "Met", "Waiting", "Never"
_ENDED_FAILED = frozenset({JobPhase.FAILED, JobPhase.TERMINATED})


def rule_state(rule: str, outcomes: Sequence[str | None]) -> str:
    """MET, WAITING or NEVER for `rule` over the targets' outcomes (None: no outcome yet).

    Every rule is monotone: outcomes only ever get added, so a rule once met stays met and one that
    can no longer be met never will. A Skipped target is neither Completed nor Failed, and done.
    """
    total = len(outcomes)
    done = sum(1 for o in outcomes if o is not None)
    completed = sum(1 for o in outcomes if o == Outcome.COMPLETED)
    failed = sum(1 for o in outcomes if o == Outcome.FAILED)
    if rule == Rule.ANY_COMPLETED:
        return MET if completed else NEVER if done == total else WAITING
    if rule == Rule.ALL_FAILED:
        return MET if failed == total else NEVER if done > failed else WAITING
    if rule == Rule.ANY_FAILED:
        return MET if failed else NEVER if done == total else WAITING
    if rule == Rule.ALL_DONE:
        return MET if done == total else WAITING
    if rule == Rule.NONE_FAILED:
        return NEVER if failed else MET if done == total else WAITING
    return MET if completed == total else NEVER if done > completed else WAITING  # AllCompleted


@dataclass(frozen=True)
class Outcomes:
    """What the flows came to, as one sync sees them."""

    #: Flow name -> Completed, Failed or Skipped; a flow with none yet is absent.
    of: Mapping[str, str]
    #: The flows with no Job whose rule is met (a probe flow's Job still waits for its probe).
    met: frozenset[str]
    #: The Skipped flows, in spec order.
    skipped: tuple[str, ...]
    #: The Failed flows whose failure nothing handles, in spec order.
    unhandled: tuple[str, ...]
    #: FailFast and an unhandled failure: no further flow is created.
    halted: bool
    #: Nothing more can run: every flow has an outcome (or, halted, no flow's Job is still going).
    settled: bool
    #: The finally flows' outcomes (Completed or Failed), by name.
    finally_of: Mapping[str, str]
    #: A finally flow's Job exists and has not ended.
    finally_going: bool = False
    #: What stopped the flows early (docs/lifecycle.md): Stop, Terminate or DeadlineExceeded.
    stop: str | None = None

    @property
    def verdict(self) -> str:
        """What the flows came to: Failed with an unhandled failure or a stop, else Succeed."""
        return Phase.FAILED if self.unhandled or self.stop else Phase.SUCCEED

    @property
    def finally_allowed(self) -> bool:
        """Terminate and a passed deadline end the JobFlow without its finally flows."""
        return self.stop in (None, Shutdown.STOP)

    def is_due(self, flow_name: str) -> bool:
        return not self.halted and flow_name in self.met


def evaluate(world: World, stop: str | None = None, shape: FlowShape | None = None) -> Outcomes:
    """The flows' outcomes; under FailFast an unhandled failure also ends the flows being retried.

    `stop` (a shutdown or a passed deadline, lifecycle.py) halts the flows whatever the policy;
    `shape` (None: upstream's one Job per flow) is the flow policy's seam for other flows.
    """
    if stop is not None:
        return _evaluate(world, halted=True, stop=stop, shape=shape)
    first = _evaluate(world, halted=False, shape=shape)
    if first.unhandled and world.spec.failure_policy != FailurePolicy.RUN_TO_COMPLETION:
        return _evaluate(world, halted=True, shape=shape)
    return first


def _evaluate(world: World, halted: bool, stop: str | None = None, shape: FlowShape | None = None) -> Outcomes:
    flows = world.spec.flows
    entries = RecordedEntries(world.job_flow)
    outcome: dict[str, str] = {}
    going: set[str] = set()
    for flow in flows:
        found, exists = _flow_outcome(world, flow, entries, halted, shape)
        if found is not None:
            outcome[flow.name] = found
        elif exists:
            going.add(flow.name)
    met: set[str] = set()
    for flow in _dependency_order(flows):
        if flow.name in outcome or flow.name in going:
            continue
        state = MET if not flow.targets else rule_state(rule_of(flow), [outcome.get(t) for t in flow.targets])
        instead = shape.outcome_when_met(flow) if state == MET and shape is not None else None
        if state == NEVER:
            outcome[flow.name] = Outcome.SKIPPED
        elif instead is not None:
            outcome[flow.name] = instead
        elif state == MET:
            met.add(flow.name)
    handled = _handled(flows)
    unhandled = tuple(f.name for f in flows if outcome.get(f.name) == Outcome.FAILED and f.name not in handled)
    settled = not going if halted else all(f.name in outcome for f in flows)
    finally_of = {}
    finally_going = False
    for flow in world.spec.finally_flows:
        found, exists = _flow_outcome(world, flow, entries, halted=True)
        if found is not None:
            finally_of[flow.name] = found
        finally_going = finally_going or (found is None and exists)
    skipped = tuple(f.name for f in flows if outcome.get(f.name) == Outcome.SKIPPED)
    return Outcomes(outcome, frozenset(met), skipped, unhandled, halted, settled, finally_of, finally_going, stop)


def _flow_outcome(
    world: World, flow: jf.Flow, entries: RecordedEntries, halted: bool, shape: FlowShape | None = None
) -> tuple[str | None, bool]:
    """The flow's outcome from its Job (or the status's record of it), and whether it is still going."""
    if shape is None:
        return _job_outcome(world, flow, world.job_name(flow.name), entries, halted)
    return shape.flow_outcome(flow, lambda job_name: _job_outcome(world, flow, job_name, entries, halted))


def _job_outcome(
    world: World, flow: jf.Flow, job_name: str, entries: RecordedEntries, halted: bool
) -> tuple[str | None, bool]:
    """One Job's outcome (or the status's record of it), and whether it is still going."""
    if job_name in world.completed:
        return Outcome.COMPLETED, True
    job = world.named_jobs.get(job_name)
    entry = entries.get(job_name)
    if job is not None and meta.is_controlled_by(job, world.job_flow):
        phase = vcjob.phase(job)
        if phase == JobPhase.COMPLETED:
            return Outcome.COMPLETED, True
        if phase in _ENDED_FAILED and (halted or not _retried(world, flow, job, entry)):
            return Outcome.FAILED, True
        return None, True
    if job_name in world.expected:
        return None, True
    if entry is not None and entry.state in _ENDED_FAILED:
        # Its Job is gone: a failure stays one, unless a retry's successor is still to come.
        if halted or not retry.awaiting_recreate(entry):
            return Outcome.FAILED, False
        return None, True
    return None, False


def _retried(world: World, flow: jf.Flow, job: Mapping[str, object], entry: JobStatus | None) -> bool:
    """Whether the flow's retry policy re-creates this failed Job (retry.py decides the same)."""
    if job_attempt(job) < retry.recreations(entry):
        return True  # already recorded as retried (or re-run); the Job is on its way out
    done = retry.retries_done(entry)
    policy = world.spec.retry.policies.get(flow.name)
    return policy is not None and jf.phase(world.job_flow) in UNFINISHED_PHASES and done < policy.max_retries


def _handled(flows: Sequence[jf.Flow]) -> set[str]:
    """The flows whose failure is handled: `continueOnFailure`, or a dependent whose rule runs after one."""
    out = {f.name for f in flows if f.continue_on_failure}
    for flow in flows:
        if rule_of(flow) in HANDLING_RULES:
            out.update(flow.targets or ())
    return out


def _dependency_order(flows: Sequence[jf.Flow]) -> list[jf.Flow]:
    """The flows with each after its targets (Kahn, spec order among the ready); a cycle's flows last.

    Admission refuses cycles and undefined targets; the controller treats such a JobFlow as
    invalid, so both only matter here as input that must not loop.
    """
    names = {f.name for f in flows}
    waiting = {f.name: {t for t in f.targets or () if t in names and t != f.name} for f in flows}
    dependents: dict[str, list[str]] = {}
    for name, targets in waiting.items():
        for target in targets:
            dependents.setdefault(target, []).append(name)
    by_name = {f.name: f for f in flows}
    ready = [f.name for f in flows if not waiting[f.name]]
    order: list[jf.Flow] = []
    seen: set[str] = set()
    while ready:
        name = ready.pop(0)
        if name in seen:
            continue
        seen.add(name)
        order.append(by_name[name])
        for dependent in dependents.get(name, ()):
            waiting[dependent].discard(name)
            if not waiting[dependent]:
                ready.append(dependent)
    return order + [f for f in flows if f.name not in seen]


def rules_phase(world: World, outcomes: Outcomes, running: bool) -> str:
    """The phase the outcomes give: final once the flows and the finally flows all ended.

    FailFast without finally fails at the first unhandled failure, as upstream; with finally, the
    JobFlow stays Running until the finally Jobs end. `running`: one of its Jobs is Running.
    """
    finals = world.spec.finally_flows
    if not outcomes.finally_allowed:
        ended = outcomes.settled and not outcomes.finally_going
        return Phase.FAILED if ended else _started(world, outcomes, running)
    if outcomes.halted and not finals and outcomes.stop is None:
        return Phase.FAILED
    if outcomes.settled and len(outcomes.finally_of) == len(finals):
        all_completed = all(o == Outcome.COMPLETED for o in outcomes.finally_of.values())
        return Phase.SUCCEED if outcomes.verdict == Phase.SUCCEED and all_completed else Phase.FAILED
    return _started(world, outcomes, running)


def _started(world: World, outcomes: Outcomes, running: bool) -> str:
    if running or outcomes.of or outcomes.finally_of or jf.phase(world.job_flow) == Phase.RUNNING:
        return Phase.RUNNING
    return Phase.PENDING


def skip_notices(world: World, outcomes: Outcomes) -> list[Notice]:
    """One `Skipped` event per flow newly Skipped (not in the status's `skippedJobs` yet)."""
    already = set(jf.skipped_jobs(world.job_flow))
    by_name = {f.name: f for f in world.spec.flows}
    out = []
    for name in outcomes.skipped:
        if world.job_name(name) in already:
            continue
        flow = by_name[name]
        seen = ", ".join(f"{t}: {outcomes.of.get(t, 'none yet')}" for t in flow.targets or ())
        out.append(Notice(c.REASON_SKIPPED, c.MESSAGE_SKIPPED, (name, rule_of(flow), seen)))
    return out
