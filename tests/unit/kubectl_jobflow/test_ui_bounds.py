"""`kubectl jobflow ui` under a hostile cluster (issue 33): a layout computed once per shape, a page
of bounded size whatever the JobFlow and its events, a change log that forgets, and caches that
hold only what the pages show."""

from __future__ import annotations

import datetime
import json
import threading
import time
from typing import Any

import pytest
from test_ui_documents import job_flow
from test_ui_layout import adversarial_flows
from test_ui_server import TOKEN, FakeBackend, FakeCache, RecordedApi, open_stream, read_event

from kubectl_jobflow.ui import backend as backend_module
from kubectl_jobflow.ui import cache as cache_module
from kubectl_jobflow.ui.backend import Backend
from kubectl_jobflow.ui.cache import ChangeLog, LiveCache
from kubectl_jobflow.ui.detail import MAX_EVENTS, MAX_MESSAGE, event_rows, layout_json, page, shape
from kubectl_jobflow.ui.layout import Layout, layout
from kubectl_jobflow.ui.server import UIServer

NOW = datetime.datetime(2026, 1, 1, 0, 10, 0, tzinfo=datetime.UTC)


def adversarial_job_flow(count: int = 500) -> dict[str, Any]:
    names, targets = adversarial_flows(count)
    flows = [{"name": n, **({"dependsOn": {"targets": targets[n]}} if n in targets else {})} for n in names]
    return job_flow(flows)


# -- the layout, once per shape ----------------------------------------------------------------
def test_tabs_asking_for_a_shape_being_laid_out_wait_for_it_rather_than_lay_it_out_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []

    def slow_layout(*args: Any) -> Layout:
        calls.append(1)
        time.sleep(0.3)
        return layout(*args)

    monkeypatch.setattr(backend_module, "layout", slow_layout)
    doc = job_flow([{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}])
    ui = Backend(FakeCache(doc), RecordedApi())  # type: ignore[arg-type]
    threads = [threading.Thread(target=ui.page, args=("ns/p",)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1


def test_the_adversarial_jobflows_page_is_laid_out_once_and_stays_small() -> None:
    doc = adversarial_job_flow()
    ui = Backend(FakeCache(doc), RecordedApi())  # type: ignore[arg-type]
    started = time.perf_counter()
    first = ui.page("ns/p")
    assert first is not None and time.perf_counter() - started < 10.0  # ~0.3 s idle; generous
    assert first["drawing"]["mode"] == "straight" and first["drawing"]["omittedEdges"] > 0
    assert len(first["nodes"]) == 500 and len(first["drawing"]["boxes"]) == 500
    assert len(json.dumps(first)) < 4 * 2**20
    assert ui.page("ns/p") is not None and len(ui._layouts) == 1


# -- the page's size ---------------------------------------------------------------------------
def test_a_page_bounds_the_events_and_texts_it_carries_whatever_the_cluster_holds() -> None:
    flows = [{"name": f"f{i:03d}"} for i in range(500)]
    doc = job_flow(flows)
    event = {"type": "Warning", "reason": "R" * 10_000, "message": "m" * 100_000, "count": 3}

    def many(kind: str, namespace: str, name: str) -> list[dict[str, Any]]:
        return [{**event, "lastTimestamp": f"2026-01-01T00:00:{i % 60:02d}Z"} for i in range(200)]

    drawing = layout_json(layout([f["name"] for f in flows], {}), doc)
    result = page(doc, [], many, drawing, {}, NOW)
    assert len(result["events"]) == MAX_EVENTS
    assert all(len(e["message"]) == MAX_MESSAGE for e in result["events"])
    per_job = {len(n["record"]["events"]) for n in result["nodes"]}
    assert per_job == {4}  # 2,000 Job events over 500 Jobs
    assert len(json.dumps(result)) < 8 * 2**20


@pytest.mark.parametrize("count", ["7", -3, None, True, 2.5, {"x": 1}])
def test_an_events_count_that_is_not_a_positive_integer_reads_as_one(count: Any) -> None:
    assert event_rows([{"reason": "R", "count": count}])[0]["count"] == 1


def test_the_shape_of_the_adversarial_jobflow_is_its_flows_and_targets() -> None:
    found = shape(adversarial_job_flow(120))
    assert len(found.flows) == 120 and dict(found.targets)["f119"][-1] == "f118"


# -- the change log ----------------------------------------------------------------------------
def test_the_change_log_forgets_past_its_count_and_says_so_to_a_reader_further_behind() -> None:
    log = ChangeLog(max_keys=3, max_age=1000.0)
    start = log.version
    log.touch(["ns/a"])
    after_a = log.version
    for key in ("ns/b", "ns/c", "ns/d"):
        log.touch([key])
    assert len(log) == 3
    assert log.changed_since(start) is None  # ns/a was forgotten: everything, maybe
    assert log.changed_since(after_a) == {"ns/b", "ns/c", "ns/d"}


def test_the_change_log_forgets_past_its_age() -> None:
    now = [0.0]
    log = ChangeLog(max_keys=100, max_age=60.0, clock=lambda: now[0])
    start = log.version
    log.touch(["ns/a"])
    seen = log.version
    now[0] = 61.0
    log.touch(["ns/b"])
    assert len(log) == 1
    assert log.changed_since(start) is None
    assert log.changed_since(seen) == {"ns/b"}


def test_a_key_changed_again_is_remembered_at_its_newest_version() -> None:
    log = ChangeLog(max_keys=2, max_age=1000.0)
    log.touch(["ns/a"])
    log.touch(["ns/b"])
    log.touch(["ns/a"])
    middle = log.version
    log.touch(["ns/c"])  # ns/b goes, ns/a stays
    assert log.changed_since(middle) == {"ns/c"}
    assert log.changed_since(middle - 1) == {"ns/a", "ns/c"}


def test_twenty_thousand_changes_of_distinct_keys_keep_the_log_at_its_cap() -> None:
    log = ChangeLog()
    for i in range(20_000):
        log.touch([f"ns/{i}"])
    assert len(log) == cache_module.CHANGE_LOG_KEYS


def test_a_stream_that_fell_behind_what_the_log_remembers_gets_a_snapshot_again() -> None:
    fake = FakeBackend()
    fake.cache.changes = ChangeLog(max_keys=1, max_age=1000.0)
    ui = UIServer(fake, token=TOKEN)  # type: ignore[arg-type]
    ui.start()
    conn, response = open_stream(ui, "/api/stream/list")
    try:
        assert read_event(response)[0] == "snapshot"
        fake.cache.changes.touch(["ns/a"])
        fake.cache.changes.touch(["ns/b"])  # in one coalescing window: ns/a is forgotten by then
        assert read_event(response) == ("snapshot", {"scope": "", "rows": [{"key": "ns/p"}]})
    finally:
        conn.close()
        ui.shutdown()


# -- what the caches hold ----------------------------------------------------------------------
class RecordedListerWatcher:
    made: list[tuple[str, str | None, str | None, str | None]] = []

    def __init__(self, rest: Any, resource: Any, namespace: str | None, **selectors: str | None) -> None:
        self.made.append((resource.plural, namespace, selectors["label_selector"], selectors["field_selector"]))


@pytest.mark.parametrize("namespace", [None, "team"])
def test_the_caches_ask_the_api_server_only_for_what_the_pages_show(
    monkeypatch: pytest.MonkeyPatch, namespace: str | None
) -> None:
    RecordedListerWatcher.made = []
    monkeypatch.setattr(cache_module, "ResourceListerWatcher", RecordedListerWatcher)

    class Clientset:
        rest = None

    LiveCache(Clientset(), namespace)  # type: ignore[arg-type]
    assert sorted(RecordedListerWatcher.made) == [
        ("events", namespace, None, "involvedObject.kind=Job,involvedObject.apiVersion=batch.volcano.sh/v1alpha1"),
        ("events", namespace, None, "involvedObject.kind=JobFlow"),
        ("jobflows", namespace, None, None),
        ("jobs", namespace, "volcano.sh/createdByJobFlow", None),
    ]
