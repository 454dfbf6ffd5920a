"""`kubectl jobflow results NAME [-o json]` (docs/results.md): what it reads from the status, the table
(values on one line, cut), the JSON, and one readable line for a JobFlow that does not exist."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from jobflow_controller.kube.errors import from_status
from kubectl_jobflow import cli
from kubectl_jobflow.results import VALUE_WIDTH, Collected, ResultsError, cell, collect, render_table, run_results

STATUS = {
    "jobStatusList": [
        {"name": "ml-train", "state": "Completed", "results": {"accuracy": "0.93", "model": "s3://m/42"}},
        {"name": "ml-publish", "state": "Completed"},
        {"name": "ml-sweep-0", "state": "Completed", "results": {}},
        {"name": "ml-bad", "results": {"n": 7}},
        "junk",
    ],
    "results": [{"name": "best-model", "value": "s3://m/42"}, {"name": "broken"}],
}


class FakeJobFlows:
    def __init__(self, stored: dict[str, Any] | None) -> None:
        self.stored = stored
        self.calls: list[tuple[str, Any]] = []

    def job_flows(self, namespace: str | None = None) -> FakeJobFlows:
        self.calls.append(("namespace", namespace))
        return self

    def get(self, name: str) -> dict[str, Any]:
        self.calls.append(("get", name))
        if self.stored is None:
            raise from_status(404, "NotFound", f'jobflows.flow.volcano.sh "{name}" not found')
        return self.stored


def run(argv: list[str], fake: FakeJobFlows) -> str:
    out = io.StringIO()
    assert run_results(cli._parser().parse_args(argv), fake, "ml", out) == 0  # type: ignore[arg-type]
    return out.getvalue()


def test_collect_reads_each_jobs_results_and_the_jobflows_own_from_the_status() -> None:
    found = collect({"status": STATUS})
    assert found.jobs == {"ml-train": {"accuracy": "0.93", "model": "s3://m/42"}, "ml-sweep-0": {}, "ml-bad": {}}
    assert found.results == {"best-model": "s3://m/42"}


@pytest.mark.parametrize("job_flow", [{}, {"status": None}, {"status": "x"}, {"status": {"jobStatusList": "x"}}])
def test_collect_of_a_status_without_results_is_empty(job_flow: dict[str, Any]) -> None:
    assert collect(job_flow) == Collected()


def test_the_table_has_a_row_per_value_and_the_jobflows_own_last() -> None:
    assert run(["results", "ml"], FakeJobFlows({"status": STATUS})) == (
        "JOB         NAME         VALUE\n"
        "ml-train    accuracy     0.93\n"
        "ml-train    model        s3://m/42\n"
        "(jobflow)   best-model   s3://m/42\n"
    )


def test_json_is_every_value_whole() -> None:
    long = "v" * 5000
    status = {"jobStatusList": [{"name": "j", "results": {"a": long}}], "results": [{"name": "r", "value": "x"}]}
    out = json.loads(run(["results", "ml", "-o", "json"], FakeJobFlows({"status": status})))
    assert out == {"jobs": {"j": {"a": long}}, "results": {"r": "x"}}


def test_no_results_says_so() -> None:
    assert run(["results", "ml"], FakeJobFlows({"status": {}})) == "No results.\n"
    assert json.loads(run(["results", "ml", "-o", "json"], FakeJobFlows({}))) == {"jobs": {}, "results": {}}


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("0.93", "0.93"),
        ("a\nb", "a\\nb"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("x" * 100, "x" * (VALUE_WIDTH - 1) + "…"),
        ("x" * VALUE_WIDTH, "x" * VALUE_WIDTH),
    ],
)
def test_a_cell_is_one_line_escaped_and_cut(value: str, shown: str) -> None:
    assert cell(value) == shown


def test_a_long_value_is_cut_in_the_table() -> None:
    table = render_table(Collected({"j": {"a": "y" * 500}}))
    assert max(len(line) for line in table.splitlines()) < VALUE_WIDTH + 20


def test_a_jobflow_that_does_not_exist_is_one_readable_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeJobFlows(None)
    with pytest.raises(ResultsError, match=r'^jobflows\.flow\.volcano\.sh "gone" not found in namespace "ml"$'):
        run_results(cli._parser().parse_args(["results", "gone"]), fake, "ml", io.StringIO())  # type: ignore[arg-type]

    def refuse(*_: Any) -> int:
        raise ResultsError('jobflows.flow.volcano.sh "gone" not found in namespace "ml"')

    monkeypatch.setattr(cli, "run", refuse)
    assert cli.main(["results", "gone"]) == 1
    assert capsys.readouterr().err == 'error: jobflows.flow.volcano.sh "gone" not found in namespace "ml"\n'
