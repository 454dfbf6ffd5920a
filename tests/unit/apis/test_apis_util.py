"""Names, keys and time formats the controllers put on the wire (upstream's util tests and more)."""

from __future__ import annotations

import datetime

import pytest

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.meta import (
    add_duration,
    format_duration,
    format_time,
    parse_duration,
    parse_duration_ns,
)


def test_get_job_name() -> None:
    assert jf.job_name("jobFlowA", "jobTemplateA") == "jobFlowA-jobTemplateA"


def test_generate_object_string() -> None:
    assert meta.generate_object_string("default", "flow") == "default.flow"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("2m56s", 176.0), ("1h2m3.5s", 3723.5), ("4.376713s", 4.376713), ("300ms", 0.3), ("0", 0.0)],
)
def test_parse_go_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "1x", "1.2.3s"])
def test_parse_go_duration_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "nanos"),
    [("2.9999999999s", 2_999_999_999), ("1.5ms", 1_500_000), ("1m0.000000001s", 60_000_000_001), ("-1s", -(10**9))],
)
def test_parse_go_duration_to_nanoseconds_truncates_as_go_does(text: str, nanos: int) -> None:
    assert parse_duration_ns(text) == nanos


@pytest.mark.parametrize(
    ("duration", "end"),
    [
        ("2.9999996s", "2026-12-02T09:30:26Z"),  # a float timedelta would round this up to :27
        ("2.9999999999s", "2026-12-02T09:30:26Z"),
        ("3s", "2026-12-02T09:30:27Z"),
        ("1m0.5s", "2026-12-02T09:31:24Z"),
    ],
)
def test_end_timestamp_truncates_to_the_second_as_go_does(duration: str, end: str) -> None:
    """Issue 14 item 6: `creationTimestamp + runningDuration`, marshalled by metav1.Time (truncation)."""
    created = datetime.datetime(2026, 12, 2, 9, 30, 24, tzinfo=datetime.UTC)
    assert format_time(add_duration(created, duration)) == end


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (1, "1s"),
        (176, "2m56s"),
        (3723.5, "1h2m3.5s"),
        (0.3, "300ms"),
        (4.376713, "4.376713s"),
        (3600, "1h0m0s"),
    ],
)
def test_format_go_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_flows_distinguish_no_targets_from_empty_targets() -> None:
    obj = {
        "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": []}}, {"name": "c", "dependsOn": {}}]}
    }
    assert [f.targets for f in jf.flows(obj)] == [None, (), None]
