"""Names, keys and time formats the controllers put on the wire (upstream's util tests and more)."""

from __future__ import annotations

import pytest

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.timeutil import format_duration, parse_duration


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
