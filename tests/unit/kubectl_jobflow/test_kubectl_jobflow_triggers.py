"""`kubectl jobflow triggers` and the web view's JobFlowTriggers section: one row per trigger, its
source, its count, and the runs it controls now, newest first."""

from __future__ import annotations

from typing import Any

from informers.errors import NotFoundError
from kubectl_jobflow.triggers import render_table, rows
from kubectl_jobflow.ui.triggers_view import TriggerList

UID = "t-uid"


def trigger(name: str = "etl", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "team", "uid": UID},
        "spec": {"jobFlowTemplateRef": {"name": "tpl"}, **spec},
        "status": {"triggeredCount": 2, "lastTriggerTime": "2026-12-06T08:00:00Z"},
    }


def run(name: str, created: str, *, owner: str = UID, by: str = "etl", phase: str = "Running") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "team",
            "creationTimestamp": created,
            "annotations": {"flow.volcano.sh/triggered-by": by},
            "ownerReferences": [{"kind": "JobFlowTrigger", "name": "etl", "uid": owner, "controller": True}],
        },
        "status": {"state": {"phase": phase}},
    }


def test_a_row_shows_the_source_the_count_and_its_own_runs_newest_first() -> None:
    flows = [
        run("etl-aaaaa", "2026-12-06T07:00:00Z", phase="Succeed"),
        run("etl-bbbbb", "2026-12-06T08:00:00Z"),
        run("etl-ccccc", "2026-12-06T08:00:00Z", owner="other"),
        run("etl-ddddd", "2026-12-06T08:00:00Z", by="someone"),
    ]
    (row,) = rows([trigger(http={})], flows)
    assert (row["source"], row["triggered"], row["lastTriggerTime"]) == ("http", 2, "2026-12-06T08:00:00Z")
    assert row["runs"] == [{"name": "etl-bbbbb", "phase": "Running"}, {"name": "etl-aaaaa", "phase": "Succeed"}]


def test_a_resource_triggers_source_is_its_kind_and_events() -> None:
    (row,) = rows([trigger(resource={"apiVersion": "v1", "kind": "ConfigMap", "events": ["update"]})], [])
    assert row["source"] == "ConfigMap (update)"


def test_the_table_escapes_tenant_text_and_says_when_there_is_none() -> None:
    assert render_table([]) == "No JobFlowTriggers found.\n"
    text = render_table(rows([trigger(name="bad\x1b[31m", http={})], []))
    assert "\x1b" not in text and "<none>" in text and text.startswith("NAMESPACE")


class FakeClient:
    def __init__(self, answer: Any) -> None:
        self.answer, self.lists = answer, 0

    def job_flow_triggers(self, namespace: str | None) -> FakeClient:
        return self

    def list(self) -> list[Any]:
        self.lists += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return list(self.answer)


def test_the_web_views_list_is_cached_and_a_missing_crd_is_a_note() -> None:
    client, ticks = FakeClient([trigger(http={})]), [0.0]
    view = TriggerList(client, None, lambda: [], clock=lambda: ticks[0])  # type: ignore[arg-type]
    assert len(view.snapshot()["rows"]) == 1
    view.snapshot()
    assert client.lists == 1
    missing = TriggerList(FakeClient(NotFoundError("no")), None, lambda: [])  # type: ignore[arg-type]
    assert missing.snapshot() == {"rows": [], "note": "the JobFlowTrigger CRD is not installed"}
