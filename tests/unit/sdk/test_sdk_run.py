"""The pure parts of running: the lifecycle patches are the plugin's, and a status reads as flow states."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_sdk.run import lifecycle_patch, lifecycle_problem, warnings
from jobflow_sdk.status import flow_states, progress_line
from kubectl_jobflow.verbs import verb_patch, verb_problem


@pytest.mark.parametrize("verb", ["suspend", "resume", "stop", "terminate"])
def test_each_lifecycle_verb_sends_the_plugins_patch(verb: str) -> None:
    assert lifecycle_patch(verb) == verb_patch(verb)


def test_retry_sends_the_plugins_annotation() -> None:
    assert lifecycle_patch("retry", "id-1", ["train"]) == verb_patch("retry", "id-1", ["train"])


def stored(shutdown: str = "", flows: tuple[str, ...] = ("a", "b")) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"shutdown": shutdown, "flows": [{"name": f} for f in flows]}}


@pytest.mark.parametrize(
    ("verb", "job_flow", "flows"),
    [
        ("retry", stored(), ["c"]),
        ("retry", stored(), ["a"]),
        ("stop", stored("Terminate"), []),
        ("terminate", stored("Stop"), []),
        ("stop", stored(), []),
    ],
)
def test_a_verb_is_refused_where_the_plugin_refuses_it(verb: str, job_flow: dict[str, Any], flows: list[str]) -> None:
    assert (lifecycle_problem(verb, job_flow, flows) is None) == (verb_problem(verb, job_flow, flows) is None)


def with_status(status: dict[str, Any], *flows: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"flows": list(flows)}, "status": status}


def test_flow_states_read_jobs_skips_and_matrix_indexes() -> None:
    job_flow = with_status(
        {
            "jobStatusList": [
                {"name": "p-a", "state": "Completed"},
                {"name": "p-m-0", "state": "Completed"},
                {"name": "p-m-1", "state": "Failed"},
            ],
            "skippedJobs": ["p-s"],
            "state": {"phase": "Failed"},
        },
        {"name": "a"},
        {"name": "m", "matrix": {"params": [{"name": "x", "values": ["1", "2"]}]}},
        {"name": "s"},
        {"name": "w"},
    )
    assert flow_states(job_flow) == {"a": "Completed", "m": "Failed", "s": "Skipped", "w": "Waiting"}
    assert progress_line(job_flow) == "p: Failed, 3/4 flows ended"


def test_a_flow_named_like_another_flows_prefix_is_not_mixed_up() -> None:
    job_flow = with_status({"jobStatusList": [{"name": "p-a-b", "state": "Running"}]}, {"name": "a"}, {"name": "a-b"})
    assert flow_states(job_flow) == {"a": "Waiting", "a-b": "Running"}


def test_warnings_are_the_warning_events_once_each() -> None:
    events = [
        {"type": "Warning", "reason": "InvalidParams", "message": "x"},
        {"type": "Normal", "reason": "Created", "message": "y"},
        {"type": "Warning", "reason": "InvalidParams", "message": "x"},
    ]
    assert warnings(events) == ["InvalidParams: x"]


def test_building_and_writing_yaml_import_no_pydantic() -> None:
    # The `sdk` extra (pydantic) is needed by the checks only: `pip install .` builds and writes YAML.
    import subprocess
    import sys

    code = (
        "import sys\nfrom jobflow_sdk.examples import ml_pipeline\nml_pipeline.pipeline().to_yaml()\n"
        "sys.exit(1 if 'pydantic' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False, timeout=60).returncode == 0
