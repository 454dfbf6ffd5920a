"""Ours, opt-in (docs/results.md): the flow policy of a JobFlow some of whose flows declare `results`.

The params policy (params_policy.py) with two answers of its own, at its named points:

- `shape`'s `flow_outcome`: a Completed Job of a declaring flow has an outcome only once its results
  are read (so no dependent is planned before them), and counts as Failed when a declared name is
  missing or was refused (so dependency rules, `failurePolicy` and `finally` apply as to a failed
  flow); a Failed Job stays Failed whatever it reported;
- `_variables`, `_when_variables` (the params policy's): `$(flows.F.results.N)` of each flow F the
  flow depends on, `$(flows.F.results.N[*])` of a matrix F, in its Job and its `when` inputs (so counted
  in the expansion budget, params_budget.py);
- `record_outcomes`: each read Job's results go on its `jobStatusList` entry (kept from then on:
  apis/status.py), a Job running again drops its earlier attempt's, and each Completed Job read
  with a problem gets one `InvalidResult` Warning.

The reading itself (one GET of a pod) is the observe step's (results_reader.py); this is pure.
"""

from __future__ import annotations

import json

from jobflow_controller.apis import JobPhase, Phase, meta
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.results import ResultsSpec, recorded_own_results
from jobflow_controller.apis.rules import Outcome
from jobflow_controller.apis.status import RecordedEntries
from jobflow_controller.apis.tenant_text import excerpt_text
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow import own_results, retry
from jobflow_controller.jobflow.flow_policy import UPSTREAM, FlowHooks, JobOutcome
from jobflow_controller.jobflow.params_policy import ParamsPolicy
from jobflow_controller.jobflow.world import Notice, PlannedStatus, SyncPlan, UpdateJobFlowStatusFn, World

#: How much of the problems of one Job a Warning quotes.
MAX_QUOTED_PROBLEMS = 512


class ResultsPolicy(ParamsPolicy):
    """The params policy, a declaring flow's Completed Job judged by its results too."""

    def __init__(self, world: World, hooks: FlowHooks = UPSTREAM) -> None:
        assert world.spec.results is not None  # choose_policy picks this policy only then
        self.declared: ResultsSpec = world.spec.results
        self._entries = RecordedEntries(world.job_flow)
        #: Each flow's `$(flows.F.results.N)` variables, once per sync (a matrix flow asks per index).
        self._result_variables: dict[str, dict[str, str]] = {}
        self._plan: SyncPlan | None = None
        super().__init__(world, hooks)

    # -- outcomes.py's seam ---------------------------------------------------------------------
    def flow_outcome(self, flow: jf.Flow, job_outcome: JobOutcome) -> tuple[str | None, bool]:
        declared = self.declared.flows.get(flow.name)
        if declared is None:
            return super().flow_outcome(flow, job_outcome)

        def judged(job_name: str) -> tuple[str | None, bool]:
            outcome, going = job_outcome(job_name)
            if outcome != Outcome.COMPLETED:
                return outcome, going
            results = self.results_of(job_name)
            if results is None:
                return None, True  # ended, its results not read yet: nothing depends on it yet
            if any(n not in results for n in declared.names):
                return Outcome.FAILED, going
            return outcome, going

        return super().flow_outcome(flow, judged)

    def results_of(self, job_name: str) -> dict[str, str] | None:
        """The Job's results: read in this sync, else as recorded for its attempt (None: not read)."""
        reading = self.world.readings.get(job_name)
        if reading is not None:
            return dict(reading.values)
        entry = self._entries.get(job_name)
        if entry is None or retry.awaiting_recreate(entry):
            return None
        return entry.results

    # -- the variables (params_policy.py's; counted in its expansion budget) ------------------------
    def _variables(
        self, flow_name: str, combination: tuple[tuple[str, str], ...] = (), index: int | None = None
    ) -> dict[str, str]:
        return {**super()._variables(flow_name, combination, index), **self.result_variables(flow_name)}

    def _when_variables(self, flow_name: str) -> dict[str, str]:
        return {**super()._when_variables(flow_name), **self.result_variables(flow_name)}

    def result_variables(self, flow_name: str) -> dict[str, str]:
        """`flows.F.results.N` of each flow F the flow depends on (any flow, for a finally flow), and
        `flows.F.results.N[*]` (a JSON array in index order) of a matrix F: only the values read (a
        reference to one not there, as after a target that failed, is left as written)."""
        found = self._result_variables.get(flow_name)
        if found is None:
            found = self._result_variables[flow_name] = self._read_variables(flow_name)
        return found

    def _read_variables(self, flow_name: str, upstream: set[str] | None = None) -> dict[str, str]:
        out: dict[str, str] = {}
        upstream = self._upstream(flow_name) if upstream is None else upstream
        for source, declared in self.declared.flows.items():
            if source not in upstream:
                continue
            read = [self.results_of(j) or {} for j in self.jobs_of(source)]
            for name in declared.names:
                values = [r.get(name) for r in read]
                if source in self.params.matrices:
                    if all(v is not None for v in values):
                        out[f"flows.{source}.results.{name}[*]"] = json.dumps(values)
                elif values and values[0] is not None:
                    out[f"flows.{source}.results.{name}"] = str(values[0])
        return out

    def jobs_of(self, flow_name: str) -> list[str]:
        return self.world.flow_job_names(flow_name)

    def _upstream(self, flow_name: str) -> set[str]:
        """The flows `flow_name` depends on, directly or not; every flow for a finally flow."""
        by_name = {f.name: f for f in self.world.spec.flows}
        if flow_name not in by_name:
            return set(by_name)
        seen: set[str] = set()
        stack = list(by_name[flow_name].targets or ())
        while stack:
            name = stack.pop()
            if name not in seen and name in by_name:
                seen.add(name)
                stack.extend(by_name[name].targets or ())
        return seen

    # -- the status and the events ----------------------------------------------------------------
    def decide_phase(self, status: PlannedStatus, update_state_fn: UpdateJobFlowStatusFn, total: int) -> None:
        """The phase, then `status.results` once it is Succeed: resolved on the sync that finds it so
        (a Warning for each entry left out), kept as recorded by every later one."""
        super().decide_phase(status, update_state_fn, total)
        if not self.declared.own or status.phase != Phase.SUCCEED:
            return
        recorded = jf.status(self.world.job_flow)
        if jf.phase(self.world.job_flow) == Phase.SUCCEED and "results" in recorded:
            status.results = recorded_own_results(recorded.get("results"))
            return
        variables = {**super()._when_variables(""), **self._read_variables("", set(self.declared.flows))}
        status.results, problems = own_results.resolve(self.declared.own, variables)
        if problems and self._plan is not None:
            args = (excerpt_text("; ".join(problems), MAX_QUOTED_PROBLEMS),)
            self._plan.notices.append(Notice(c.REASON_INVALID_RESULT, c.MESSAGE_INVALID_OWN_RESULT, args, True))

    def record_outcomes(self, status: PlannedStatus, plan: SyncPlan) -> None:
        self._plan = plan  # decide_phase, which comes next, adds its Warning to it
        super().record_outcomes(status, plan)
        world = self.world
        if world.readings_left:
            plan.deploy.more = True  # the Jobs not read yet: in the next sync, queued at once
        for flow_name in self.declared.flows:
            job_names = set(world.flow_job_names(flow_name))
            for entry in status.job_status_list:
                if entry.name not in job_names:
                    continue
                reading = world.readings.get(entry.name)
                if reading is not None:
                    entry.results = dict(reading.values)
                    if reading.problems and self._warns(entry.name):
                        problems = excerpt_text("; ".join(reading.problems), MAX_QUOTED_PROBLEMS)
                        args = (flow_name, entry.name, problems)
                        plan.notices.append(Notice(c.REASON_INVALID_RESULT, c.MESSAGE_INVALID_RESULT, args, True))
                elif self._running_again(entry.name):
                    entry.results = None  # a re-created Job reports anew

    def _warns(self, job_name: str) -> bool:
        """A Completed Job's problems are a Warning; a Failed Job's missing results are not."""
        job = self.world.named_jobs.get(job_name)
        if job is None:
            return job_name in self.world.completed
        return vcjob.phase(job) == JobPhase.COMPLETED

    def _running_again(self, job_name: str) -> bool:
        """Our Job of the name exists and has not ended: whatever its entry held was an earlier attempt's."""
        job = self.world.named_jobs.get(job_name)
        if job is None or not meta.is_controlled_by(job, self.world.job_flow):
            return False
        return vcjob.phase(job) not in (JobPhase.COMPLETED, JobPhase.FAILED)
