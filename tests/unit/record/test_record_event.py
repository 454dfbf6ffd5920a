"""client-go's ``event_test.go``: the recorder's event object, the sink loop and the broadcaster.

Sinks are fakes that record their calls; the retry interval is injected (0 or a few ms), so no
test sleeps for real.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from record_fakes import FakeSink, ManualClock, SimpleIntervalClock, start_logging, wait_until
from structlog.testing import capture_logs

from jobflow_controller.record import (
    MAX_QUEUED_EVENTS,
    MAX_TRIES_PER_EVENT,
    Event,
    EventBroadcaster,
    EventCorrelator,
    SinkError,
    get_reference,
    record_to_sink,
)
from jobflow_controller.record.types import unix_nano

JOBFLOW: dict[str, Any] = {
    "apiVersion": "flow.volcano.sh/v1alpha1",
    "kind": "JobFlow",
    "metadata": {"name": "jf", "namespace": "ns1", "uid": "uid-1", "resourceVersion": "17"},
    "spec": {"flows": [{"name": "a"}]},
}


@pytest.fixture
def broadcaster() -> Any:
    made: list[EventBroadcaster] = []

    def make(**kwargs: Any) -> EventBroadcaster:
        kwargs.setdefault("sleep_duration", 0.0)
        b = EventBroadcaster(**kwargs)
        made.append(b)
        return b

    yield make
    for b in made:
        b.shutdown(timeout=2)


# --------------------------------------------------------------------------------------------
# The event object


def test_recorder_builds_the_event_object_like_client_go(
    broadcaster: Callable[..., EventBroadcaster],
) -> None:
    clock = ManualClock()
    b = broadcaster(clock=clock)
    sink = FakeSink()
    b.start_recording_to_sink(sink)
    recorder = b.new_recorder("vc-controller-manager", "node-1")

    recorder.eventf(JOBFLOW, "Normal", "Created", "create a job named %s!", "jf-a")

    created = sink.wait_for_calls(1)[0]
    assert created.op == "create"
    assert created.event == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"jf.{unix_nano(clock.wall()):x}", "namespace": "ns1"},
        "involvedObject": {
            "kind": "JobFlow",
            "namespace": "ns1",
            "name": "jf",
            "uid": "uid-1",
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "resourceVersion": "17",
        },
        "reason": "Created",
        "message": "create a job named jf-a!",
        "source": {"component": "vc-controller-manager", "host": "node-1"},
        "firstTimestamp": "2026-03-01T12:00:00Z",
        "lastTimestamp": "2026-03-01T12:00:00Z",
        "count": 1,
        "type": "Normal",
        "reportingComponent": "vc-controller-manager",
        "reportingInstance": "node-1",
    }


def test_event_name_is_involved_object_name_dot_hex_unix_nanos(
    broadcaster: Callable[..., EventBroadcaster],
) -> None:
    clock = ManualClock()
    b = broadcaster(clock=clock)
    sink = FakeSink()
    b.start_recording_to_sink(sink)
    recorder = b.new_recorder("c")

    recorder.event(JOBFLOW, "Normal", "A", "one")
    recorder.event(JOBFLOW, "Normal", "B", "two")  # same instant: names must still differ

    first, second = (call.event["metadata"]["name"] for call in sink.wait_for_calls(2))
    nanos = unix_nano(clock.wall())
    assert first == f"jf.{nanos:x}"
    assert second == f"jf.{nanos + 1:x}"


def test_event_name_falls_back_to_a_uuid_when_not_a_dns_subdomain(
    broadcaster: Callable[..., EventBroadcaster],
) -> None:
    b = broadcaster(clock=ManualClock())
    sink = FakeSink()
    b.start_recording_to_sink(sink)
    obj = copy.deepcopy(JOBFLOW)
    obj["metadata"]["name"] = "Not_A_Subdomain"

    b.new_recorder("c").event(obj, "Normal", "A", "m")

    name = sink.wait_for_calls(1)[0].event["metadata"]["name"]
    assert len(name) == 36 and name.count("-") == 4


def test_cluster_scoped_object_gets_its_event_in_default(
    broadcaster: Callable[..., EventBroadcaster],
) -> None:
    b = broadcaster(clock=ManualClock())
    sink = FakeSink()
    b.start_recording_to_sink(sink)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "u"}}

    b.new_recorder("c").event(node, "Warning", "Down", "gone")

    event = sink.wait_for_calls(1)[0].event
    assert event["metadata"]["namespace"] == "default"
    assert "namespace" not in event["involvedObject"]


def test_annotated_eventf_sets_event_annotations(broadcaster: Callable[..., EventBroadcaster]) -> None:
    b = broadcaster(clock=ManualClock())
    sink = FakeSink()
    b.start_recording_to_sink(sink)

    b.new_recorder("c").annotated_eventf(JOBFLOW, {"k": "v"}, "Normal", "R", "n=%d", 3)

    event = sink.wait_for_calls(1)[0].event
    assert event["metadata"]["annotations"] == {"k": "v"}
    assert event["message"] == "n=3"


def test_invalid_event_type_is_dropped_with_a_log(broadcaster: Callable[..., EventBroadcaster]) -> None:
    b = broadcaster(clock=ManualClock())
    sink = FakeSink()
    b.start_recording_to_sink(sink)
    recorder = b.new_recorder("c")

    with capture_logs() as logs:
        recorder.event(JOBFLOW, "Info", "R", "m")
    recorder.event(JOBFLOW, "Normal", "R", "m")

    assert [c.event["type"] for c in sink.wait_for_calls(1)] == ["Normal"]
    assert any(log["event"] == "Unsupported event type" and log["eventType"] == "Info" for log in logs)


def test_object_without_kind_is_dropped_unless_the_scheme_knows_it(
    broadcaster: Callable[..., EventBroadcaster],
) -> None:
    b = broadcaster(clock=ManualClock())
    sink = FakeSink()
    b.start_recording_to_sink(sink)
    bare = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"}}

    with capture_logs() as logs:
        b.new_recorder("c").event(bare, "Normal", "Dropped", "m")
    b.new_recorder("c", scheme=lambda obj: ("v1", "Pod")).event(bare, "Normal", "Kept", "m")

    event = sink.wait_for_calls(1)[0].event
    assert event["reason"] == "Kept"
    assert event["involvedObject"]["kind"] == "Pod" and event["involvedObject"]["apiVersion"] == "v1"
    assert any(log["event"] == "Could not construct reference, will not report event" for log in logs)


def test_object_reference_is_used_as_is() -> None:
    ref = {
        "kind": "Pod",
        "namespace": "baz",
        "name": "foo",
        "uid": "bar",
        "apiVersion": "v1",
        "fieldPath": "x",
    }
    assert get_reference(ref) == ref


# --------------------------------------------------------------------------------------------
# TestEventf: create, create, patch, create, patch, create, patch


TEST_POD = {"metadata": {"name": "foo", "namespace": "baz", "uid": "bar"}}
TEST_POD2 = {"metadata": {"name": "foo", "namespace": "baz", "uid": "differentUid"}}
TEST_REF = {
    "kind": "Pod",
    "namespace": "baz",
    "name": "foo",
    "uid": "bar",
    "apiVersion": "v1",
    "fieldPath": "spec.containers[2]",
}
TEST_REF2 = {**TEST_REF, "uid": "differentUid", "fieldPath": "spec.containers[3]"}


def _pod_ref(uid: str, field_path: str | None) -> dict[str, str]:
    ref = {"kind": "Pod", "namespace": "baz", "name": "foo", "uid": uid, "apiVersion": "v1"}
    if field_path:
        ref["fieldPath"] = field_path
    return ref


EVENTF_TABLE: list[tuple[dict[str, Any], str, str, dict[str, str], int, str, str]] = [
    # obj, reason, message, expected involvedObject, expected count, expected op, expected log
    (
        TEST_REF,
        "Started",
        "some verbose message: 1",
        _pod_ref("bar", "spec.containers[2]"),
        1,
        "create",
        'Event(v1.ObjectReference{Kind:"Pod", Namespace:"baz", Name:"foo", UID:"bar", APIVersion:"v1", '
        "ResourceVersion:\"\", FieldPath:\"spec.containers[2]\"}): type: 'Normal' reason: 'Started' "
        "some verbose message: 1",
    ),
    (
        TEST_POD,
        "Killed",
        "some other verbose message: 1",
        _pod_ref("bar", None),
        1,
        "create",
        'Event(v1.ObjectReference{Kind:"Pod", Namespace:"baz", Name:"foo", UID:"bar", APIVersion:"v1", '
        'ResourceVersion:"", FieldPath:""}): '
        "type: 'Normal' reason: 'Killed' some other verbose message: 1",
    ),
    (TEST_REF, "Started", "some verbose message: 1", _pod_ref("bar", "spec.containers[2]"), 2, "patch", ""),
    (
        TEST_REF2,
        "Started",
        "some verbose message: 1",
        _pod_ref("differentUid", "spec.containers[3]"),
        1,
        "create",
        "",
    ),
    (TEST_REF, "Started", "some verbose message: 1", _pod_ref("bar", "spec.containers[2]"), 3, "patch", ""),
    (
        TEST_REF2,
        "Stopped",
        "some verbose message: 1",
        _pod_ref("differentUid", "spec.containers[3]"),
        1,
        "create",
        "",
    ),
    (
        TEST_REF2,
        "Stopped",
        "some verbose message: 1",
        _pod_ref("differentUid", "spec.containers[3]"),
        2,
        "patch",
        "",
    ),
]


def _replay_eventf_table(b: EventBroadcaster, clock: ManualClock) -> tuple[FakeSink, list[str], list[Any]]:
    sink = FakeSink()
    lines: list[str] = []
    watcher = b.start_recording_to_sink(sink)
    log_watcher = start_logging(b, lines.append)
    recorder = b.new_recorder("eventTest", scheme=lambda obj: ("v1", "Pod"))
    with capture_logs() as logs:
        structured = b.start_structured_logging()
        for i, (obj, reason, message, ref, count, op, _) in enumerate(EVENTF_TABLE):
            # "%v" with an int, as upstream: "some verbose message: %v", 1
            fmt = message.rsplit(": ", 1)[0] + ": %v"
            recorder.eventf(obj, "Normal", reason, fmt, 1)
            call = sink.wait_for_calls(i + 1)[i]
            assert call.op == op, i
            stored = sink.stored[(call.event["metadata"]["namespace"], call.event["metadata"]["name"])]
            assert stored["count"] == count, i
            assert stored["involvedObject"] == ref, i
            assert stored["message"] == message and stored["reason"] == reason
            assert stored["source"] == {"component": "eventTest"}
            assert stored["reportingComponent"] == "eventTest"
            assert stored["metadata"]["name"].startswith("foo.")
            assert (stored["firstTimestamp"] != stored["lastTimestamp"]) is (count > 1), i
            clock.step(1)
        wait_until(lambda: len(lines) == len(EVENTF_TABLE))
        wait_until(lambda: sum(log.get("event") == "Event occurred" for log in logs) == len(EVENTF_TABLE))
    for w in (watcher, log_watcher, structured):
        w.stop()
        assert w.join(2)
    return sink, lines, logs


def test_eventf_creates_then_patches_repeats(broadcaster: Callable[..., EventBroadcaster]) -> None:
    clock = ManualClock()
    sink, lines, logs = _replay_eventf_table(broadcaster(clock=clock), clock)

    assert sink.ops() == [row[5] for row in EVENTF_TABLE]
    assert lines[0] == EVENTF_TABLE[0][6]
    assert lines[1] == EVENTF_TABLE[1][6]
    first_structured = next(log for log in logs if log.get("event") == "Event occurred")
    assert first_structured == {
        "event": "Event occurred",
        "log_level": "info",
        "object": "baz/foo",
        "fieldPath": "spec.containers[2]",
        "kind": "Pod",
        "apiVersion": "v1",
        "type": "Normal",
        "reason": "Started",
        "message": "some verbose message: 1",
    }


def test_second_sink_gets_a_fresh_correlator(broadcaster: Callable[..., EventBroadcaster]) -> None:
    """TestMultiSinkCache: replaying the table into a new sink repeats the same sequence."""
    clock = ManualClock()
    b = broadcaster(clock=clock)
    first, _, _ = _replay_eventf_table(b, clock)
    second, _, _ = _replay_eventf_table(b, clock)

    assert first.ops() == second.ops() == [row[5] for row in EVENTF_TABLE]


def test_event_without_namespace_lands_in_default(broadcaster: Callable[..., EventBroadcaster]) -> None:
    """TestEventfNoNamespace."""
    b = broadcaster(clock=ManualClock())
    sink = FakeSink()
    b.start_recording_to_sink(sink)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo", "uid": "bar"}}

    b.new_recorder("eventTest").eventf(pod, "Normal", "Started", "some verbose message: %v", 1)

    event = sink.wait_for_calls(1)[0].event
    assert event["metadata"]["namespace"] == "default"
    assert event["involvedObject"].get("namespace", "") == ""


# --------------------------------------------------------------------------------------------
# recordToSink: retries and give-ups (TestWriteEventError, TestUpdateExpiredEvent, TestCancelEvent)


def _failing(err: BaseException, times: int) -> Callable[[str, Event], BaseException | None]:
    attempts = {"n": 0}

    def fail(op: str, event: Event) -> BaseException | None:
        attempts["n"] += 1
        return err if attempts["n"] < times else None

    return fail


@pytest.mark.parametrize(
    ("err", "times_to_fail", "attempts_wanted"),
    [
        pytest.param(SinkError("cannot build"), 1000, 1, id="give-up-on-request-construction-error"),
        pytest.param(SinkError("rejected", status=422, reason="Invalid"), 1000, 1, id="give-up-on-status-error"),
        pytest.param(
            SinkError("exists", status=409, reason="AlreadyExists", already_exists=True),
            1000,
            1,
            id="drop-on-already-exists",
        ),
        pytest.param(SinkError("unreachable", retriable=True), 1000, MAX_TRIES_PER_EVENT, id="retry-retriable"),
        pytest.param(RuntimeError("A weird error"), 1000, MAX_TRIES_PER_EVENT, id="retry-unknown-error"),
        pytest.param(RuntimeError("A weird error"), 2, 2, id="succeed-eventually"),
    ],
)
def test_write_event_error(err: BaseException, times_to_fail: int, attempts_wanted: int) -> None:
    sink = FakeSink(fail=_failing(err, times_to_fail))
    correlator = EventCorrelator(SimpleIntervalClock(step=1))
    event = {"metadata": {"name": "e", "namespace": "ns"}, "count": 1, "lastTimestamp": "t"}

    record_to_sink(sink, event, correlator, 0.0, threading.Event())

    assert len(sink.calls) == attempts_wanted


def test_expired_event_is_created_anew_with_resource_version_cleared() -> None:
    """TestUpdateExpiredEvent: the PATCH finds 404, so the event is created, without its RV."""
    sink = FakeSink()
    correlator = EventCorrelator(SimpleIntervalClock(step=1))
    event: Event = {
        "metadata": {"name": "e", "namespace": "ns", "resourceVersion": "updated-resource-version"},
        "count": 2,
    }

    record_to_sink(sink, event, correlator, 0.0, threading.Event())

    assert sink.ops() == ["patch", "create"]
    assert "resourceVersion" not in sink.calls[1].event["metadata"]


def test_create_then_patch_then_recreate_after_expiry() -> None:
    clock = ManualClock()
    sink = FakeSink()
    correlator = EventCorrelator(clock)
    event = {
        "metadata": {"name": "jf.1", "namespace": "ns"},
        "involvedObject": {"kind": "JobFlow", "name": "jf", "namespace": "ns", "uid": "u"},
        "source": {"component": "vc-controller-manager"},
        "reason": "Created",
        "message": "m",
        "type": "Normal",
        "count": 1,
        "firstTimestamp": "2026-03-01T12:00:00Z",
        "lastTimestamp": "2026-03-01T12:00:00Z",
    }
    record_to_sink(sink, copy.deepcopy(event), correlator, 0.0, threading.Event())
    record_to_sink(sink, {**event, "lastTimestamp": "2026-03-01T12:00:09Z"}, correlator, 0.0, threading.Event())
    assert sink.ops() == ["create", "patch"]
    assert sink.calls[1].patch == {"count": 2, "lastTimestamp": "2026-03-01T12:00:09Z", "message": "m"}
    assert sink.stored[("ns", "jf.1")]["count"] == 2

    sink.stored.clear()  # the API server's event TTL expired it
    record_to_sink(sink, copy.deepcopy(event), correlator, 0.0, threading.Event())

    assert sink.ops() == ["create", "patch", "patch", "create"]
    recreated = sink.calls[3].event
    assert recreated["count"] == 3 and "resourceVersion" not in recreated["metadata"]


def test_cancelled_broadcaster_makes_exactly_one_attempt() -> None:
    """TestCancelEvent."""
    sink = FakeSink(fail=lambda op, event: RuntimeError("down"))
    stop = threading.Event()
    stop.set()

    record_to_sink(sink, {"metadata": {"namespace": "ns", "name": "e"}}, EventCorrelator(), 3600.0, stop)

    assert len(sink.calls) == 1


def test_retry_sleeps_are_jittered_first_then_fixed() -> None:
    sink = FakeSink(fail=lambda op, event: SinkError("unreachable", retriable=True))
    with capture_logs() as logs:
        record_to_sink(
            sink,
            {"metadata": {"namespace": "ns", "name": "e"}},
            EventCorrelator(),
            0.004,
            threading.Event(),
            rand=lambda: 0.25,
        )

    sleeps = [log["sleepSeconds"] for log in logs if log["event"].startswith("Unable to write event (may")]
    # 12 attempts, 11 sleeps between them.
    assert sleeps == [0.001] + [0.004] * (MAX_TRIES_PER_EVENT - 2)
    assert len(sink.calls) == MAX_TRIES_PER_EVENT
    assert logs[-1]["event"] == "Unable to write event (retry limit exceeded!)"


def test_stop_interrupts_a_retry_sleep() -> None:
    attempted = threading.Event()

    def fail(op: str, event: Event) -> BaseException:
        attempted.set()
        return SinkError("unreachable", retriable=True)

    sink = FakeSink(fail=fail)
    stop = threading.Event()
    worker = threading.Thread(
        target=record_to_sink,
        args=(sink, {"metadata": {"namespace": "ns", "name": "e"}}, EventCorrelator(), 3600.0, stop),
        kwargs={"rand": lambda: 1.0},
    )
    worker.start()
    assert attempted.wait(2)

    stop.set()
    worker.join(2)

    assert not worker.is_alive()
    assert len(sink.calls) == 1


def test_lots_of_events_are_neither_dropped_nor_under_attempted(
    broadcaster: Callable[..., EventBroadcaster],
) -> None:
    """TestLotsOfEvents: 1000 events, each failing 4 times before it is written."""
    counts = [0] * MAX_QUEUED_EVENTS
    lock = threading.Lock()

    def fail(op: str, event: Event) -> BaseException | None:
        with lock:
            counts[int(event["message"])] += 1
            return RuntimeError("fake error") if counts[int(event["message"])] < 5 else None

    b = broadcaster()
    sink = FakeSink(fail=fail)
    b.start_recording_to_sink(sink)
    logged: list[str] = []
    start_logging(b, logged.append)
    recorder = b.new_recorder("eventTest")
    for i in range(MAX_QUEUED_EVENTS):
        ref = {"kind": "Pod", "name": f"foo{i}", "namespace": "baz", "uid": "bar", "apiVersion": "version"}
        recorder.eventf(ref, "Normal", f"Reason-{i}", "%d", i)

    wait_until(lambda: len(sink.stored) == MAX_QUEUED_EVENTS, timeout=30)
    assert b.shutdown(timeout=5)

    assert len(sink.stored) == MAX_QUEUED_EVENTS
    assert len(logged) == MAX_QUEUED_EVENTS
    assert min(counts) >= 5


# --------------------------------------------------------------------------------------------
# The broadcaster's queue and shutdown


def test_full_watcher_buffer_drops_with_a_log(broadcaster: Callable[..., EventBroadcaster]) -> None:
    b = broadcaster(max_queued_events=2)
    release = threading.Event()
    started = threading.Event()
    handled: list[str] = []

    def slow(event: Event) -> None:
        started.set()
        release.wait(5)
        handled.append(event["reason"])

    watcher = b.start_event_watcher(slow)
    recorder = b.new_recorder("c")
    recorder.event(JOBFLOW, "Normal", "r0", "m")
    assert started.wait(2)
    with capture_logs() as logs:
        for i in range(1, 4):
            recorder.event(JOBFLOW, "Normal", f"r{i}", "m")
        # Dropped either by the incoming queue or by the watcher's buffer: both hold 2.
        wait_until(lambda: any("dropped event" in log["event"] for log in logs))
        wait_until(lambda: watcher.pending() == 2)
    release.set()
    watcher.stop()
    assert watcher.join(2)

    assert handled == ["r0", "r1", "r2"]


def test_shutdown_flushes_queued_events(broadcaster: Callable[..., EventBroadcaster]) -> None:
    b = broadcaster()
    gate = threading.Event()
    sink = FakeSink(block=gate)
    b.start_recording_to_sink(sink)
    recorder = b.new_recorder("c")
    for i in range(20):
        recorder.event(JOBFLOW, "Normal", f"R{i}", "m")
    gate.set()

    assert b.shutdown(timeout=5)

    assert len(sink.stored) == 20


def test_shutdown_cancels_retries_instead_of_waiting_for_them(
    broadcaster: Callable[..., EventBroadcaster],
) -> None:
    b = broadcaster(sleep_duration=3600.0, rand=lambda: 1.0)
    sink = FakeSink(fail=lambda op, event: SinkError("unreachable", retriable=True))
    b.start_recording_to_sink(sink)
    b.new_recorder("c").event(JOBFLOW, "Normal", "R", "m")
    sink.wait_for_calls(1)

    started = time.monotonic()
    assert b.shutdown(timeout=5)

    assert time.monotonic() - started < 2
    assert len(sink.calls) == 1


def test_shutdown_gives_up_after_its_timeout(broadcaster: Callable[..., EventBroadcaster]) -> None:
    b = broadcaster()
    gate = threading.Event()
    sink = FakeSink(block=gate)
    b.start_recording_to_sink(sink)
    b.new_recorder("c").event(JOBFLOW, "Normal", "R", "m")
    wait_until(lambda: b._incoming.qsize() == 0)

    with capture_logs() as logs:
        flushed = b.shutdown(timeout=0.02)
    gate.set()

    assert flushed is False
    assert any(log["event"] == "Event broadcaster shut down before all events were written" for log in logs)


def test_events_after_shutdown_are_dropped_with_a_log(broadcaster: Callable[..., EventBroadcaster]) -> None:
    b = broadcaster()
    sink = FakeSink()
    b.start_recording_to_sink(sink)
    recorder = b.new_recorder("c")
    assert b.shutdown(timeout=2)

    with capture_logs() as logs:
        recorder.event(JOBFLOW, "Normal", "Late", "m")

    assert sink.calls == []
    assert any(log.get("err") == "broadcaster already stopped" for log in logs)


def test_shutdown_leaves_no_threads_behind() -> None:
    before = set(threading.enumerate())
    b = EventBroadcaster(sleep_duration=0.0)
    b.start_recording_to_sink(FakeSink())
    b.start_structured_logging()
    b.new_recorder("c").event(JOBFLOW, "Normal", "R", "m")

    assert b.shutdown(timeout=2)

    assert set(threading.enumerate()) - before == set()


def test_stopped_watcher_no_longer_receives_events(broadcaster: Callable[..., EventBroadcaster]) -> None:
    b = broadcaster()
    first, second = FakeSink(), FakeSink()
    watcher = b.start_recording_to_sink(first)
    recorder = b.new_recorder("c")
    recorder.event(JOBFLOW, "Normal", "A", "m")
    first.wait_for_calls(1)
    watcher.stop()
    assert watcher.join(2)
    b.start_recording_to_sink(second)

    recorder.event(JOBFLOW, "Normal", "B", "m")

    assert [c.event["reason"] for c in second.wait_for_calls(1)] == ["B"]
    assert len(first.calls) == 1


def test_a_message_is_cut_to_4096_bytes_with_the_cut_marked() -> None:
    """Messages quoting tenant text were stored and logged whole (ten 1 MB Events, issue 42)."""
    from jobflow_controller.record.recorder import MAX_MESSAGE_BYTES, cut_message

    assert cut_message("short") == "short"
    assert cut_message("x" * MAX_MESSAGE_BYTES) == "x" * MAX_MESSAGE_BYTES
    cut = cut_message("é" * 5000)  # 10,000 bytes of two-byte characters
    assert len(cut.encode()) <= MAX_MESSAGE_BYTES
    assert cut.endswith("é... (cut: 10000 bytes)")


def test_the_recorder_stores_a_long_message_cut(broadcaster: Callable[..., EventBroadcaster]) -> None:
    """What reaches the sink (etcd) is the cut message, whatever the verb: eventf quoting tenant text."""
    b = broadcaster(clock=ManualClock())
    sink = FakeSink()
    b.start_recording_to_sink(sink)

    b.new_recorder("c").eventf(JOBFLOW, "Warning", "Skipped", "value %s", "v" * 1_000_000)

    message = sink.wait_for_calls(1)[0].event["message"]
    assert len(message) <= 4096 and message.startswith("value vvv")
    assert message.endswith("... (cut: 1000006 bytes)")
