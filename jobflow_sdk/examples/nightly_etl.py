"""nightly-etl: manifests/examples/nightly-etl-cronjobflow.yaml, in Python.

The parallel-pipeline diamond (its JobTemplates are parallel_pipeline's) as a nightly run at 02:00
Berlin time; the CronJobFlow's own fields are the schedule's, the rest is each run's JobFlow.
"""

from jobflow_sdk import CronJobFlow


def pipeline() -> CronJobFlow:
    """The CronJobFlow (its flows name the parallel-pipeline's JobTemplates)."""
    with CronJobFlow(
        "nightly-etl",
        namespace="default",
        schedule="0 2 * * *",
        time_zone="Europe/Berlin",
        concurrency_policy="Forbid",
        starting_deadline_seconds=3600,
        successful_history_limit=3,
        failed_history_limit=1,
        template_labels={"team": "data"},
        job_retain_policy="delete",
    ) as cron:
        download = cron.flow("data-download")
        features = cron.flow("feature-engineering")
        v1, v2 = cron.flow("model-training-v1"), cron.flow("model-training-v2")
        download >> [features, v1]
        features >> v2
        [v1, v2] >> cron.flow("model-ensemble")
    return cron
