"""manifests/monitoring: the Grafana dashboard and the PrometheusRule name only series the controller
exports, with labels it sets.

The exported set is not written down here: the controller's own metrics classes are instantiated on a
fresh registry, given one sample each (the way the manager wires them: the two named queues, the
Lease name, a namespace, a request), and read back through the manager's `/metrics` exposition. Every
PromQL expression of both files, and every Grafana variable query, is parsed by a real PromQL parser;
each selector must name one of those series and match only on labels it carries (or on the labels
Prometheus adds to every target).
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import prometheus_client
import pytest
import yaml
from monitoring_expressions import (
    DASHBOARD,
    DASHBOARD_FILE,
    EXPRESSIONS,
    MONITORING,
    ROOT,
    RULE,
    RULE_FILE,
    TARGET_LABELS,
    panels,
    samples,
    selectors,
    series_of,
)
from prometheus_client import CollectorRegistry

from jobflow_controller.cronjobflow import CronJobFlowMetrics
from jobflow_controller.cronjobflow.controller import QUEUE_NAME as CRON_QUEUE
from jobflow_controller.jobflow.constants import QUEUE_NAME as JOBFLOW_QUEUE
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobtemplate.controller import QUEUE_NAME as JOBTEMPLATE_QUEUE
from jobflow_controller.leaderelection.metrics import PrometheusLeaderMetrics
from jobflow_controller.local.kubectl import kubectl_path
from jobflow_controller.manager.metrics import RestClientMetrics, exposition
from jobflow_controller.manager.options import Options
from workqueue import PrometheusMetricsProvider

LEASE = Options().leader_elect_resource_name


def exported_series() -> dict[str, frozenset[str]]:
    """Sample name -> its label names, from the exposition of the controller's real metrics."""
    registry = CollectorRegistry()
    queues = PrometheusMetricsProvider(registry)
    for queue in (JOBFLOW_QUEUE, JOBTEMPLATE_QUEUE):
        queues.new_depth_metric(queue).inc()
        queues.new_adds_metric(queue).inc()
        queues.new_retries_metric(queue).inc()
        queues.new_latency_metric(queue).observe(0.01)
        queues.new_work_duration_metric(queue).observe(0.01)
        queues.new_unfinished_work_seconds_metric(queue).set(0.5)
        queues.new_longest_running_processor_seconds_metric(queue).set(0.5)
    flows = JobFlowMetrics(registry)
    flows.update_job_flow_succeed("default")
    flows.update_job_flow_failed("default")
    flows.update_job_flow_job_retry("default")
    cron = CronJobFlowMetrics(registry)
    cron.observe_scheduled("default", 0.4)
    cron.observe_missed("default", 1)
    queues.new_depth_metric(CRON_QUEUE).inc()
    leader = PrometheusLeaderMetrics(registry)
    leader.leader_on(LEASE)
    leader.slowpath_exercised(LEASE)
    RestClientMetrics(registry).observe("GET", "10.0.0.1:443", "200", 0.01)
    # The manager turns the `_created` series off (Go has none); so does this exposition.
    prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
    try:
        text = exposition(registry).decode()
    finally:
        prometheus_client.enable_created_metrics()  # type: ignore[no-untyped-call]
    series: dict[str, set[str]] = {}
    for name, labels, _ in samples(text):
        series.setdefault(name, set()).update(labels)
    return {name: frozenset(labels) for name, labels in series.items()}


EXPORTED = exported_series()


def test_the_exported_set_is_what_docs_operations_lists() -> None:
    """A sanity check of the fixture itself (and of the names the issue calls out)."""
    assert "volcano_jobflow_succeed_phase_count" in EXPORTED
    assert "volcano_jobflow_succeed_phase_count_total" not in EXPORTED
    assert EXPORTED["volcano_jobflow_failed_phase_count"] == {"jobflow_namespace"}
    assert EXPORTED["workqueue_retries_total"] == {"name"}
    assert EXPORTED["workqueue_queue_duration_seconds_bucket"] == {"name", "le"}
    assert EXPORTED["leader_election_master_status"] == {"name"}
    assert not [n for n in EXPORTED if n.endswith("_created")]
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    for family in _families(EXPORTED):
        assert f"`{family}`" in operations, family


def _families(names: Any) -> set[str]:
    out = set()
    for name in names:
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and name.removesuffix(suffix) + "_bucket" in EXPORTED:
                name = name.removesuffix(suffix)
        out.add(name)
    return out


# -- the expressions ---------------------------------------------------------------------------
def test_there_are_expressions_in_both_files() -> None:
    kinds = {where.split()[0] for where, _ in EXPRESSIONS}
    assert kinds == {"alert", "panel", "variable"}
    assert len(EXPRESSIONS) >= 20


@pytest.mark.parametrize(("where", "expr"), EXPRESSIONS, ids=[w for w, _ in EXPRESSIONS])
def test_every_selector_names_an_exported_series_and_its_labels(where: str, expr: str) -> None:
    found, grouping = selectors(expr)
    assert found, f"{where}: no selector in {expr}"
    labels: set[str] = set(TARGET_LABELS)
    for selector in found:
        names = series_of(selector, EXPORTED)
        assert names, f"{where}: {selector} names no series the controller exports"
        carried = set.union(*(set(EXPORTED[n]) for n in names))
        labels |= carried
        for matcher in selector.matchers.matchers:
            if matcher.name != "__name__":
                assert matcher.name in carried | TARGET_LABELS, f"{where}: {selector} has no label {matcher.name}"
    assert grouping <= labels, f"{where}: groups on {grouping - labels}, which no selected series carries"


def test_the_pinned_queue_and_lease_names_are_the_controllers() -> None:
    text = RULE_FILE.read_text(encoding="utf-8") + DASHBOARD_FILE.read_text(encoding="utf-8")
    for queues in re.findall(r'name=~\\?"([a-z|]+)\\?"', text):
        assert set(queues.split("|")) <= {JOBFLOW_QUEUE, JOBTEMPLATE_QUEUE, CRON_QUEUE}, queues
    assert set(re.findall(r'name=\\?"([a-z-]+)\\?"', text)) <= {LEASE, JOBFLOW_QUEUE}


# -- the PrometheusRule ------------------------------------------------------------------------
ALERTS = {r["alert"]: r for group in RULE["spec"]["groups"] for r in group["rules"]}


def test_the_rule_alerts_on_drops_failures_queue_growth_and_leader_changes() -> None:
    assert RULE["apiVersion"] == "monitoring.coreos.com/v1" and RULE["kind"] == "PrometheusRule"
    uses = {name: {s.name for s in selectors(rule["expr"])[0]} for name, rule in ALERTS.items()}
    assert uses == {
        "JobFlowControllerRequestsDropped": {"workqueue_retries_total"},
        "JobFlowFailed": {"volcano_jobflow_failed_phase_count"},
        "JobFlowControllerQueueDepthGrowing": {"workqueue_depth"},
        "JobFlowControllerLeaderChanged": {"leader_election_master_status"},
        "JobFlowControllerLeaderFlapping": {"leader_election_master_status"},
    }


def test_the_drop_alert_fires_at_the_retries_one_dropped_request_costs() -> None:
    expr = ALERTS["JobFlowControllerRequestsDropped"]["expr"]
    assert expr.strip().endswith(f">= {Options().max_requeue_num}")


@pytest.mark.parametrize("name", sorted(ALERTS))
def test_every_alert_has_a_severity_a_summary_and_labels_its_expression_keeps(name: str) -> None:
    rule = ALERTS[name]
    assert rule["labels"]["severity"] in {"info", "warning", "critical"}
    assert rule["annotations"]["summary"] and rule["annotations"]["description"]
    _, grouping = selectors(rule["expr"])
    used = set(re.findall(r"\$labels\.(\w+)", json.dumps(rule["annotations"])))
    assert used <= grouping, f"{name}: annotations use {used - grouping}, which `by (...)` drops"


# -- the dashboard -----------------------------------------------------------------------------
def test_the_dashboard_shows_every_series_the_controller_exports() -> None:
    used: set[str] = set()
    for where, expr in EXPRESSIONS:
        if where.startswith("panel"):
            for selector in selectors(expr)[0]:
                used.update(series_of(selector, EXPORTED))
    assert _families(EXPORTED) - _families(used) == set()


def test_every_panel_queries_the_chosen_datasource_and_has_a_unique_id() -> None:
    every = list(panels(DASHBOARD["panels"]))
    ids = [p["id"] for p in every]
    assert len(ids) == len(set(ids))
    for panel in every:
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel["targets"] and all(t["datasource"] == panel["datasource"] for t in panel["targets"])
    assert DASHBOARD["uid"] == "jobflow-controller" and DASHBOARD["templating"]["list"][0]["type"] == "datasource"


# -- the kustomization -------------------------------------------------------------------------
def test_the_kustomization_builds_the_rule_the_service_monitor_and_the_dashboard_config_map() -> None:
    built = subprocess.run(
        [kubectl_path(), "kustomize", str(MONITORING)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(built) if d}
    assert set(docs) == {
        ("ConfigMap", "jobflow-controller-dashboard"),
        ("PrometheusRule", "jobflow-controller"),
        ("ServiceMonitor", "jobflow-controller"),
    }
    config_map = docs[("ConfigMap", "jobflow-controller-dashboard")]
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["data"]["grafana-dashboard.json"] == DASHBOARD_FILE.read_text(encoding="utf-8")
    assert {d["metadata"]["namespace"] for d in docs.values()} == {"volcano-system"}
    monitor = docs[("ServiceMonitor", "jobflow-controller")]
    service = yaml.safe_load((ROOT / "manifests" / "service.yaml").read_text(encoding="utf-8"))
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == [p["name"] for p in service["spec"]["ports"]]


def test_the_default_kustomization_leaves_monitoring_out() -> None:
    default = yaml.safe_load((ROOT / "manifests" / "kustomization.yaml").read_text(encoding="utf-8"))
    assert not [r for r in default["resources"] if "monitoring" in r]
