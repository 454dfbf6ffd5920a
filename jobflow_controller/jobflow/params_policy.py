"""Ours, opt-in (docs/params.md): the flow policy of a JobFlow that sets `params`, `when` or `matrix`.

The failure-aware rules (rules_policy.py, docs/rules.md) with three answers of its own, plugged in at
the policy's named points:

- `shape` (outcomes.py's seam): a matrix flow's outcome is its Jobs' (`matrix.matrix_outcome`:
  Failed as soon as one failed after its retries, Completed once all completed); a flow whose rule
  is met but whose `when` does not hold (when.py) is Skipped, and its dependents follow their rule;
- `jobs` and `unmade`: a matrix flow's Jobs are `<jobflow>-<flow>-<i>`, created in index order, at
  most `maxParallel` unfinished at once, none after a failure (`matrix.next_indexes`); each Job
  carries the `$(VAR)` values it is expanded with, and a matrix Job its index label and values
  annotation;
- `record_outcomes`: the `Skipped` event of a flow skipped by `when` names the expression; a `cel`
  item that cannot be judged (when_cel.py) fails the flow, with one `InvalidWhen` Warning.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.params import (
    MATRIX_INDEX_LABEL,
    MATRIX_PARAMS_ANNOTATION,
    Matrix,
    ParamsSpec,
    matrix_params_json,
)
from jobflow_controller.apis.rules import Outcome
from jobflow_controller.apis.substitution import context_variables, job_variables
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.flow_policy import UPSTREAM, FlowHooks, FlowShape, JobOutcome
from jobflow_controller.jobflow.matrix import JobState, job_state, matrix_outcome, next_indexes
from jobflow_controller.jobflow.params_budget import (
    annotations_over,
    expanded_job,
    invalid_params,
    jobs_over_budget,
    when_over_budget,
)
from jobflow_controller.jobflow.rules_policy import FailureAwarePolicy
from jobflow_controller.jobflow.when import WhenFalse, judge_when
from jobflow_controller.jobflow.when_cel import WhenCelFalse, WhenInvalid, invalid_when_warnings
from jobflow_controller.jobflow.world import (
    Build,
    Deploy,
    FlowJob,
    JobCreate,
    Judge,
    Notice,
    PlannedStatus,
    SyncPlan,
    WarningEvent,
    World,
)


class ParamsPolicy(FailureAwarePolicy):
    """Conditions and fan-out on top of the failure-aware rules."""

    def __init__(self, world: World, hooks: FlowHooks = UPSTREAM) -> None:
        assert world.spec.params is not None  # choose_policy picks this policy only then
        self.params: ParamsSpec = world.spec.params
        #: Each matrix flow's Jobs' states, in index order, as the outcomes were decided.
        self._states: dict[str, list[JobState]] = {}
        #: The flows Skipped by `when`, and the expression that did not hold.
        self._when_false: dict[str, WhenFalse | WhenCelFalse] = {}
        #: The flows Failed by a `when` item's `cel` that could not be judged (when_cel.py).
        self._when_invalid: dict[str, WhenInvalid] = {}
        self._combinations: dict[str, list[tuple[tuple[str, str], ...]]] = {}
        #: Each flow's Jobs, listed once per sync (`jobs`): a matrix flow's are asked for per Job.
        self._job_names: dict[str, list[str]] = {}
        self.world = world
        #: The flows whose `when` inputs are over their budget (params_budget.py): never judged.
        self._when_over_budget = when_over_budget(world, self.params, self._when_index_variables)
        super().__init__(world, hooks)  # decides the outcomes, through `shape`

    # -- outcomes.py's seam ---------------------------------------------------------------------
    def shape(self) -> FlowShape:
        return self

    def flow_outcome(self, flow: jf.Flow, job_outcome: JobOutcome) -> tuple[str | None, bool]:
        if flow.name not in self.params.matrices:
            return job_outcome(self.world.job_name(flow.name))
        states = [job_state(*job_outcome(name)) for name in self.jobs(flow)]
        self._states[flow.name] = states
        return matrix_outcome(states), any(s != JobState.ABSENT for s in states)

    def outcome_when_met(self, flow: jf.Flow) -> str | None:
        expressions = self.params.when.get(flow.name)
        if not expressions or flow.name in self._when_over_budget:
            return None  # an input over its budget is never expanded: the flow waits, with its Warning
        verdict = judge_when(expressions, self._when_variables(flow.name))
        self._when_false.pop(flow.name, None)
        self._when_invalid.pop(flow.name, None)
        if verdict is None:
            return None
        if isinstance(verdict, WhenInvalid):  # docs/results.md: the flow counts as Failed
            self._when_invalid[flow.name] = verdict
            return Outcome.FAILED
        self._when_false[flow.name] = verdict
        return Outcome.SKIPPED

    @cached_property
    def over_budget(self) -> dict[str, str]:
        """The flows over an expansion budget (params_budget.py): no Job, an `InvalidParams` Warning.
        Built when `unmade` first yields a Job to create."""
        jobs = jobs_over_budget(self.world, self.params, self._index_variables, self._when_over_budget)
        return {**self._when_over_budget, **jobs}

    # -- what a flow is -------------------------------------------------------------------------
    def unmade(self, out: Deploy) -> Iterator[FlowJob]:
        """Upstream's unmade Jobs, a matrix flow's only up to `maxParallel`; each with its values.

        A matrix flow whose rule is not met yet gives only its first Job: the one `deploy_job` checks
        the patch of (one Warning, not one per index).
        """
        waiting: set[str] = set()
        #: Per matrix flow, each Job's index and the indexes allowed now: decided once per call, not
        #: once per Job (a 256-Job matrix made every sync quadratic).
        fan_out: dict[str, tuple[dict[str, int], set[int]]] = {}
        for made in super().unmade(out):
            name = made.flow.name
            if name in self.over_budget:
                if name not in waiting:  # one Warning for the flow, not one per matrix index
                    waiting.add(name)
                    yield made._replace(problem=self.over_budget[name])
                continue
            matrix = self.params.matrices.get(name)
            if matrix is None:
                yield made._replace(variables=self._variables(name))
                continue
            if name in waiting:
                continue
            found = fan_out.get(name)
            if found is None:
                indexes = {job: i for i, job in enumerate(self.jobs(made.flow))}
                found = fan_out[name] = (indexes, self._allowed(name, matrix))
            index = found[0][made.job_name]
            if index in found[1]:
                if not self._started(name) and name not in self.found.met:
                    waiting.add(name)
                yield self._matrix_job(made, matrix, index)

    def is_due(self, flow: jf.Flow, out: Deploy, judge: Judge) -> bool:
        """A matrix flow that has started stays due (its rule was met) until it ended or the flows halt."""
        if self._started(flow.name) and self.ended(flow) is None:
            return not self.found.halted
        return super().is_due(flow, out, judge)

    def refused(self, made: FlowJob) -> WarningEvent | None:
        """A flow over the JobFlow's expansion budget gets no Job: an `InvalidParams` WarningEvent."""
        return invalid_params(made, made.problem) if made.problem is not None else None

    def set_job(self, made: FlowJob, job: dict[str, Any]) -> dict[str, Any] | WarningEvent:
        """The Job expanded with `made.variables` before the rest is added; its annotations within
        Kubernetes' total (params_budget.py)."""
        if made.variables is None:
            return super().set_job(made, job)
        expanded = expanded_job(job, made)
        if isinstance(expanded, WarningEvent):
            return expanded
        finished = super().set_job(made, expanded)
        if isinstance(finished, WarningEvent):
            return finished
        return annotations_over(finished, made) or finished

    def closing(self, room: int, out: Deploy, build: Build) -> list[JobCreate | WarningEvent]:
        """The finally Jobs, expanded as the flows' (params and context)."""

        def expanded(world: World, made: FlowJob) -> JobCreate | WarningEvent:
            return build(world, made._replace(variables=self._variables(made.flow.name)))

        return super().closing(room, out, expanded)

    def record_outcomes(self, status: PlannedStatus, plan: SyncPlan) -> None:
        """The failure-aware record; a flow Skipped by `when` says which expression did not hold."""
        super().record_outcomes(status, plan)
        for i, notice in enumerate(plan.notices):
            name = notice.args[0] if notice.reason == c.REASON_SKIPPED and notice.args else None
            if name in self._when_false:
                verdict = self._when_false[name]
                plan.notices[i] = Notice(c.REASON_SKIPPED, verdict.message_fmt, verdict.message_args(name))
        plan.once_warnings.extend(invalid_when_warnings(self._when_invalid))

    def rerun_jobs(self, flow: jf.Flow) -> list[str]:
        """A matrix flow's Failed Jobs (its never-created ones are created as it runs again)."""
        states = self._states.get(flow.name)
        if states is None:
            return super().rerun_jobs(flow)
        return [name for name, state in zip(self.jobs(flow), states, strict=True) if state == JobState.FAILED]

    def jobs(self, flow: jf.Flow) -> list[str]:
        """The flow's Jobs, listed once per sync (a matrix flow's 256 names are asked for per Job)."""
        names = self._job_names.get(flow.name)
        if names is None:
            names = self._job_names[flow.name] = super().jobs(flow)
        return names

    # -- helpers ----------------------------------------------------------------------------------
    def _started(self, flow_name: str) -> bool:
        """A matrix flow one of whose Jobs was created (its rule was met then: it stays due)."""
        return any(s != JobState.ABSENT for s in self._states.get(flow_name, ()))

    def _allowed(self, flow_name: str, matrix: Matrix) -> set[int]:
        """The indexes that may be created now: the next ones in room, and those being re-created."""
        states = self._states.get(flow_name, [JobState.ABSENT] * matrix.size)
        again = {i for i, s in enumerate(states) if s == JobState.UNFINISHED}
        return again | set(next_indexes(states, matrix.parallel))

    def _combination(self, flow_name: str, matrix: Matrix, index: int) -> tuple[tuple[str, str], ...]:
        combinations = self._combinations.get(flow_name)
        if combinations is None:
            combinations = self._combinations[flow_name] = matrix.combinations()
        return combinations[index]

    def _index_variables(self, flow_name: str, index: int | None) -> dict[str, str]:
        """The variables of the flow's Job of matrix `index` (None: its one Job)."""
        matrix = self.params.matrices.get(flow_name)
        if matrix is None or index is None:
            return self._variables(flow_name)
        return self._variables(flow_name, self._combination(flow_name, matrix, index), index)

    def _when_index_variables(self, flow_name: str, _index: int | None) -> dict[str, str]:
        return self._when_variables(flow_name)

    def _matrix_job(self, made: FlowJob, matrix: Matrix, index: int) -> FlowJob:
        combination = self._combination(made.flow.name, matrix, index)
        return made._replace(
            variables=self._variables(made.flow.name, combination, index),
            labels=((MATRIX_INDEX_LABEL, str(index)),),
            annotations=(*made.annotations, (MATRIX_PARAMS_ANNOTATION, matrix_params_json(combination))),
        )

    def _variables(
        self, flow_name: str, combination: tuple[tuple[str, str], ...] = (), index: int | None = None
    ) -> dict[str, str]:
        pairs = [(p.name, p.value) for p in self.params.params]
        return job_variables(self.world.job_flow, flow_name, pairs, combination, index)

    def _when_variables(self, flow_name: str) -> dict[str, str]:
        """`when` inputs see the params and the context (no matrix value: the flow is judged once)."""
        out = {f"params.{p.name}": p.value for p in self.params.params}
        out.update(context_variables(self.world.job_flow, flow_name))
        return out
