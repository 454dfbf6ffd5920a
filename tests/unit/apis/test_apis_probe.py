"""Reading `dependsOn.probe` and the rules it must meet before any Job is seen (apis/probe.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobflow_controller.apis.jobflow import flows, has_probes
from jobflow_controller.apis.probe import (
    HttpGet,
    Probe,
    TaskStatus,
    TcpSocket,
    parse_probe,
    probe_problems,
)

FULL: dict[str, Any] = {
    "httpGetList": [{"taskName": "ps", "port": 8080, "path": "/healthz", "httpHeader": {"name": "X-T", "value": "v"}}],
    "tcpSocketList": [{"taskName": "ps", "port": 2222}],
    "taskStatusList": [{"taskName": "worker", "phase": "Running"}],
}


def test_a_probe_is_read_into_its_three_lists() -> None:
    probe = parse_probe(FULL)
    assert probe.http_get == (HttpGet("ps", 8080, "/healthz", ("X-T", "v")),)
    assert probe.tcp_socket == (TcpSocket("ps", 2222),)
    assert probe.task_status == (TaskStatus("worker", "Running"),)
    assert probe.task_names() == ["worker", "ps"]


def test_the_entries_that_apply_to_a_job_are_those_naming_one_of_its_tasks() -> None:
    probe = parse_probe(FULL)
    assert probe.for_tasks({"worker"}) == (TaskStatus("worker", "Running"),)
    assert probe.for_tasks({"chief"}) == ()


@pytest.mark.parametrize("raw", [None, {}, {"httpGetList": []}, {"tcpSocketList": None}])
def test_an_absent_or_empty_probe_has_no_checks(raw: object) -> None:
    assert not parse_probe(raw)
    assert probe_problems(raw) == []


def test_a_flows_probe_is_read_with_its_targets() -> None:
    job_flow = {"spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"], "probe": FULL}}]}}
    assert [(f.name, f.targets, f.probe) for f in flows(job_flow)] == [("a", None, None), ("b", ("a",), FULL)]


def test_a_valid_probe_has_no_problems() -> None:
    assert probe_problems(FULL) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("x", "dependsOn.probe: must be an object, not a string"),
        ({"tcpSocketList": {}}, "dependsOn.probe.tcpSocketList: must be an array, not an object"),
        ({"tcpSocketList": [None]}, "dependsOn.probe.tcpSocketList[0]: must be an object, not null"),
        ({"tcpSocketList": [{"port": 1}]}, "dependsOn.probe.tcpSocketList[0].taskName: is required"),
        (
            {"tcpSocketList": [{"taskName": "Bad_Name", "port": 1}]},
            "dependsOn.probe.tcpSocketList[0].taskName: 'Bad_Name' is not a valid task name (lowercase letters, "
            "digits and '-', starting and ending with a letter or digit, at most 63 characters)",
        ),
        (
            {"tcpSocketList": [{"taskName": "ps", "port": 0}]},
            "dependsOn.probe.tcpSocketList[0].port: must be between 1 and 65535, not 0",
        ),
        ({"httpGetList": [{"taskName": "ps"}]}, "dependsOn.probe.httpGetList[0].port: is required"),
        (
            {"httpGetList": [{"taskName": "ps", "port": "80"}]},
            "dependsOn.probe.httpGetList[0].port: must be an integer, not a string",
        ),
        (
            {"httpGetList": [{"taskName": "ps", "port": 80, "path": "healthz"}]},
            "dependsOn.probe.httpGetList[0].path: 'healthz' must start with '/'",
        ),
        (
            {"httpGetList": [{"taskName": "ps", "port": 80, "path": "/a b"}]},
            "dependsOn.probe.httpGetList[0].path: '/a b' must not contain whitespace or control characters",
        ),
        (
            {"httpGetList": [{"taskName": "ps", "port": 80, "httpHeader": {"name": "X Y", "value": "v"}}]},
            "dependsOn.probe.httpGetList[0].httpHeader.name: 'X Y' is not a valid HTTP header name",
        ),
        (
            {"httpGetList": [{"taskName": "ps", "port": 80, "httpHeader": {"name": "X", "value": "a\r\nb"}}]},
            "dependsOn.probe.httpGetList[0].httpHeader.value: must not contain line breaks or NUL",
        ),
        (
            {"taskStatusList": [{"taskName": "ps"}]},
            "dependsOn.probe.taskStatusList[0].phase: is required "
            "(one of Pending, Running, Succeeded, Failed, Unknown)",
        ),
        (
            {"taskStatusList": [{"taskName": "ps", "phase": "Completed"}]},
            "dependsOn.probe.taskStatusList[0].phase: 'Completed' is not a pod phase "
            "(one of Pending, Running, Succeeded, Failed, Unknown)",
        ),
    ],
)
def test_a_bad_probe_is_refused_with_the_path_and_the_problem(raw: object, expected: str) -> None:
    assert probe_problems(raw) == [expected]


def test_a_probe_without_targets_is_refused_as_it_could_never_gate_anything() -> None:
    assert probe_problems(FULL, has_targets=False) == [
        "dependsOn.probe: needs dependsOn.targets: a probe checks the Jobs of the flow's targets"
    ]


def test_every_problem_is_reported_in_document_order() -> None:
    raw = {"httpGetList": [{"taskName": "ps", "port": 0, "path": "x"}], "taskStatusList": [{"phase": "Running"}]}
    assert probe_problems(raw) == [
        "dependsOn.probe.taskStatusList[0].taskName: is required",
        "dependsOn.probe.httpGetList[0].port: must be between 1 and 65535, not 0",
        "dependsOn.probe.httpGetList[0].path: 'x' must start with '/'",
    ]


def test_parsing_leaves_out_entries_with_problems() -> None:
    assert parse_probe({"tcpSocketList": [{"taskName": "ps", "port": 0}, {"taskName": "ps", "port": 1}]}) == Probe(
        tcp_socket=(TcpSocket("ps", 1),)
    )


_ANY = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3), st.just({}), st.just([]))
_DEPENDS_ON = st.one_of(_ANY, st.fixed_dictionaries({}, optional={"targets": st.just(["a"]), "probe": _ANY}))
_FLOW = st.one_of(_ANY, st.fixed_dictionaries({"name": st.just("b")}, optional={"dependsOn": _DEPENDS_ON}))


@given(st.one_of(_ANY, st.lists(_FLOW, max_size=4)))
def test_has_probes_reads_what_flows_reads(raw_flows: Any) -> None:
    """The Job handlers' shortcut answers as `flows` would, whatever shape the spec has."""
    job_flow = {"metadata": {"name": "jf"}, "spec": {"flows": raw_flows}}
    try:
        parsed = flows(job_flow)
    except TypeError:  # a non-iterable `flows` (a number): flows() cannot read it either
        return
    assert has_probes(job_flow) == any(flow.probe is not None for flow in parsed)
