"""The demo's every-minute CronJobFlow (jobflow_controller/local/demo_cron.py)."""

from __future__ import annotations

from jobflow_controller.local import demo_cron
from jobflow_controller.validation.cronjobflow import cron_job_flow_problems


def test_every_minute_is_the_nightly_example_on_every_minute_and_passes_admission() -> None:
    doc = demo_cron.every_minute()
    assert doc["metadata"] == {"name": "every-minute", "namespace": "default"}
    assert doc["spec"]["schedule"] == "* * * * *" and "timeZone" not in doc["spec"]
    assert cron_job_flow_problems(doc) == []


def test_a_run_is_announced_with_its_lag_and_other_jobflows_are_not() -> None:
    run = {
        "metadata": {
            "name": "every-minute-29941300",
            "creationTimestamp": "2026-12-05T13:40:01Z",
            "annotations": {"flow.volcano.sh/scheduled-timestamp": "2026-12-05T13:40:00Z"},
        }
    }
    assert (
        demo_cron.run_line(run)
        == "every-minute fired: every-minute-29941300 for 2026-12-05T13:40:00Z, created 1 s after it"
    )
    assert (
        demo_cron.run_line({"metadata": {"name": "ml-pipeline", "creationTimestamp": "2026-12-05T13:40:01Z"}}) is None
    )
