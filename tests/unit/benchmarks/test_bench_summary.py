"""bench/summary.py: the table `make bench` prints after the benchmarks' JSON documents."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "bench_summary", Path(__file__).resolve().parents[3] / "bench" / "summary.py"
)
assert _SPEC is not None and _SPEC.loader is not None
summary = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_summary"] = summary  # dataclasses look their module up by name
_SPEC.loader.exec_module(summary)
rows, main = summary.rows, summary.main


def _write(directory: Path, name: str, doc: object, rc: int = 0) -> None:
    (directory / f"{name}.json").write_text(json.dumps(doc) if doc is not None else "")
    (directory / f"{name}.rc").write_text(f"{rc}\n")


def _run(workers: int, writes: float, seconds: float, p99: float, conflicts: int = 0) -> dict[str, object]:
    return {
        "worker_threads": workers,
        "seconds_until_all_succeed": seconds,
        "api_requests_per_jobflow": {"by_verb": {"GET": 0.5, "POST": writes - 3.0, "PUT": 3.0}},
        "conflicts": {"controller_status_writes": conflicts},
        "latency": {"dependency_completed_to_dependent_added": {"p99_ms": p99}},
    }


def _row(table: list[tuple[str, str, str, str, str]], label: str) -> tuple[str, str, str, str, str]:
    return next(r for r in table if r[1] == label)


def test_a_figure_within_its_target_passes_and_one_beyond_it_fails(tmp_path: Path) -> None:
    _write(tmp_path, "e2e_flows", {"runs": [_run(1, 9.5, 40.0, 200.0), _run(3, 10.5, 41.0, 300.0)]})
    table = rows(tmp_path)
    assert _row(table, "API writes per JobFlow, 1 worker")[2:] == ("9.5", "<= 10", "pass")
    assert _row(table, "API writes per JobFlow, 3 workers")[2:] == ("10.5", "<= 10", "FAIL")
    assert _row(table, "reaction p99, fast flags, 3 workers")[4] == "FAIL"


def test_three_workers_are_held_to_the_one_worker_time(tmp_path: Path) -> None:
    _write(tmp_path, "e2e_flows", {"runs": [_run(1, 9.0, 40.0, 200.0), _run(3, 9.0, 41.0, 200.0)]})
    assert _row(rows(tmp_path), "all 300 Succeed, 3 workers")[2:] == ("41 s", "<= 1 worker", "FAIL")


def test_a_failed_benchmark_is_one_fail_row_and_the_others_still_report(tmp_path: Path) -> None:
    _write(tmp_path, "informers", None, rc=1)
    _write(tmp_path, "chaos", {"flows_stranded_total": 0, "duplicate_job_creations_total": 0})
    table = rows(tmp_path)
    assert ("informers", "the benchmark itself", "exit status 1", "exit 0", "FAIL") in table
    assert not any(r[0] == "informers" and r[1] != "the benchmark itself" for r in table)
    assert _row(table, "JobFlows stranded, all faults")[4] == "pass"


def test_a_figure_the_document_lacks_shows_n_a(tmp_path: Path) -> None:
    _write(tmp_path, "e2e_flows", {"runs": []})
    assert _row(rows(tmp_path), "API writes per JobFlow, 1 worker")[2] == "n/a"


def test_a_benchmark_that_was_not_run_has_no_rows(tmp_path: Path) -> None:
    assert rows(tmp_path) == []


def test_main_prints_the_table_and_exits_0_even_when_a_target_is_missed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "e2e_flows", {"runs": [_run(1, 19.0, 40.0, 200.0)]})
    assert main(["summary.py", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "API writes per JobFlow, 1 worker" in out and "FAIL" in out


def test_the_informer_rows_are_the_products_informer_not_its_comparisons(tmp_path: Path) -> None:
    summary_doc = {
        "rss_bytes_per_object": {"strip_managed_fields": 21504, "product": 2404},
        "initial_sync_seconds": {"strip_managed_fields": 4.4, "product": 1.9},
        "targets": {"peak_over_steady_rss": {"value": 1.0}},
    }
    _write(tmp_path, "informers", {"summary": summary_doc})
    table = rows(tmp_path)
    assert _row(table, "RSS per cached Job")[2:] == ("2.35 KiB", "<= 8 KiB", "pass")
    assert _row(table, "peak / steady RSS during the initial sync")[4] == "pass"
    assert _row(table, "initial sync of 10,000 Jobs")[2:] == ("1.9 s", "<= 2 s", "pass")


def test_one_workers_reaction_latency_is_context_not_a_target(tmp_path: Path) -> None:
    _write(tmp_path, "e2e_flows", {"runs": [_run(1, 9.0, 40.0, 400.0), _run(3, 9.0, 39.0, 150.0)]})
    table = rows(tmp_path)
    assert _row(table, "reaction p99, fast flags, 1 worker")[3:] == ("", "")
    assert _row(table, "reaction p99, fast flags, 3 workers")[4] == "pass"


def test_the_hostile_rows_hold_each_scenario_to_its_targets(tmp_path: Path) -> None:
    def scenario(rss: float, succeeded: int, wait_p99: float, slowest: float = 1.2) -> dict[str, object]:
        return {
            "controller": {"peak_rss_mib": rss},
            "bystanders": {
                "succeeded": succeeded,
                "reaction_delay": {"p99_ms": 40.0},
                "waiting_for_the_controller_s": {"p99": wait_p99},
                "first_create_to_succeed_s_max": slowest,
            },
        }

    doc = {
        "scenarios": {
            "baseline": scenario(62.0, 10, 0.1),
            "webhook_attack": scenario(151.0, 10, 0.2),
            "retry_storm": scenario(80.0, 9, 1.5, slowest=3.4) | {"retries_done": 500},
            "flow_cap": {"skipped": "no time"},
        },
        "summary": {"longest_sync_sampled_s": 0.4},
    }
    _write(tmp_path, "hostile", doc)
    table = rows(tmp_path)
    assert _row(table, "baseline: controller peak RSS")[2:] == ("62 MiB", "<= 150 MiB", "pass")
    assert _row(table, "webhook attack: controller peak RSS")[4] == "FAIL"
    assert _row(table, "retry storm: bystanders Succeed")[4] == "FAIL"
    assert _row(table, "retry storm: bystander waiting for the controller p99")[4] == "FAIL"
    assert _row(table, "retry storm: slowest bystander, create to Succeed")[4] == "FAIL"
    assert _row(table, "baseline: bystander waiting for the controller p99")[3:] == ("<= 1 s", "pass")
    assert _row(table, "baseline: bystander reaction p99")[3:] == ("", "")
    assert _row(table, "retry storm: retries in the window")[2] == "500"
    assert _row(table, "flow cap: controller peak RSS")[2] == "n/a"


def test_first_job_latency_and_cpu_per_jobflow_are_held_to_issue_25s_targets(tmp_path: Path) -> None:
    fast = _run(3, 9.0, 20.0, 200.0)
    fast["latency"]["jobflow_added_to_first_job_added"] = {"p50_ms": 900.0, "p99_ms": 2500.0}  # type: ignore[index]
    fast.update(jobflows=300, controller={"cpu_seconds_run": 3.9})
    default = _run(3, 9.0, 60.0, 800.0)
    default["latency"]["jobflow_added_to_first_job_added"] = {"p50_ms": 4000.0, "p99_ms": 9000.0}  # type: ignore[index]
    _write(tmp_path, "e2e_flows", {"runs": [fast]})
    _write(tmp_path, "e2e_flows_default_qps", {"runs": [default]})
    table = rows(tmp_path)
    assert _row(table, "first Job p99, fast flags, 3 workers")[2:] == ("2500 ms", "<= 2000 ms", "FAIL")
    assert _row(table, "first Job p50, fast flags, 3 workers")[3:] == ("", "")
    assert _row(table, "controller CPU per JobFlow, 3 workers")[2:] == ("13 ms", "<= 14 ms", "pass")
    assert _row(table, "first Job p99, default flags, 3 workers")[2:] == ("9000 ms", "<= 10000 ms", "pass")


def test_the_soak_fails_on_a_stuck_jobflow_or_a_memory_not_back_at_baseline(tmp_path: Path) -> None:
    doc = {
        "max_jobflows_stuck": 1,
        "memories_back_at_baseline": {"own_writes": True, "deleted_jobs": False},
        "rss_growth_minute_10_to_end_pct": 2.5,
    }
    _write(tmp_path, "soak", doc)
    table = rows(tmp_path)
    assert _row(table, "JobFlows stuck (max of the rows)")[4] == "FAIL"
    assert _row(table, "memories not back at baseline after the drain")[2:] == ("1", "<= 0", "FAIL")
    assert _row(table, "RSS growth, minute 10 to the end")[4] == "pass"


def test_issue_38s_targets_peak_rss_soak_growth_and_the_web_view(tmp_path: Path) -> None:
    run = _run(3, 9.0, 20.0, 100.0) | {"controller": {"peak_rss_mib": 63.5}}
    _write(tmp_path, "e2e_flows", {"runs": [run]})
    _write(tmp_path, "soak", {"rss_growth_minute_10_to_end_pct": 2.9, "rss_growth_minute_30_to_end_pct": 1.2})
    figures = {
        "list_first_paint_ms": {"median": 800.0},
        "page_from_list_ms": {"median": 90.0},
        "page_fresh_load_ms": {"median": 1200.0},
        "update_to_page_ms": {"median": 200.0},
    }
    _write(tmp_path, "ui_scale", {"figures": figures, "ui_process": {"peak_rss_mib": 80.0}})
    table = rows(tmp_path)
    assert _row(table, "controller peak RSS, 3 workers")[2:] == ("63.5 MiB", "<= 63 MiB", "FAIL")
    assert _row(table, "RSS growth, minute 10 to the end")[2:] == ("2.9 %", "<= 3 %", "pass")
    assert _row(table, "RSS growth, minute 30 to the end")[2:] == ("1.2 %", "<= 1 %", "FAIL")
    assert _row(table, "list of 1,000: first paint")[2:] == ("800 ms", "<= 1000 ms", "pass")
    assert _row(table, "a JobFlow's page, fresh load")[4] == "FAIL"
    assert _row(table, "a Job's update on the open page")[4] == "pass"
    assert _row(table, "a JobFlow's update on the open list")[2] == "n/a"
    assert _row(table, "UI process peak RSS")[2] == "80 MiB"


def test_versus_is_judged_on_its_ratios_and_reads_not_applicable_without_the_other_build(tmp_path: Path) -> None:
    quiet = {"ours_over_other": {"cpu_seconds": 0.58, "peak_rss_mib": 0.82, "kube_apiserver_cpu_seconds": 0.75}}
    hog = {"ours_over_other": {"cpu_seconds": 0.85}}
    _write(tmp_path, "versus", {"benchmark": "versus", "quiet": quiet, "beside_a_hog": hog})
    table = rows(tmp_path)
    assert _row(table, "controller CPU, ours / Go's, quiet")[2:] == ("0.58", "<= 0.6", "pass")
    assert _row(table, "peak RSS, ours / Go's, quiet")[2:] == ("0.82", "<= 0.8", "FAIL")
    assert _row(table, "kube-apiserver CPU, ours / Go's, quiet")[2:] == ("0.75", "<= 0.7", "FAIL")
    assert _row(table, "controller CPU, ours / Go's, beside a CPU hog")[2:] == ("0.85", "<= 0.8", "FAIL")
    _write(tmp_path, "versus", {"benchmark": "versus", "not_run": "no executable"})
    assert _row(rows(tmp_path), "controller CPU, ours / Go's, quiet")[2] == "n/a"


def test_every_scenario_of_bench_hostile_is_in_the_summary_in_its_order() -> None:
    """annotation_storm was run but never summarised: the two lists are now held equal."""
    import ast

    source = (Path(__file__).resolve().parents[3] / "bench" / "hostile.py").read_text()
    (scenarios,) = [
        ast.literal_eval(node.value)
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["SCENARIOS"]
    ]
    assert scenarios == summary._HOSTILE
