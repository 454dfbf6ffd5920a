"""The phase table (state/), ported from upstream's running_test.go, and the other phases."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.apis import Action, Phase
from jobflow_controller.jobflow.state import new_state
from jobflow_controller.jobflow.state.pending import pending_update_status
from jobflow_controller.jobflow.state.running import running_update_status
from jobflow_controller.jobflow.world import PlannedStatus


def _run_state(phase: str, flows: int, **lists: list[str]) -> str | None:
    """Upstream's fake SyncJobFlow: apply the state's fn to the given status."""
    job_flow: dict[str, Any] = {
        "spec": {"flows": [{"name": str(i)} for i in range(flows)]},
        "status": {"state": {"phase": phase}},
    }
    seen: dict[str, str] = {}

    def fake_sync(jf: Any, fn: Any) -> None:
        status = PlannedStatus(phase=phase, **lists)
        fn(status, flows)
        seen["phase"] = status.phase

    state = new_state(job_flow, fake_sync)
    assert state is not None
    state.execute(Action.SYNC_JOB_FLOW)
    return seen.get("phase")


@pytest.mark.parametrize(
    ("lists", "flows", "expected"),
    [
        ({"completed_jobs": ["job-a"]}, 1, "Succeed"),
        ({"failed_jobs": ["job-a"]}, 1, "Failed"),
        ({"terminated_jobs": ["job-a"]}, 1, "Failed"),
        ({"completed_jobs": ["job-a"]}, 2, "Running"),
    ],
)
def test_running_state_execute(lists: dict[str, list[str]], flows: int, expected: str) -> None:
    assert _run_state("Running", flows, **lists) == expected


@pytest.mark.parametrize(
    ("lists", "flows", "expected"),
    [
        ({"running_jobs": ["a"]}, 2, "Running"),
        ({"completed_jobs": ["a"]}, 2, "Running"),
        ({"running_jobs": ["a"], "terminated_jobs": ["b"]}, 3, "Running"),
        ({"running_jobs": ["a"], "failed_jobs": ["b"]}, 3, "Failed"),
        ({"terminated_jobs": ["a"]}, 2, "Failed"),
        ({"pending_jobs": ["a"]}, 2, "Pending"),
        ({}, 0, "Pending"),
        ({"completed_jobs": ["a", "b"]}, 2, "Succeed"),
    ],
)
def test_pending_state_execute(lists: dict[str, list[str]], flows: int, expected: str) -> None:
    assert _run_state("Pending", flows, **lists) == expected


def test_the_empty_phase_is_pending() -> None:
    assert _run_state("", 1, running_jobs=["a"]) == "Running"


def test_succeed_state_syncs_but_keeps_its_phase() -> None:
    assert _run_state("Succeed", 2, failed_jobs=["a"]) == "Succeed"


@pytest.mark.parametrize("phase", ["Failed", "Terminating"])
def test_terminal_states_do_not_sync(phase: str) -> None:
    assert _run_state(phase, 1, completed_jobs=["a"]) is None


def test_actions_other_than_sync_do_nothing() -> None:
    called = []
    state = new_state({"status": {}}, lambda *a: called.append(a))
    assert state is not None
    state.execute(Action.SYNC_JOB_TEMPLATE)
    assert called == []


def test_an_unknown_phase_has_no_state() -> None:
    assert new_state({"status": {"state": {"phase": "Bogus"}}}, lambda *a: None) is None


def test_running_rule_keeps_running_without_failures() -> None:
    status = PlannedStatus(phase=Phase.RUNNING, running_jobs=["a"])
    running_update_status(status, 2)
    assert status.phase == "Running"


def test_pending_rule_of_an_empty_flow_list_stays_pending_as_upstream() -> None:
    status = PlannedStatus()
    pending_update_status(status, 0)
    assert status.phase == "Pending"
