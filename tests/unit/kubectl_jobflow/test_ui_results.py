"""`kubectl jobflow ui` and results (docs/results.md): each flow's results on its node (cut to a width,
control characters escaped), every Job's in its panel (each Job of a matrix flow), the JobFlow's own
`status.results`, and taller boxes only for a JobFlow that declares results. The browser's HTML
escaping and the 4 KiB value's layout are tests/e2e/test_e2e_ui_results.py's."""

from __future__ import annotations

import json
from typing import Any

from test_ui_documents import NOW, job, job_flow, no_events

from kubectl_jobflow.ui import results_view
from kubectl_jobflow.ui.detail import layout_json, page, shape
from kubectl_jobflow.ui.layout import layout

TRAIN = [
    {"name": "train", "results": {"names": ["acc", "model"]}},
    {"name": "use", "dependsOn": {"targets": ["train"]}},
]


def page_of(obj: dict[str, Any], jobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    found = shape(obj)
    drawing = layout_json(layout(found.flows, dict(found.targets), found.finally_flows), obj)
    return page(obj, jobs or [], no_events, drawing, {}, NOW)


def node_of(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in doc["nodes"] if n["name"] == name)


def entry(name: str, results: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "state": "Completed"}
    if results is not None:
        out["results"] = results
    return out


def test_a_flows_results_are_on_its_node_and_in_its_panel() -> None:
    obj = job_flow(TRAIN, jobStatusList=[entry("p-train", {"acc": "0.93", "model": "s3://m/42"})])
    doc = page_of(obj, [job("p-train", "Completed")])
    train = node_of(doc, "train")
    assert train["results"] == "acc=0.93 model=s3://m/42"
    assert train["record"]["results"] == [{"job": "p-train", "results": [["acc", "0.93"], ["model", "s3://m/42"]]}]
    assert node_of(doc, "use")["results"] == "" and node_of(doc, "use")["record"]["results"] == []


def test_the_node_line_is_cut_to_its_width_and_escaped() -> None:
    value = "line1\nline2\x1b[31m" + "x" * 100
    obj = job_flow(TRAIN, jobStatusList=[entry("p-train", {"acc": value})])
    line = node_of(page_of(obj), "train")["results"]
    assert len(line) == results_view.NODE_WIDTH and line.endswith("…")
    assert line.startswith("acc=line1\\nline2\\x1b")
    assert all(ch.isprintable() for ch in line)


def test_a_4_kib_value_is_whole_in_the_panel_and_escaped_on_one_line() -> None:
    value = "<img src=x onerror=alert(1)>" + "y" * (4096 - 28)
    obj = job_flow(TRAIN, jobStatusList=[entry("p-train", {"acc": value, "model": "a\nb"})])
    (job_results,) = node_of(page_of(obj), "train")["record"]["results"]
    # the page's script escapes HTML; the server keeps the text and escapes control characters only
    assert job_results["results"] == [["acc", value], ["model", "a\\nb"]]


def test_a_matrix_flows_panel_lists_every_jobs_results_in_index_order() -> None:
    flows = [
        {"name": "sweep", "matrix": {"params": [{"name": "x", "values": ["1", "2"]}]}, "results": {"names": ["loss"]}}
    ]
    entries = [entry("p-sweep-1", {"loss": "0.2"}), entry("p-sweep-0", {"loss": "0.1"})]
    doc = page_of(job_flow(flows, jobStatusList=entries))
    sweep = node_of(doc, "sweep")
    assert sweep["results"] == "loss=[0.1,0.2]"
    assert [r["job"] for r in sweep["record"]["results"]] == ["p-sweep-0", "p-sweep-1"]
    assert sweep["record"]["results"][1]["results"] == [["loss", "0.2"]]


def test_a_job_read_with_nothing_valid_is_listed_empty() -> None:
    doc = page_of(job_flow(TRAIN, jobStatusList=[entry("p-train", {})]))
    assert node_of(doc, "train")["record"]["results"] == [{"job": "p-train", "results": []}]


def test_the_jobflows_own_results_are_on_the_page() -> None:
    own = [{"name": "best", "value": "s3://m/42"}, {"name": "bad", "value": 5}, {"name": "ctl", "value": "a\tb"}]
    doc = page_of(job_flow(TRAIN, phase="Succeed", results=own))
    assert doc["results"] == [{"name": "best", "value": "s3://m/42"}, {"name": "ctl", "value": "a\\tb"}]


def test_only_a_jobflow_that_declares_results_gets_the_taller_boxes() -> None:
    plain = job_flow([{"name": "a"}])
    assert not shape(plain).results
    assert page_of(plain)["drawing"]["nodeHeight"] == 40
    assert page_of(plain)["results"] == [] and node_of(page_of(plain), "a")["results"] == ""
    assert shape(job_flow(TRAIN)).results
    assert page_of(job_flow(TRAIN))["drawing"]["nodeHeight"] == results_view.RESULTS_GEOMETRY.node_height
    own_only = job_flow([{"name": "a"}], spec={"results": [{"name": "r", "value": "x"}]})
    assert results_view.declares_results(own_only)
    finally_only = job_flow([{"name": "a"}], spec={"finally": [{"name": "z", "results": {"names": ["r"]}}]})
    assert results_view.declares_results(finally_only)


def test_the_page_of_a_jobflow_at_the_results_budget_stays_small() -> None:
    """64 KiB of results (the per-JobFlow budget) and 16 own results of 4 KiB: the page stays within a few
    hundred KiB (results are sent once per Job's panel and once on the page)."""
    names = [f"r{i}" for i in range(16)]
    flows = [{"name": "train", "results": {"names": names}}]
    big = {n: "v" * 4000 for n in names}
    own = [{"name": n, "value": "w" * 4096} for n in names]
    doc = page_of(job_flow(flows, phase="Succeed", jobStatusList=[entry("p-train", big)], results=own))
    assert len(node_of(doc, "train")["results"]) == results_view.NODE_WIDTH
    assert len(json.dumps(doc)) < 200_000
