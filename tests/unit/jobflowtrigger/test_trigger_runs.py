"""A trigger's runs (jobflowtrigger/runs.py): a firing under each concurrencyPolicy, the history
limits, a taken name, a status conflict; against a recording fake of the API."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from trigger_fakes import NOW, NS, FakeApi, Recorder, child, trigger

from jobflow_controller.jobflowtrigger.runs import FireError, TriggerRuns


def setup(obj: dict[str, Any], children: list[dict[str, Any]] = ()) -> tuple[TriggerRuns, FakeApi, Recorder]:  # type: ignore[assignment]
    api, recorder = FakeApi(), Recorder()
    api.objects["triggers"]["etl"] = obj
    for c in children:
        api.objects["flows"][c["metadata"]["name"]] = c
    runs = TriggerRuns(api, recorder, lambda t: list(api.objects["flows"].values()))  # type: ignore[arg-type]
    return runs, api, recorder


def active_ref(name: str) -> dict[str, str]:
    return {"name": name, "uid": f"uid-{name}", "kind": "JobFlow"}


def test_a_firing_creates_the_run_and_counts_it() -> None:
    runs, api, recorder = setup(trigger())
    name = runs.fire(NS, "etl", [{"name": "d", "value": "x"}], NOW)
    assert name.startswith("etl-") and len(name) == 9 and name[4:].isalpha() and name[4:].islower()
    status = api.objects["triggers"]["etl"]["status"]
    assert (status["triggeredCount"], status["lastTriggerTime"]) == (1, "2026-12-06T08:00:00Z")
    assert [r["name"] for r in status["active"]] == [name]
    assert api.objects["flows"][name]["spec"]["params"] == [{"name": "d", "value": "x"}]
    assert recorder.events == [("Normal", "Triggered", f"Created jobflow {name} (http)")]


@pytest.mark.parametrize(
    ("policy", "fires", "deleted"),
    [
        ("Allow", True, []),
        ("Forbid", False, []),
        ("Replace", True, [("delete", "etl-old", "Foreground", "uid-etl-old")]),
    ],
)
def test_a_firing_with_a_run_active_follows_the_concurrency_policy(
    policy: str, fires: bool, deleted: list[tuple[Any, ...]]
) -> None:
    obj = trigger(concurrencyPolicy=policy)
    obj["status"] = {"active": [active_ref("etl-old")], "triggeredCount": 4}
    runs, api, _ = setup(obj, [child("etl-old", "Running")])
    if fires:
        runs.fire(NS, "etl", [], NOW)
        assert api.objects["triggers"]["etl"]["status"]["triggeredCount"] == 5
    else:
        with pytest.raises(FireError) as err:
            runs.fire(NS, "etl", [], NOW)
        assert err.value.status == 409 and "etl-old is still running" in str(err.value)
    assert [c for c in api.calls if c[0] == "delete"] == deleted
    assert any(c[0] == "create" for c in api.calls) is fires


def test_a_finished_run_no_longer_blocks_forbid() -> None:
    obj = trigger(concurrencyPolicy="Forbid")
    obj["status"] = {"active": [active_ref("etl-old")]}
    runs, api, _ = setup(obj, [child("etl-old", "Succeed")])
    runs.fire(NS, "etl", [], NOW)
    assert [r["name"] for r in api.objects["triggers"]["etl"]["status"]["active"]] != ["etl-old"]


def test_finished_runs_beyond_the_history_limits_are_deleted_oldest_first() -> None:
    obj = trigger(successfulJobFlowsHistoryLimit=1, failedJobFlowsHistoryLimit=0)
    children = [
        child("etl-a", "Succeed", "2026-12-06T01:00:00Z"),
        child("etl-b", "Succeed", "2026-12-06T02:00:00Z"),
        child("etl-c", "Failed", "2026-12-06T03:00:00Z"),
        child("etl-d", "Running", "2026-12-06T04:00:00Z"),
    ]
    runs, api, _ = setup(obj, children)
    runs.sync(NS, "etl", NOW)
    assert [c[1:] for c in api.calls if c[0] == "delete"] == [
        ("etl-a", "Background", "uid-etl-a"),
        ("etl-c", "Background", "uid-etl-c"),
    ]


def test_a_taken_name_is_retried_with_another_suffix() -> None:
    runs, api, _ = setup(trigger())
    api.taken = 2
    name = runs.fire(NS, "etl", [], NOW)
    assert name in api.objects["flows"]


def test_three_taken_names_fail_the_firing() -> None:
    runs, api, _ = setup(trigger())
    api.taken = 3
    with pytest.raises(FireError, match="no free run name"):
        runs.fire(NS, "etl", [], NOW)


def test_a_status_conflict_counts_from_the_fresh_object() -> None:
    runs, api, _ = setup(trigger())
    api.conflicts = 1
    runs.fire(NS, "etl", [], NOW)
    assert api.objects["triggers"]["etl"]["status"]["triggeredCount"] == 1


def test_a_trigger_that_is_gone_fires_nothing() -> None:
    runs, api, _ = setup(trigger())
    del api.objects["triggers"]["etl"]
    with pytest.raises(FireError) as err:
        runs.fire(NS, "etl", [], NOW)
    assert err.value.status == 404 and api.calls == []
