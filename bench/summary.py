"""The one-screen summary `make bench` prints after the benchmarks' JSON documents.

Usage: ``python bench/summary.py DIR``. ``DIR`` holds, per benchmark run, ``<name>.json`` (what it
printed on stdout) and ``<name>.rc`` (its exit status), as the Makefile's ``bench`` target writes
them. Each row is one figure: its value, its target and whether the value meets it. A benchmark
that failed (non-zero exit, or no JSON document) gets one FAIL row instead of its figures, so one
broken benchmark never hides the others' results. A figure its document lacks shows ``n/a``.

Exits 0 whatever the figures say: a missed target is a result to read, not a broken build. The
Makefile decides the exit status of ``make bench`` from the benchmarks' own exit statuses.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Doc = dict[str, Any]


@dataclass(frozen=True)
class Figure:
    """One row: `value(doc)` extracts the figure, `target` says what it must be (None: context only)."""

    benchmark: str
    label: str
    value: Callable[[Doc], float | None]
    unit: str = ""
    at_most: float | None = None
    at_least: float | None = None
    #: A target that depends on the document itself (e.g. "no slower than with 1 worker").
    bound: Callable[[Doc], float | None] | None = None
    bound_text: str = ""

    def target(self, doc: Doc) -> tuple[str, float | None, bool]:
        """(text, limit, limit is an upper bound)."""
        if self.bound is not None:
            return self.bound_text, self.bound(doc), True
        if self.at_most is not None:
            return f"<= {_fmt(self.at_most)}{self.unit}", self.at_most, True
        if self.at_least is not None:
            return f">= {_fmt(self.at_least)}{self.unit}", self.at_least, False
        return "", None, True


def _get(doc: Any, *path: str | int) -> Any:
    for step in path:
        if isinstance(step, int):
            if not isinstance(doc, list) or len(doc) <= step:
                return None
            doc = doc[step]
        else:
            if not isinstance(doc, dict):
                return None
            doc = doc.get(step)
    return doc


def _run(doc: Doc, workers: int) -> Doc | None:
    for run in _get(doc, "runs") or []:
        if isinstance(run, dict) and run.get("worker_threads") == workers:
            return run
    return None


def _writes_per_jobflow(workers: int) -> Callable[[Doc], float | None]:
    def value(doc: Doc) -> float | None:
        by_verb = _get(_run(doc, workers), "api_requests_per_jobflow", "by_verb")
        if not isinstance(by_verb, dict):
            return None
        return round(sum(v for k, v in by_verb.items() if k in ("POST", "PUT", "PATCH", "DELETE")), 2)

    return value


def _run_field(workers: int, *path: str) -> Callable[[Doc], float | None]:
    def value(doc: Doc) -> float | None:
        found = _get(_run(doc, workers), *path)
        return float(found) if isinstance(found, int | float) else None

    return value


def _field(*path: str | int, scale: float = 1.0) -> Callable[[Doc], float | None]:
    def value(doc: Doc) -> float | None:
        found = _get(doc, *path)
        return round(float(found) * scale, 2) if isinstance(found, int | float) else None

    return value


_LATENCY = ("latency", "dependency_completed_to_dependent_added", "p99_ms")
_FIRST_JOB = ("latency", "jobflow_added_to_first_job_added")


def _cpu_ms_per_jobflow(workers: int) -> Callable[[Doc], float | None]:
    def value(doc: Doc) -> float | None:
        run = _run(doc, workers)
        cpu, flows = _get(run, "controller", "cpu_seconds_run"), _get(run, "jobflows")
        if not isinstance(cpu, int | float) or not isinstance(flows, int) or not flows:
            return None
        return round(cpu / flows * 1000.0, 1)

    return value


def _memories_not_back(doc: Doc) -> float | None:
    back = _get(doc, "memories_back_at_baseline")
    return float(sum(1 for ok in back.values() if not ok)) if isinstance(back, dict) else None


def _shards_figures() -> list[Figure]:
    """bench/shards.py's elastic scenario (issue 47): 12 shards over replicas that come and go."""
    elastic = "elastic"
    return [
        Figure("shards", "elastic: CPU of 3 replicas / 1", _field(elastic, "cpu_three_replicas_vs_one"), at_most=1.15),
        Figure(
            "shards",
            "elastic: least share of syncs",
            _field(elastic, "share_of_syncs_pct_min_max", 0),
            " %",
            at_least=28.0,
        ),
        Figure(
            "shards",
            "elastic: largest share of syncs",
            _field(elastic, "share_of_syncs_pct_min_max", 1),
            " %",
            at_most=38.0,
        ),
        Figure(
            "shards",
            "elastic churn: creates per Job name",
            _field(elastic, "churn_max_creates_per_job_name"),
            at_most=1,
        ),
        Figure(
            "shards",
            "elastic churn: every shard held again",
            _field(elastic, "churn_seconds_to_every_shard_held"),
            " s",
        ),
    ]


def _soak_and_scale_figures() -> list[Figure]:
    """bench/soak.py's and bench/scale.py's verdicts (issue 25)."""
    return [
        Figure("soak", "JobFlows stuck (max of the rows)", _field("max_jobflows_stuck"), at_most=0),
        Figure("soak", "memories not back at baseline after the drain", _memories_not_back, at_most=0),
        # Issue 38's targets (issue 25 asked 5 % from minute 10 and nothing from minute 30).
        Figure(
            "soak", "RSS growth, minute 10 to the end", _field("rss_growth_minute_10_to_end_pct"), " %", at_most=3.0
        ),
        Figure(
            "soak", "RSS growth, minute 30 to the end", _field("rss_growth_minute_30_to_end_pct"), " %", at_most=1.0
        ),
        Figure("scale", "all JobFlows Succeed at every size", _field("summary", "all_succeeded"), at_least=1),
        Figure(
            "scale",
            "CPU per JobFlow, largest / smallest size",
            _field("summary", "growth", "cpu_ms_per_jobflow"),
            at_most=1.1,
        ),
        Figure(
            "scale",
            "API writes per JobFlow, largest / smallest size",
            _field("summary", "growth", "writes_per_jobflow"),
            at_most=1.2,
        ),
        Figure(
            "scale",
            "RSS growth over cached-object growth",
            _field("summary", "growth", "rss_over_objects"),
            at_most=1.0,
        ),
        Figure(
            "scale",
            "CPU per JobFlow less idle CPU x run length, largest / smallest",
            _field("summary", "growth", "work_cpu_ms_per_jobflow"),
        ),
        Figure(
            "cache_scale",
            "sync CPU, 3,000 / 300 JobFlows cached (in-process)",
            _field("largest_over_smallest", "default"),
            at_most=1.1,
        ),
    ]


def _ui_scale_figures() -> list[Figure]:
    """bench/ui_scale.py: the web view over 1,000 JobFlows (issue 38), medians of its rounds."""
    return [
        Figure("ui_scale", "list of 1,000: first paint", _med("list_first_paint_ms"), " ms", at_most=1000.0),
        Figure("ui_scale", "a JobFlow's page, from the list", _med("page_from_list_ms"), " ms", at_most=1000.0),
        Figure("ui_scale", "a JobFlow's page, fresh load", _med("page_fresh_load_ms"), " ms", at_most=1000.0),
        Figure("ui_scale", "a Job's update on the open page", _med("update_to_page_ms"), " ms", at_most=500.0),
        Figure("ui_scale", "a JobFlow's update on the open list", _med("update_to_list_ms"), " ms"),
        Figure("ui_scale", "UI process peak RSS", _field("ui_process", "peak_rss_mib"), " MiB"),
    ]


def _med(name: str) -> Callable[[Doc], float | None]:
    def value(doc: Doc) -> float | None:
        found = _get(_get(doc, "figures"), name, "median")
        return round(float(found), 1) if isinstance(found, int | float) else None

    return value


def _fanout_429s(doc: Doc) -> float | None:
    found = _get(doc, "run", "responses_429")
    return float(sum(found.values())) if isinstance(found, dict) else None


def _fanout_figures() -> list[Figure]:
    """bench/fanout.py's (issue 47 item 3); the per-Job targets are a plain flow's (bench/e2e_flows.py,
    quiet: 1.48 status writes per JobFlow of 3.33 Jobs, 3.3 ms of CPU per Job)."""
    return [
        Figure("fanout", "fan-out: every JobFlow Succeeds", _field("run", "all_succeeded"), at_least=1),
        Figure("fanout", "fan-out: Job creates per second", _field("run", "job_creates", "mean_per_s"), "/s"),
        Figure("fanout", "fan-out: 429s, controller and API server", _fanout_429s, at_most=0),
        Figure("fanout", "fan-out: status writes per Job", _field("run", "status_writes_per_job"), at_most=0.44),
        Figure(
            "fanout", "fan-out: StatusTooLarge warnings", _field("run", "status_too_large", "warning_events"), at_most=0
        ),
        Figure("fanout", "fan-out: controller CPU per Job", _field("run", "controller", "cpu_ms_per_job"), " ms", 4.95),
        Figure(
            "fanout",
            "fan-out: bystanders' first Job, max",
            _field("run", "bystander_first_job", "max_ms"),
            " ms",
            at_most=1000.0,
        ),
        Figure("fanout", "fan-out: controller peak RSS", _field("run", "controller", "peak_rss_mib"), " MiB"),
        Figure(
            "fanout_default_qps",
            "fan-out, default QPS: Job creates per second",
            _field("run", "job_creates", "mean_per_s"),
            "/s",
        ),
        Figure("fanout_default_qps", "fan-out, default QPS: 429s, controller and API server", _fanout_429s, at_most=0),
    ]


def _results_cost_figures() -> list[Figure]:
    """bench/results_cost.py (issue 43): a JobFlow without results costs no request about pods."""
    without, with_results = "without_results", "with_results"
    return [
        Figure(
            "results_cost",
            "no results: pod requests per JobFlow",
            _field(without, "pod_requests_per_jobflow"),
            at_most=0,
        ),
        Figure("results_cost", "no results: API requests per JobFlow", _field(without, "requests_total_per_jobflow")),
        Figure(
            "results_cost",
            "results: pod LISTs per 3-Job JobFlow",
            _field(with_results, "pod_requests_per_jobflow"),
            at_most=3,
        ),
        Figure(
            "results_cost",
            "results: memory kept per JobFlow, extra",
            _field("extra_memory_bytes_per_jobflow_with_results", scale=1 / 1024),
            " KiB",
        ),
        Figure("results_cost", "no results: sync CPU per JobFlow", _field(without, "sync_cpu_ms_per_jobflow"), " ms"),
        Figure("results_cost", "results: sync CPU per JobFlow", _field(with_results, "sync_cpu_ms_per_jobflow"), " ms"),
    ]


#: bench/hostile.py's SCENARIOS, in the order it runs them (a unit test keeps the two equal: this
#: file reads only JSON and cannot import the benchmark).
_HOSTILE = (
    "baseline",
    "webhook_attack",
    "webhook_freeze",
    "webhook_clients",
    "flow_cap",
    "slow_drip_probe",
    "retry_storm",
    "matrix_fanout",
    "annotation_storm",
    "matrix_oversized",
    "param_expansion",
    "cron_overflow",
    "cron_foreign_run",
    "results_hostile",
    "cel_hostile",
    "template_hostile",
    "trigger_flood",
)


def _slowest_freeze_answer(doc: Doc) -> float | None:
    bodies = _get(doc, "scenarios", "webhook_freeze", "bodies")
    if not isinstance(bodies, dict) or not bodies:
        return None
    return max(float(body["slowest_answer_s"]) for body in bodies.values())


def _second_client_unanswered(doc: Doc) -> float | None:
    second = _get(doc, "scenarios", "webhook_clients", "second_client")
    return float(second["sent"] - second["answered_200"]) if isinstance(second, dict) else None


def _hostile_figures() -> list[Figure]:
    """Per scenario of bench/hostile.py: the controller's peak RSS and the bystanders' reaction p99."""
    figures = []
    for name in _HOSTILE:
        scenario = ("scenarios", name)
        label = name.replace("_", " ")
        figures += [
            Figure(
                "hostile",
                f"{label}: controller peak RSS",
                _field(*scenario, "controller", "peak_rss_mib"),
                " MiB",
                at_most=150.0,
            ),
            Figure(
                "hostile",
                f"{label}: bystanders Succeed",
                _field(*scenario, "bystanders", "succeeded"),
                at_least=10,
            ),
            Figure(
                "hostile",
                f"{label}: bystander reaction p99",
                _field(*scenario, "bystanders", "reaction_delay", "p99_ms"),
                " ms",
            ),
            # Issue 42 item 9: create->Succeed less the Jobs' scripted run time, and create->Succeed.
            Figure(
                "hostile",
                f"{label}: bystander waiting for the controller p99",
                _field(*scenario, "bystanders", "waiting_for_the_controller_s", "p99"),
                " s",
                at_most=1.0,
            ),
            Figure(
                "hostile",
                f"{label}: slowest bystander, create to Succeed",
                _field(*scenario, "bystanders", "first_create_to_succeed_s_max"),
                " s",
                at_most=3.0,
            ),
            Figure("hostile", f"{label}: /healthz max", _field(*scenario, "healthz", "max_s"), " s", at_most=1.0),
        ]
    return [
        *figures,
        Figure("hostile", "longest sync (sampled), all scenarios", _field("summary", "longest_sync_sampled_s"), " s"),
        Figure(
            "hostile", "webhook freeze: slowest answer to a hostile body", _slowest_freeze_answer, " s", at_most=1.0
        ),
        Figure("hostile", "webhook clients: second client's reviews unanswered", _second_client_unanswered, at_most=0),
        Figure(
            "hostile",
            "slow-drip probe: longest check",
            _field("scenarios", "slow_drip_probe", "check_held_connection_s", "max"),
            " s",
            at_most=1.5,
        ),
        Figure(
            "hostile",
            "retry storm: API writes/s, all clients",
            _field("scenarios", "retry_storm", "apiserver_writes_per_s_all_clients"),
            "/s",
        ),
        Figure("hostile", "retry storm: retries in the window", _field("scenarios", "retry_storm", "retries_done")),
    ]


FIGURES: tuple[Figure, ...] = (
    Figure("workqueue", "queue add+get+done, one thread", _field("single_thread", "ops_per_s"), " ops/s"),
    # The product's informer (`sync_product`: watch-list, transform on arrival, interning); the
    # benchmark's other variants are its comparisons.
    Figure(
        "informers",
        "RSS per cached Job",
        _field("summary", "rss_bytes_per_object", "product", scale=1 / 1024),
        " KiB",
        at_most=8.0,
    ),
    Figure(
        "informers",
        "peak / steady RSS during the initial sync",
        _field("summary", "targets", "peak_over_steady_rss", "value"),
        at_most=1.3,
    ),
    Figure(
        "informers",
        "initial sync of 10,000 Jobs",
        _field("summary", "initial_sync_seconds", "product"),
        " s",
        at_most=2.0,
    ),
    Figure("e2e_flows", "API writes per JobFlow, 1 worker", _writes_per_jobflow(1), at_most=10.0),
    Figure("e2e_flows", "API writes per JobFlow, 3 workers", _writes_per_jobflow(3), at_most=10.0),
    Figure("e2e_flows", "all 300 Succeed, 1 worker", _run_field(1, "seconds_until_all_succeed"), " s"),
    Figure(
        "e2e_flows",
        "all 300 Succeed, 3 workers",
        _run_field(3, "seconds_until_all_succeed"),
        " s",
        bound=_run_field(1, "seconds_until_all_succeed"),
        bound_text="<= 1 worker",
    ),
    Figure(
        "e2e_flows",
        "status 409s from the controller, 3 workers",
        _run_field(3, "conflicts", "controller_status_writes"),
        at_most=0,
    ),
    # The latency targets are for the default flags, three workers; one worker is context.
    Figure("e2e_flows", "reaction p99, fast flags, 1 worker", _run_field(1, *_LATENCY), " ms"),
    Figure("e2e_flows", "reaction p99, fast flags, 3 workers", _run_field(3, *_LATENCY), " ms", at_most=250.0),
    Figure("e2e_flows", "first Job p50, fast flags, 3 workers", _run_field(3, *_FIRST_JOB, "p50_ms"), " ms"),
    Figure(
        "e2e_flows", "first Job p99, fast flags, 3 workers", _run_field(3, *_FIRST_JOB, "p99_ms"), " ms", at_most=2000.0
    ),
    Figure("e2e_flows", "controller CPU per JobFlow, 3 workers", _cpu_ms_per_jobflow(3), " ms", at_most=14.0),
    # Upstream's Go controllers, same run: 63.3 MiB (issue 38).
    Figure(
        "e2e_flows",
        "controller peak RSS, 3 workers",
        _run_field(3, "controller", "peak_rss_mib"),
        " MiB",
        at_most=63.0,
    ),
    Figure("e2e_flows_default_qps", "API writes per JobFlow, 3 workers", _writes_per_jobflow(3), at_most=10.0),
    Figure(
        "e2e_flows_default_qps",
        "reaction p99, default flags, 3 workers",
        _run_field(3, *_LATENCY),
        " ms",
        at_most=1000.0,
    ),
    Figure(
        "e2e_flows_default_qps",
        "first Job p50, default flags, 3 workers",
        _run_field(3, *_FIRST_JOB, "p50_ms"),
        " ms",
    ),
    Figure(
        "e2e_flows_default_qps",
        "first Job p99, default flags, 3 workers",
        _run_field(3, *_FIRST_JOB, "p99_ms"),
        " ms",
        at_most=10000.0,
    ),
    *_soak_and_scale_figures(),
    *_shards_figures(),
    *_ui_scale_figures(),
    # bench/versus.py against upstream's Go controllers (issue 38), when their build is there.
    # Issue 47 item 4: CPU at most 0.6x, peak RSS at most 0.8x, the API server's CPU at most 0.7x.
    Figure(
        "versus", "controller CPU, ours / Go's, quiet", _field("quiet", "ours_over_other", "cpu_seconds"), at_most=0.6
    ),
    Figure(
        "versus",
        "kube-apiserver CPU, ours / Go's, quiet",
        _field("quiet", "ours_over_other", "kube_apiserver_cpu_seconds"),
        at_most=0.7,
    ),
    Figure(
        "versus",
        "controller CPU, ours / Go's, beside a CPU hog",
        _field("beside_a_hog", "ours_over_other", "cpu_seconds"),
        at_most=0.8,
    ),
    Figure("versus", "peak RSS, ours / Go's, quiet", _field("quiet", "ours_over_other", "peak_rss_mib"), at_most=0.8),
    Figure("failover", "SIGKILL: standby leads after", _field("kill_9_takeover", "median_s"), " s", at_most=17.0),
    Figure("failover", "SIGTERM: standby leads after", _field("sigterm_handover", "median_s"), " s"),
    Figure("chaos", "JobFlows stranded, all faults", _field("flows_stranded_total"), at_most=0),
    Figure("chaos", "duplicate Job creations, all faults", _field("duplicate_job_creations_total"), at_most=0),
    Figure("webhook_hostile", "webhook peak RSS, hostile input", _field("webhook_peak_rss_mib"), " MiB", at_most=150.0),
    Figure("webhook_hostile", "normal review p99, hostile input", _field("normal_reviews", "p99_ms"), " ms"),
    *_hostile_figures(),
    *_results_cost_figures(),
    *_fanout_figures(),
)


def _fmt(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.3g}"


def load(directory: Path, name: str) -> tuple[Doc | None, str]:
    """The benchmark's document, or None and why it is missing."""
    rc_path, json_path = directory / f"{name}.rc", directory / f"{name}.json"
    if not rc_path.exists() and not json_path.exists():
        return None, "not run"
    rc = rc_path.read_text().strip() if rc_path.exists() else "?"
    try:
        doc = json.loads(json_path.read_text()) if json_path.exists() else None
    except ValueError:
        doc = None
    if rc != "0":
        return None, f"exit status {rc}"
    if not isinstance(doc, dict):
        return None, "no JSON document"
    return doc, ""


def rows(directory: Path) -> list[tuple[str, str, str, str, str]]:
    """(benchmark, figure, value, target, verdict) for every figure, in order."""
    out: list[tuple[str, str, str, str, str]] = []
    seen: dict[str, tuple[Doc | None, str]] = {}
    for figure in FIGURES:
        if figure.benchmark not in seen:
            seen[figure.benchmark] = load(directory, figure.benchmark)
            doc, problem = seen[figure.benchmark]
            if doc is None and problem != "not run":
                out.append((figure.benchmark, "the benchmark itself", problem, "exit 0", "FAIL"))
        doc, problem = seen[figure.benchmark]
        if doc is None:
            continue
        value = figure.value(doc)
        text, limit, upper = figure.target(doc)
        if value is None:
            out.append((figure.benchmark, figure.label, "n/a", text, "?"))
            continue
        if limit is None:
            verdict = "" if not text else "?"
        else:
            verdict = "pass" if (value <= limit if upper else value >= limit) else "FAIL"
        out.append((figure.benchmark, figure.label, f"{_fmt(value)}{figure.unit}", text, verdict))
    return out


def render(table: list[tuple[str, str, str, str, str]]) -> str:
    header = ("benchmark", "figure", "value", "target", "")
    widths = [max(len(r[i]) for r in [header, *table]) for i in range(5)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in [header, *table]]
    lines.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} DIR", file=sys.stderr)
        return 2
    table = rows(Path(argv[1]))
    print()
    print(render(table) if table else "no benchmark results")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
