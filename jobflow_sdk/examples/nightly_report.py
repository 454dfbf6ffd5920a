"""nightly-report: manifests/examples/failure-aware/nightly-report-jobflow.yaml and its JobTemplates,
in Python: a loop writes the three regions' extract and report steps."""

from typing import Any

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate

REGIONS = ("eu", "us", "apac")
#: How the local simulator runs each region's extract (extract-us fails, the case the example is about).
EXTRACT_PHASES = {
    "eu": "Pending:1s,Running:2s,Completed",
    "us": "Pending:1s,Running:2s,Failed",
    "apac": "Pending:1s,Running:3s,Completed",
}
SMALL = {"requests": {"cpu": "1", "memory": "1Gi"}}
DONE = "Pending:1s,Running:1s,Completed"
TINY = {"requests": {"cpu": "100m", "memory": "64Mi"}}


def step(
    name: str,
    image: str,
    command: list[str],
    phases: str,
    task_name: str | None = None,
    resources: dict[str, Any] = SMALL,
) -> JobTemplate:
    """A one-container JobTemplate; `phases` tell the local simulator how its Job runs."""
    return JobTemplate(
        name,
        image=image,
        command=command,
        resources=resources,
        task_name=task_name,
        pod_annotations={SIMULATOR_PHASES: phases},
    )


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    with JobFlow(
        "nightly-report", namespace="default", job_retain_policy="retain", failure_policy="RunToCompletion"
    ) as jf:
        extracts = {
            region: jf.flow(
                step(
                    f"extract-{region}",
                    "myregistry/extract:latest",
                    ["extract", f"--region={region}"],
                    EXTRACT_PHASES[region],
                    "extract",
                )
            )
            for region in REGIONS
        }
        reports = [
            jf.flow(
                step(f"report-{region}", "myregistry/report:latest", ["report", f"--region={region}"], DONE, "report"),
                after=extracts[region],
            )
            for region in REGIONS
        ]
        summarize = step("summarize", "myregistry/report:latest", ["summarize"], DONE)
        jf.flow(summarize, after=reports, rule="NoneFailed")
        jf.finally_flow(
            step(
                "notify-team", "myregistry/notifier:latest", ["notify", "--channel=#data-nightly"], DONE, "notify", TINY
            )
        )
    return jf
