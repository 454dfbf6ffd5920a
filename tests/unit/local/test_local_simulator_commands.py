"""The simulator takes a Command as Volcano's job controller does: delete it, record CommandIssued, act.

Driven step by step (no threads) over a fake clientset that records the calls.
"""

from __future__ import annotations

from typing import Any

from jobflow_controller.apis.command import job_command
from jobflow_controller.kube.errors import from_status
from jobflow_controller.local.simulator import JobSimulator

SCRIPT = "Pending:0.1s,Running:30s,Completed"


def _job(phase: str, retry_count: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "jf-a", "namespace": "ns", "uid": "job-uid", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "maxRetry": 3,
            "tasks": [
                {
                    "name": "w",
                    "replicas": 1,
                    "template": {"metadata": {"annotations": {"sim.jobflow.volcano.sh/phases": SCRIPT}}},
                }
            ],
        },
        "status": {"state": {"phase": phase}, "retryCount": retry_count},
    }


class _Fake:
    """Jobs, Commands and the recorder in one: every call is appended to `calls`."""

    def __init__(self, job: dict[str, Any] | None, command_gone: bool = False, delete_fails: bool = False) -> None:
        self.job = job
        self.command_gone = command_gone
        self.delete_fails = delete_fails
        self.calls: list[tuple[str, ...]] = []

    def jobs(self, namespace: str | None = None) -> Any:
        return self

    def commands(self, namespace: str | None = None) -> Any:
        return _Commands(self)

    def lister_watcher(self) -> Any:
        return None

    def get(self, name: str) -> dict[str, Any]:
        self.calls.append(("get", name))
        if self.job is None:
            raise from_status(404, "NotFound", f'jobs.batch.volcano.sh "{name}" not found')
        return self.job

    def patch_status(self, name: str, patch: Any, content_type: str = "") -> dict[str, Any]:
        status = patch[0]["value"]
        self.calls.append(("status", name, status["state"]["phase"], str(status["retryCount"])))
        assert self.job is not None
        self.job = {**self.job, "status": status}
        return self.job

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None:
        self.calls.append(("event", event_type, reason, message))


class _Commands:
    def __init__(self, fake: _Fake) -> None:
        self.fake = fake

    def delete(self, name: str, **_: Any) -> None:
        self.fake.calls.append(("delete command", name))
        if self.fake.command_gone:
            raise from_status(404, "NotFound", f'commands.bus.volcano.sh "{name}" not found')
        if self.fake.delete_fails:
            raise from_status(500, "InternalError", "etcdserver: request timed out")

    def lister_watcher(self) -> Any:
        return None


def _command(action: str, target: str = "jf-a") -> dict[str, Any]:
    command = job_command({"metadata": {"name": target, "namespace": "ns", "uid": "job-uid"}}, action)
    command["metadata"].update({"name": f"{target}-{action.lower()}-abcde", "uid": f"cmd-{action}"})
    return command


def _take(fake: _Fake, command: dict[str, Any]) -> JobSimulator:
    sim = JobSimulator(fake, recorder=fake)  # type: ignore[arg-type]
    sim._on_command(command)
    (entry,) = sim._heap
    sim._heap.clear()  # as the driver pops it
    sim._take_command(entry[2])
    return sim


ISSUED = "Start to execute command {}, and clean it up to make sure executed not more than once."


def test_a_terminate_command_is_deleted_announced_and_makes_a_running_job_terminating() -> None:
    fake = _Fake(_job("Running"))
    sim = _take(fake, _command("TerminateJob"))
    assert fake.calls == [
        ("delete command", "jf-a-terminatejob-abcde"),
        ("get", "jf-a"),
        ("event", "Normal", "CommandIssued", ISSUED.format("TerminateJob")),
        ("get", "jf-a"),
        ("status", "jf-a", "Terminating", "0"),
    ]
    # The script's Completed is replaced: what is scheduled next is the plan's Terminated.
    assert sim._plans["job-uid"][2][1].phase == "Terminated"


def test_a_resume_command_restarts_an_aborted_job_and_counts_the_retry() -> None:
    fake = _Fake(_job("Aborted", retry_count=1))
    _take(fake, _command("ResumeJob"))
    assert fake.calls[-1] == ("status", "jf-a", "Restarting", "2")


def test_a_command_the_state_ignores_is_still_deleted_and_announced() -> None:
    fake = _Fake(_job("Completed"))
    _take(fake, _command("AbortJob"))
    assert [c[0] for c in fake.calls] == ["delete command", "get", "event"]


def test_a_command_someone_else_took_is_dropped_without_touching_the_job() -> None:
    fake = _Fake(_job("Running"), command_gone=True)
    sim = _take(fake, _command("TerminateJob"))
    assert fake.calls == [("delete command", "jf-a-terminatejob-abcde")]
    assert sim._commands == {}


def test_a_command_for_a_missing_job_is_deleted_and_nothing_else_happens() -> None:
    fake = _Fake(None)
    _take(fake, _command("TerminateJob"))
    assert fake.calls == [("delete command", "jf-a-terminatejob-abcde"), ("get", "jf-a")]


def test_a_command_aimed_at_something_else_is_not_taken() -> None:
    fake = _Fake(_job("Running"))
    sim = JobSimulator(fake, recorder=fake)  # type: ignore[arg-type]
    command = _command("TerminateJob")
    command["target"] = {**command["target"], "apiVersion": "batch/v1"}
    sim._on_command(command)
    assert sim._heap == [] and fake.calls == []


def test_a_failed_delete_is_retried_later_and_the_job_is_not_touched_before() -> None:
    fake = _Fake(_job("Running"), delete_fails=True)
    sim = _take(fake, _command("TerminateJob"))
    assert fake.calls == [("delete command", "jf-a-terminatejob-abcde")]
    (retry,) = sim._heap
    assert retry[2:4] == ("cmd-TerminateJob", -2)
    fake.delete_fails = False
    sim._take_command("cmd-TerminateJob")
    assert fake.calls[-1] == ("status", "jf-a", "Terminating", "0")


def test_with_several_workers_each_jobs_steps_play_in_order_on_one_thread(monkeypatch: Any) -> None:
    """Volcano syncs Jobs on several workers; the simulator's lanes keep each Job's steps in order."""
    import threading
    import time

    sim = JobSimulator(_Fake(None), workers=3)  # type: ignore[arg-type]
    played: list[tuple[str, int, str]] = []

    def play(key: str, index: int) -> None:
        time.sleep(0.001 * (hash(key) % 3))  # lanes run at different speeds
        played.append((key, index, threading.current_thread().name))

    monkeypatch.setattr(sim, "_play", play)
    for index in range(4):
        for job in range(12):
            sim._push(f"job-{job}", index, 0.0)
    stop = threading.Event()
    lanes = sim._start_lanes()
    driver = threading.Thread(target=sim._drive, args=(stop,))
    driver.start()
    deadline = time.monotonic() + 10
    while len(played) < 48 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    with sim._cond:
        sim._cond.notify_all()
    driver.join(5)
    sim._stop_lanes(lanes)
    assert len(played) == 48
    for job in range(12):
        mine = [(index, thread) for key, index, thread in played if key == f"job-{job}"]
        assert [index for index, _ in mine] == [0, 1, 2, 3]
        assert len({thread for _, thread in mine}) == 1
    assert len({thread for _, _, thread in played}) > 1
