"""A sync of a large matrix flow costs in proportion to its Jobs, not to their square (issue 47 item 3).

40 JobFlows of 256 Jobs each (bench/fanout.py) showed each sync of such a flow listing the flow's 256
Job names and deciding the allowed indexes once per unmade Job: 60 ms of CPU per sync. The planner
now lists them, and decides, once per flow and sync.
"""

from __future__ import annotations

from typing import Any

import pytest
from jobflow_fakes import job, job_flow
from test_jobflow_planner import plan_through_state, world_of

from jobflow_controller.apis import params as apis_params
from jobflow_controller.jobflow import params_policy

INDEXES, MAX_PARALLEL, DONE = 256, 64, 100


def sweep() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A 256-index matrix flow with `maxParallel: 64`: 100 Jobs Completed, 63 Running (one slot free)."""
    values = [str(i) for i in range(INDEXES)]
    flows = [{"name": "sweep", "matrix": {"params": [{"name": "i", "values": values}], "maxParallel": MAX_PARALLEL}}]
    jobs = [
        job(f"jf-sweep-{i}", flow="jf", template="sweep", phase="Completed" if i < DONE else "Running")
        for i in range(DONE + MAX_PARALLEL - 1)
    ]
    return job_flow("jf", flows=flows, phase="Running"), jobs


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    calls = [0]
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_sync_of_a_256_job_matrix_lists_its_jobs_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = counting(monkeypatch, apis_params, "matrix_job_names")
    flow_obj, jobs = sweep()
    plan = plan_through_state(world_of(flow_obj, jobs))
    assert plan is not None
    assert [step.job_name for step in plan.deploy.steps] == [f"jf-sweep-{DONE + MAX_PARALLEL - 1}"]
    assert listed[0] <= 4


def test_a_sync_of_a_256_job_matrix_decides_the_allowed_indexes_once_per_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    decided = counting(monkeypatch, params_policy, "next_indexes")
    flow_obj, jobs = sweep()
    plan = plan_through_state(world_of(flow_obj, jobs))
    assert plan is not None
    assert len(plan.deploy.steps) == 1
    assert decided[0] <= 2
