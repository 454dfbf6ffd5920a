"""nightly-report: manifests/examples/failure-aware/nightly-report-jobflow.yaml and its JobTemplates, in Python."""

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    with JobFlow(
        "nightly-report", namespace="default", job_retain_policy="retain", failure_policy="RunToCompletion"
    ) as jf:
        extract_eu = jf.flow(
            JobTemplate(
                "extract-eu",
                image="myregistry/extract:latest",
                command=["extract", "--region=eu"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="extract",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
        )
        extract_us = jf.flow(
            JobTemplate(
                "extract-us",
                image="myregistry/extract:latest",
                command=["extract", "--region=us"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="extract",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Failed"},
            ),
        )
        extract_apac = jf.flow(
            JobTemplate(
                "extract-apac",
                image="myregistry/extract:latest",
                command=["extract", "--region=apac"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="extract",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:3s,Completed"},
            ),
        )
        report_eu = jf.flow(
            JobTemplate(
                "report-eu",
                image="myregistry/report:latest",
                command=["report", "--region=eu"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="report",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:1s,Completed"},
            ),
            after=extract_eu,
        )
        report_us = jf.flow(
            JobTemplate(
                "report-us",
                image="myregistry/report:latest",
                command=["report", "--region=us"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="report",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:1s,Completed"},
            ),
            after=extract_us,
        )
        report_apac = jf.flow(
            JobTemplate(
                "report-apac",
                image="myregistry/report:latest",
                command=["report", "--region=apac"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="report",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:1s,Completed"},
            ),
            after=extract_apac,
        )
        jf.flow(
            JobTemplate(
                "summarize",
                image="myregistry/report:latest",
                command=["summarize"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:1s,Completed"},
            ),
            after=[report_eu, report_us, report_apac],
            rule="NoneFailed",
        )
        jf.finally_flow(
            JobTemplate(
                "notify-team",
                image="myregistry/notifier:latest",
                command=["notify", "--channel=#data-nightly"],
                resources={"requests": {"cpu": "100m", "memory": "64Mi"}},
                task_name="notify",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:1s,Completed"},
            )
        )
    return jf
