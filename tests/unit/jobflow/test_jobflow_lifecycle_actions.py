"""The lifecycle's I/O (lifecycle_actions.py): Commands capped and never resent within 30 s, and the TTL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from jobflow_fakes import job, job_flow

from jobflow_controller.apis.meta import format_time
from jobflow_controller.jobflow import lifecycle_actions
from jobflow_controller.jobflow.lifecycle_actions import MAX_COMMANDS_PER_SYNC, LifecycleActions
from jobflow_controller.jobflow.world import Termination

NOW = datetime(2026, 1, 1, tzinfo=UTC)


class Api:
    def __init__(self) -> None:
        self.commands: list[dict[str, Any]] = []
        self.deletes: list[tuple[str, dict[str, Any]]] = []

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.commands.append(body)
        return body

    def delete(self, name: str, **kwargs: Any) -> None:
        self.deletes.append((name, kwargs))


class Clientset:
    def __init__(self, api: Api) -> None:
        self.api = api

    def commands(self, namespace: str) -> Api:
        return self.api

    def job_flows(self, namespace: str) -> Api:
        return self.api


class Clock:
    def wall(self) -> datetime:
        return NOW


class Writer:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def write(self, job_flow: Any, body: dict[str, Any], *, at_once: bool = False) -> None:
        self.bodies.append(body)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def eventf(self, obj: Any, kind: str, reason: str, fmt: str, *args: Any) -> None:
        self.events.append((kind, reason))


class Queue:
    """The JobFlowQueue's `react` (the JobFlow back in the REACT lane after a delay), recorded."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.requeued: list[tuple[str, str, float]] = []

    def react(self, namespace: str, name: str, delay: float = 0.0) -> None:
        self.requeued.append((namespace, name, delay))


def actions() -> tuple[LifecycleActions, Api, list[tuple[str, str, float]], Writer]:
    api, queue, writer = Api(), Queue(), Writer()
    made = LifecycleActions(
        Clientset(api),  # type: ignore[arg-type]
        Recorder(),
        queue,  # type: ignore[arg-type]
        writer,  # type: ignore[arg-type]
    )
    return made, api, queue.requeued, writer


def running(n: int) -> list[Termination]:
    out = []
    for i in range(n):
        one = job(f"f-{i}", flow="f", phase="Running")
        one["metadata"]["uid"] = f"uid-{i}"
        out.append(Termination(one))
    return out


def test_commands_are_capped_per_sync_and_the_rest_follow_in_the_next_ones() -> None:
    made, api, requeued, _ = actions()
    jobs = running(MAX_COMMANDS_PER_SYNC + 5)
    owner = job_flow("f")
    assert made.terminate(owner, jobs) is None
    assert len(api.commands) == MAX_COMMANDS_PER_SYNC and requeued == [("default", "f", 0.0)]
    made.terminate(owner, jobs)  # the first 25 are not sent again; the 5 others are
    assert len(api.commands) == MAX_COMMANDS_PER_SYNC + 5
    assert api.commands[0]["action"] == "TerminateJob"
    assert api.commands[0]["metadata"]["generateName"] == "f-0-terminatejob-"


def test_a_command_is_sent_again_only_after_the_resend_delay(monkeypatch: Any) -> None:
    made, api, _, _ = actions()
    clock = [1000.0]
    monkeypatch.setattr(lifecycle_actions.time, "monotonic", lambda: clock[0])
    jobs = running(1)
    made.terminate(job_flow("f"), jobs)
    made.terminate(job_flow("f"), jobs)
    assert len(api.commands) == 1
    clock[0] += lifecycle_actions.COMMAND_RESEND_SECONDS + 1
    made.terminate(job_flow("f"), jobs)
    assert len(api.commands) == 2


def finished(ttl: int, finished_at: datetime | None, retain: str) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if finished_at is not None:
        status["finishedAt"] = format_time(finished_at)
    obj = job_flow("f", phase="Succeed", retain=retain, status=status, uid="u-1")
    obj["spec"]["ttlSecondsAfterFinished"] = ttl
    return obj


def test_the_ttl_deletes_with_the_retain_policys_propagation_once_it_passed() -> None:
    made, api, requeued, _ = actions()
    assert made.expire(finished(10, NOW - timedelta(seconds=4), "retain")) is False
    assert requeued == [("default", "f", 6.0)] and api.deletes == []
    assert made.expire(finished(10, NOW - timedelta(seconds=11), "retain")) is True
    assert made.expire(finished(10, NOW - timedelta(seconds=11), "delete")) is True
    assert api.deletes == [
        ("f", {"uid": "u-1", "propagation_policy": "Orphan"}),
        ("f", {"uid": "u-1", "propagation_policy": "Background"}),
    ]


def test_a_finished_job_flow_without_finished_at_is_stamped_now_and_waits_the_whole_ttl() -> None:
    made, api, requeued, writer = actions()
    assert made.expire(finished(30, None, "retain")) is False
    assert writer.bodies[0]["finishedAt"] == format_time(NOW) and requeued == [("default", "f", 30.0)]
    assert api.deletes == []
