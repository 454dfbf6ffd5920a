"""`wait()`'s watch loop against a scripted watch: one watch while the stream lasts, a new one from
the last version only when the server ends it, a GET only after an ERROR (410 Gone)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from informers.listwatch import ListOptions, WatchEvent
from jobflow_sdk import JobFlowDeletedError, WaitTimeoutError, watch
from jobflow_sdk.run import Connection


def job_flow(version: str, phase: str = "Running") -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns", "resourceVersion": version},
        "status": {"state": {"phase": phase}},
    }


class ScriptedWatch:
    def __init__(self, events: list[WatchEvent]) -> None:
        self.events, self.stopped = events, False

    def __iter__(self) -> Iterator[WatchEvent]:
        return iter(self.events)

    def stop(self) -> None:
        self.stopped = True


class Scripted:
    """Stands in for ResourceListerWatcher and run.get: each watch() plays the next script."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, scripts: list[list[WatchEvent]], current: dict[str, Any]
    ) -> None:
        self.scripts, self.current = scripts, current
        self.watches: list[str | None] = []
        self.gets = 0
        monkeypatch.setattr(watch, "ResourceListerWatcher", lambda *a, **k: self)
        monkeypatch.setattr(watch.run, "get", self.get)

    def watch(self, options: ListOptions) -> ScriptedWatch:
        self.watches.append(options.resource_version)
        return ScriptedWatch(self.scripts.pop(0) if self.scripts else [])

    def get(self, *args: Any) -> dict[str, Any]:
        self.gets += 1
        return self.current


class NoRest:
    rest = None


def wait(timeout: float = 5) -> str:
    connection = Connection(NoRest(), "ns")  # type: ignore[arg-type]
    return watch.wait_for(connection, "p", "ns", resource_version="1", timeout=timeout)


def test_one_watch_sees_the_jobflow_to_its_final_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    script = [WatchEvent("MODIFIED", job_flow("2")), WatchEvent("MODIFIED", job_flow("3", "Succeed"))]
    scripted = Scripted(monkeypatch, [script], {})
    assert wait() == "Succeed"
    assert scripted.watches == ["1"] and scripted.gets == 0


def test_a_stream_the_server_ended_is_watched_again_from_the_last_version(monkeypatch: pytest.MonkeyPatch) -> None:
    scripted = Scripted(
        monkeypatch, [[WatchEvent("MODIFIED", job_flow("7"))], [WatchEvent("MODIFIED", job_flow("9", "Succeed"))]], {}
    )
    assert wait() == "Succeed"
    assert scripted.watches == ["1", "7"] and scripted.gets == 0


def test_an_expired_version_is_read_again_once_then_watched_from_there(monkeypatch: pytest.MonkeyPatch) -> None:
    gone = WatchEvent("ERROR", {"kind": "Status", "code": 410, "reason": "Expired"})
    scripted = Scripted(monkeypatch, [[gone], [WatchEvent("MODIFIED", job_flow("12", "Succeed"))]], job_flow("11"))
    assert wait() == "Succeed"
    assert scripted.watches == ["1", "11"] and scripted.gets == 1


def test_a_deleted_jobflow_ends_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    Scripted(monkeypatch, [[WatchEvent("DELETED", job_flow("3"))]], {})
    with pytest.raises(JobFlowDeletedError):
        wait()


def test_a_jobflow_still_running_at_the_deadline_times_out_with_its_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    Scripted(monkeypatch, [[WatchEvent("MODIFIED", job_flow("2"))]] * 50, {})
    with pytest.raises(WaitTimeoutError, match=r"still Running after 0\.2s") as caught:
        wait(timeout=0.2)
    assert caught.value.phase == "Running"


def test_a_stream_that_ends_at_once_is_not_reopened_in_a_hot_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "RECONNECT_PAUSE", 0.1)
    scripted = Scripted(monkeypatch, [], {})
    with pytest.raises(WaitTimeoutError):
        wait(timeout=0.35)
    assert len(scripted.watches) <= 4
