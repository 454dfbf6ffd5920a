"""The CronJobFlows section of `kubectl jobflow ui` (kubectl_jobflow/ui/cron.py): next run and links."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cronjobflow"))

from cron_fakes import at, cron_job_flow, run

from informers.errors import ApiStatusError, NotFoundError
from kubectl_jobflow.ui.cron import CronList, cron_row, next_run

NOW = at("2026-12-05T00:00:30")


def test_the_next_run_is_the_controllers_next_time_in_utc() -> None:
    assert next_run(cron_job_flow(schedule="0 2 * * *", timeZone="Europe/Berlin"), NOW) == ("2026-12-05T01:00:00Z", "")


def test_a_suspended_or_invalid_cronjobflow_has_no_next_run_and_says_why() -> None:
    assert next_run(cron_job_flow(suspend=True), NOW) == (None, "suspended")
    assert next_run(cron_job_flow(schedule="61 * * * *"), NOW) == (None, "Bad minute")
    assert next_run(cron_job_flow(timeZone="Mars/Olympus"), NOW) == (None, "unknown time zone Mars/Olympus")


def test_the_row_links_its_own_runs_newest_first() -> None:
    mine = [
        run("nightly-1", created="2026-12-05T00:01:00Z"),
        run("nightly-2", phase="Succeed", created="2026-12-05T00:02:00Z"),
    ]
    others = [run("nightly-3", owner_uid="another"), run("stray", owner_uid="")]
    row = cron_row(cron_job_flow(status={"active": [{"name": "nightly-1"}]}), [*mine, *others], NOW)
    assert row["runs"] == [{"name": "nightly-2", "phase": "Succeed"}, {"name": "nightly-1", "phase": "Running"}]
    assert (row["key"], row["schedule"], row["next"], row["active"]) == (
        "default/nightly",
        "* * * * *",
        "2026-12-05T00:01:00Z",
        ["nightly-1"],
    )


class FakeCronClient:
    def __init__(self, answer: Any) -> None:
        self.answer, self.lists = answer, 0

    def cron_job_flows(self, namespace: str | None) -> FakeCronClient:
        return self

    def list(self) -> list[Any]:
        self.lists += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return list(self.answer)


def test_the_list_is_cached_for_a_few_seconds() -> None:
    client, ticks = FakeCronClient([cron_job_flow()]), [0.0]
    cron = CronList(client, None, lambda: [], clock=lambda: ticks[0], now=lambda: NOW)  # type: ignore[arg-type]
    assert [r["name"] for r in cron.snapshot()["rows"]] == ["nightly"]
    cron.snapshot()
    ticks[0] = 6.0
    cron.snapshot()
    assert client.lists == 2


def test_without_the_crd_the_section_is_empty_with_a_note() -> None:
    cron = CronList(
        FakeCronClient(NotFoundError("the server could not find the requested resource")),
        None,
        lambda: [],
        now=lambda: NOW,
    )  # type: ignore[arg-type]
    assert cron.snapshot() == {
        "rows": [],
        "note": "the CronJobFlow CRD is not installed",
        "now": "2026-12-05T00:00:30Z",
    }


def test_a_forbidden_list_says_so() -> None:
    err = ApiStatusError(403, "Forbidden", 'cronjobflows.flow.volcano.sh is forbidden: User "u" cannot list')
    cron = CronList(FakeCronClient(err), "team", lambda: [], now=lambda: NOW)  # type: ignore[arg-type]
    assert (
        cron.snapshot()["note"]
        == 'cannot list CronJobFlows: cronjobflows.flow.volcano.sh is forbidden: User "u" cannot list'
    )
