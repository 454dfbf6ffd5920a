"""``FakeRecorder`` renders events as client-go's does: ``"<type> <reason> <message>"``."""

from __future__ import annotations

from typing import Any

from jobflow_controller.record import EventRecorder, FakeRecorder

JOBFLOW: dict[str, Any] = {
    "apiVersion": "flow.volcano.sh/v1alpha1",
    "kind": "JobFlow",
    "metadata": {"name": "jf", "namespace": "ns"},
}


def test_event_is_type_reason_message() -> None:
    recorder = FakeRecorder()
    recorder.event(JOBFLOW, "Normal", "Created", "create a job named jf-a!")
    assert recorder.drain() == ["Normal Created create a job named jf-a!"]


def test_eventf_formats_go_style() -> None:
    recorder = FakeRecorder()
    recorder.eventf(JOBFLOW, "Warning", "SyncJobFlow", "%v JobFlow failed for %v", "SyncJobFlow", "boom")
    assert recorder.drain() == ["Warning SyncJobFlow SyncJobFlow JobFlow failed for boom"]


def test_include_object_appends_kind_and_api_version() -> None:
    recorder = FakeRecorder(include_object=True)
    recorder.event(JOBFLOW, "Normal", "Created", "m")
    assert recorder.drain() == ["Normal Created m involvedObject{kind=JobFlow,apiVersion=flow.volcano.sh/v1alpha1}"]


def test_annotations_are_appended_as_a_go_map() -> None:
    recorder = FakeRecorder()
    recorder.annotated_eventf(JOBFLOW, {"b": "2", "a": "1"}, "Normal", "R", "n=%d", 5)
    assert recorder.drain() == ["Normal R n=5 map[a:1 b:2]"]


def test_discarding_recorder_keeps_nothing() -> None:
    recorder = FakeRecorder(discard=True)
    recorder.event(JOBFLOW, "Normal", "R", "m")
    assert recorder.events is None
    assert recorder.drain() == [] and recorder.history == []


def test_history_survives_draining() -> None:
    recorder = FakeRecorder()
    recorder.event(JOBFLOW, "Normal", "A", "1")
    recorder.drain()
    recorder.event(JOBFLOW, "Normal", "B", "2")
    assert recorder.history == ["Normal A 1", "Normal B 2"]


def test_fake_recorder_satisfies_the_recorder_protocol() -> None:
    recorder: EventRecorder = FakeRecorder()
    recorder.eventf(JOBFLOW, "Normal", "R", "%s", "x")
