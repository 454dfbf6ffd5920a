"""The JobFlow metrics keep client_golang's exact names, help texts and label."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.manager.metrics import exposition


def test_exposed_names_help_and_label_are_upstreams() -> None:
    registry = CollectorRegistry()
    metrics = JobFlowMetrics(registry)
    metrics.update_job_flow_succeed("ns1")
    metrics.update_job_flow_succeed("ns1")
    metrics.update_job_flow_failed("ns2")
    text = exposition(registry).decode()
    assert "# HELP volcano_jobflow_succeed_phase_count Number of jobflow succeed phase\n" in text
    assert "# TYPE volcano_jobflow_succeed_phase_count counter\n" in text
    assert 'volcano_jobflow_succeed_phase_count{jobflow_namespace="ns1"} 2.0\n' in text
    assert "# HELP volcano_jobflow_failed_phase_count Number of jobflow failed phase\n" in text
    assert 'volcano_jobflow_failed_phase_count{jobflow_namespace="ns2"} 1.0\n' in text
    assert "_total" not in text


def test_a_counter_with_no_samples_is_not_exposed() -> None:
    registry = CollectorRegistry()
    JobFlowMetrics(registry).update_job_flow_succeed("ns")
    assert "volcano_jobflow_failed_phase_count" not in exposition(registry).decode()
