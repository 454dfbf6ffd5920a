"""`kubectl jobflow suspend|resume|stop|terminate|retry NAME`: one merge patch each, one line printed.

Run against a fake JobFlow client that records the calls: a verb reads the JobFlow, then patches it
exactly once (or, with `--dry-run`, prints the patch and patches nothing).
"""

from __future__ import annotations

import datetime
import io
import json
import re
from typing import Any

import pytest

from jobflow_controller.kube.errors import from_status
from kubectl_jobflow import cli
from kubectl_jobflow.verbs import (
    VerbError,
    done_line,
    new_request_id,
    run_verb,
    verb_patch,
    verb_problem,
)

REQUEST = "flow.volcano.sh/retry-request"


def job_flow(shutdown: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"flows": [{"name": "prep"}, {"name": "train"}, {"name": "eval"}]}
    if shutdown is not None:
        spec["shutdown"] = shutdown
    return {"metadata": {"name": "pipe", "namespace": "ml"}, "spec": spec}


@pytest.mark.parametrize(
    ("verb", "patch"),
    [
        ("suspend", {"spec": {"suspend": True}}),
        ("resume", {"spec": {"suspend": False}}),
        ("stop", {"spec": {"shutdown": "Stop"}}),
        ("terminate", {"spec": {"shutdown": "Terminate"}}),
        ("retry", {"metadata": {"annotations": {REQUEST: '{"id":"r1"}'}}}),
    ],
)
def test_each_verb_is_one_merge_patch(verb: str, patch: dict[str, Any]) -> None:
    assert verb_patch(verb, "r1") == patch


def test_retry_with_flows_names_them_in_the_request() -> None:
    patch = verb_patch("retry", "r2", ["eval", "train"])
    assert json.loads(patch["metadata"]["annotations"][REQUEST]) == {"id": "r2", "flows": ["eval", "train"]}


def test_a_request_id_is_the_utc_time_and_five_random_characters() -> None:
    now = datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.UTC)
    first, second = new_request_id(now), new_request_id(now)
    assert re.fullmatch(r"20260304T050607Z-[0-9a-f]{5}", first)
    assert first != second


@pytest.mark.parametrize(
    ("verb", "shutdown", "flows", "problem"),
    [
        ("retry", None, ["train"], None),
        (
            "retry",
            None,
            ["train", "tarin"],
            'no flow of jobflow.flow.volcano.sh/pipe is named "tarin" (its flows: prep, train, eval)',
        ),
        ("stop", None, [], None),
        ("stop", "Stop", [], None),
        ("terminate", "Stop", [], None),
        ("terminate", "Terminate", [], None),
        (
            "stop",
            "Terminate",
            [],
            "jobflow.flow.volcano.sh/pipe is already shut down with shutdown: Terminate, which cannot be undone",
        ),
        ("suspend", "Terminate", [], None),
    ],
)
def test_what_a_verb_refuses_before_sending(
    verb: str, shutdown: str | None, flows: list[str], problem: str | None
) -> None:
    assert verb_problem(verb, job_flow(shutdown), flows) == problem


@pytest.mark.parametrize(
    ("verb", "flows", "line"),
    [
        ("suspend", [], "jobflow.flow.volcano.sh/pipe suspended"),
        ("resume", [], "jobflow.flow.volcano.sh/pipe resumed"),
        ("stop", [], "jobflow.flow.volcano.sh/pipe stopped"),
        ("terminate", [], "jobflow.flow.volcano.sh/pipe terminated"),
        ("retry", [], "jobflow.flow.volcano.sh/pipe retry requested (id r1: every Failed and Skipped flow)"),
        ("retry", ["train", "eval"], "jobflow.flow.volcano.sh/pipe retry requested (id r1: train, eval)"),
    ],
)
def test_each_verb_says_what_it_did_in_one_line(verb: str, flows: list[str], line: str) -> None:
    assert done_line(verb, "pipe", "r1", flows) == line


class FakeJobFlows:
    def __init__(self, stored: dict[str, Any] | None, patch_error: Exception | None = None) -> None:
        self.stored = stored
        self.patch_error = patch_error
        self.calls: list[tuple[str, Any]] = []

    def job_flows(self, namespace: str | None = None) -> FakeJobFlows:
        self.calls.append(("namespace", namespace))
        return self

    def get(self, name: str) -> dict[str, Any]:
        self.calls.append(("get", name))
        if self.stored is None:
            raise from_status(404, "NotFound", f'jobflows.flow.volcano.sh "{name}" not found')
        return self.stored

    def patch(self, name: str, patch: Any, content_type: str = "application/merge-patch+json") -> dict[str, Any]:
        self.calls.append(("patch", patch))
        if self.patch_error is not None:
            raise self.patch_error
        return {}


def run(argv: list[str], fake: FakeJobFlows) -> str:
    out = io.StringIO()
    assert run_verb(cli._parser().parse_args(argv), fake, "ml", out) == 0  # type: ignore[arg-type]
    return out.getvalue()


def test_a_verb_reads_then_sends_exactly_one_patch() -> None:
    fake = FakeJobFlows(job_flow())
    assert run(["suspend", "pipe", "-n", "ml"], fake) == "jobflow.flow.volcano.sh/pipe suspended\n"
    assert fake.calls == [("namespace", "ml"), ("get", "pipe"), ("patch", {"spec": {"suspend": True}})]


def test_retry_sends_a_fresh_request_for_the_flows_given() -> None:
    fake = FakeJobFlows(job_flow())
    line = run(["retry", "pipe", "--flow", "train", "--flow", "eval"], fake)
    (patch,) = [call[1] for call in fake.calls if call[0] == "patch"]
    request = json.loads(patch["metadata"]["annotations"][REQUEST])
    assert request["flows"] == ["train", "eval"]
    assert line == f"jobflow.flow.volcano.sh/pipe retry requested (id {request['id']}: train, eval)\n"


def test_dry_run_prints_the_patch_and_sends_none() -> None:
    fake = FakeJobFlows(job_flow())
    assert run(["terminate", "pipe", "--dry-run"], fake) == '{"spec":{"shutdown":"Terminate"}}\n'
    assert [call[0] for call in fake.calls] == ["namespace", "get"]


@pytest.mark.parametrize(
    ("fake", "argv", "message"),
    [
        (FakeJobFlows(None), ["resume", "gone"], 'jobflows.flow.volcano.sh "gone" not found in namespace "ml"'),
        (
            FakeJobFlows(job_flow()),
            ["retry", "pipe", "--flow", "x"],
            'no flow of jobflow.flow.volcano.sh/pipe is named "x"',
        ),
        (
            FakeJobFlows(
                job_flow(),
                from_status(403, "Forbidden", 'jobflows.flow.volcano.sh "pipe" is forbidden: User "dev" cannot patch'),
            ),
            ["stop", "pipe"],
            'forbidden: jobflows.flow.volcano.sh "pipe" is forbidden: User "dev" cannot patch',
        ),
    ],
    ids=["not-found", "unknown-flow", "forbidden"],
)
def test_errors_are_one_readable_line(fake: FakeJobFlows, argv: list[str], message: str) -> None:
    with pytest.raises(VerbError) as caught:
        run_verb(cli._parser().parse_args(argv), fake, "ml", io.StringIO())  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)


def test_an_unknown_flow_is_refused_before_anything_is_written() -> None:
    fake = FakeJobFlows(job_flow())
    with pytest.raises(VerbError):
        run_verb(cli._parser().parse_args(["retry", "pipe", "--flow", "x"]), fake, "ml", io.StringIO())  # type: ignore[arg-type]
    assert "patch" not in [call[0] for call in fake.calls]


def test_a_verb_error_ends_the_command_with_status_1_and_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(*_: Any) -> int:
        raise VerbError('jobflows.flow.volcano.sh "gone" not found in namespace "ml"')

    monkeypatch.setattr(cli, "run", refuse)
    assert cli.main(["suspend", "gone"]) == 1
    assert capsys.readouterr().err == 'error: jobflows.flow.volcano.sh "gone" not found in namespace "ml"\n'
