"""`kubectl jobflow create --from=cronjobflow/NAME [JOBFLOW]` (kubectl_jobflow/create.py)."""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cronjobflow"))

import pytest
from cron_fakes import FakeClientset, FakeServer, cron_job_flow, run

from kubectl_jobflow.create import CreateError, default_name, run_create, source_name


def args(source: str, name: str | None = None, dry_run: bool = False) -> argparse.Namespace:
    return argparse.Namespace(source=source, name=name, dry_run=dry_run)


def setup() -> tuple[FakeClientset, FakeServer]:
    server = FakeServer()
    server.put("cronjobflows", cron_job_flow())
    return FakeClientset(server), server


@pytest.mark.parametrize(
    "source", ["cronjobflow/nightly", "cronjobflows/nightly", "cjf/nightly", "CronJobFlow/nightly"]
)
def test_from_names_the_cronjobflow_as_kubectl_does(source: str) -> None:
    assert source_name(source) == "nightly"


@pytest.mark.parametrize("source", ["nightly", "cronjob/nightly", "jobflow/nightly", "cronjobflow/"])
def test_from_other_than_a_cronjobflow_is_refused_in_one_line(source: str) -> None:
    with pytest.raises(CreateError, match="--from must be cronjobflow/NAME"):
        source_name(source)


def test_create_makes_the_template_with_the_manual_annotation_and_owner() -> None:
    clientset, server = setup()
    out = io.StringIO()
    assert run_create(args("cronjobflow/nightly", "by-hand"), clientset, "default", out) == 0  # type: ignore[arg-type]
    assert out.getvalue() == "jobflow.flow.volcano.sh/by-hand created\n"
    (create,) = [c for c in server.calls if c.verb == "create"]
    md: dict[str, Any] = create.body["metadata"]
    assert md["annotations"] == {"a": "b", "flow.volcano.sh/created-by-manual-trigger": "true"}
    assert md["labels"] == {"team": "data"}
    assert [(o["kind"], o["name"], o["controller"]) for o in md["ownerReferences"]] == [
        ("CronJobFlow", "nightly", True)
    ]
    assert create.body["spec"] == {"flows": [{"name": "extract"}]}


def test_the_default_name_is_the_cronjobflows_with_manual_and_five_characters() -> None:
    name = default_name("nightly")
    assert name.startswith("nightly-manual-") and len(name) == len("nightly-manual-") + 5


def test_dry_run_prints_the_jobflow_and_creates_nothing() -> None:
    clientset, server = setup()
    out = io.StringIO()
    run_create(args("cjf/nightly", "x", dry_run=True), clientset, "default", out)  # type: ignore[arg-type]
    assert json.loads(out.getvalue())["metadata"]["name"] == "x"
    assert [c.verb for c in server.calls] == ["get"]


def test_a_missing_cronjobflow_or_a_taken_name_is_one_line() -> None:
    clientset, server = setup()
    with pytest.raises(
        CreateError, match=re.escape('cronjobflows.flow.volcano.sh "other" not found in namespace "default"')
    ):
        run_create(args("cronjobflow/other"), clientset, "default", io.StringIO())  # type: ignore[arg-type]
    server.put("jobflows", run("taken"))
    with pytest.raises(CreateError, match=re.escape('jobflows.flow.volcano.sh "taken" already exists')):
        run_create(args("cronjobflow/nightly", "taken"), clientset, "default", io.StringIO())  # type: ignore[arg-type]


# --- a manual run's Job names stay within 63 characters (issue 42, item 5) -----------------------------

LONG = "n" * 40  # + "-manual-xxxxx" (13) + "-" + flow > 63 with a 10-character flow; "-m" + 7 fits


def _long_setup(flow: str) -> tuple[FakeClientset, FakeServer]:
    server = FakeServer()
    obj = cron_job_flow(LONG)
    obj["spec"]["jobFlowTemplate"]["spec"] = {"flows": [{"name": flow}]}
    server.put("cronjobflows", obj)
    return FakeClientset(server), server


def test_a_default_name_too_long_for_the_job_names_is_shortened_to_a_scheduled_runs_length() -> None:
    clientset, server = _long_setup("f" * 12)  # 40 + 9 + 1 + 12 = 62: a scheduled run's Jobs fit
    run_create(args(f"cjf/{LONG}"), clientset, "default", io.StringIO())  # type: ignore[arg-type]
    (create,) = [c for c in server.calls if c.verb == "create"]
    name = create.body["metadata"]["name"]
    assert re.fullmatch(rf"{LONG}-m[a-z0-9]{{7}}", name)
    assert len(f"{name}-{'f' * 12}") <= 63


def test_a_default_name_that_fits_keeps_the_manual_form() -> None:
    clientset, server = _long_setup("f")
    run_create(args(f"cjf/{LONG}"), clientset, "default", io.StringIO())  # type: ignore[arg-type]
    (create,) = [c for c in server.calls if c.verb == "create"]
    assert create.body["metadata"]["name"].startswith(f"{LONG}-manual-")


def test_a_given_name_making_a_job_name_over_63_is_refused_with_the_rules_message() -> None:
    clientset, server = _long_setup("train")
    given = "g" * 60
    with pytest.raises(CreateError) as err:
        run_create(args(f"cjf/{LONG}", given), clientset, "default", io.StringIO())  # type: ignore[arg-type]
    assert str(err.value).startswith(f'jobflow "{given}" would be refused: ')
    assert f'Job name "{given}-train" is 66 characters long, it must be at most 63' in str(err.value)
    assert [c.verb for c in server.calls] == ["get"]


def test_a_template_no_name_can_fit_is_refused_not_created() -> None:
    clientset, server = _long_setup("f" * 30)
    with pytest.raises(CreateError, match=r"would be refused: .*must be at most 63"):
        run_create(args(f"cjf/{LONG}"), clientset, "default", io.StringIO())  # type: ignore[arg-type]
    assert [c.verb for c in server.calls] == ["get"]
