"""flaky-optional-step: manifests/examples/failure-aware/flaky-optional-step-jobflow.yaml
and its JobTemplates, in Python."""

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    with JobFlow("flaky-optional-step", namespace="default", job_retain_policy="retain") as jf:
        crawl_pages = jf.flow(
            JobTemplate(
                "crawl-pages",
                image="myregistry/crawler:latest",
                command=["crawl", "--seeds=/etc/seeds.txt"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="crawl",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
        )
        enrich_metadata = jf.flow(
            JobTemplate(
                "enrich-metadata",
                image="myregistry/enricher:latest",
                command=["enrich", "--endpoint=https://metadata.example.com"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="enrich",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Failed"},
            ),
            after=crawl_pages,
            continue_on_failure=True,
        )
        build_index = jf.flow(
            JobTemplate(
                "build-index",
                image="myregistry/indexer:latest",
                command=["build-index"],
                resources={"requests": {"cpu": "2", "memory": "4Gi"}},
                task_name="index",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
            after=enrich_metadata,
            rule="AllDone",
        )
        jf.flow(
            JobTemplate(
                "publish-index",
                image="myregistry/indexer:latest",
                command=["publish-index"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="publish",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:1s,Completed"},
            ),
            after=build_index,
        )
    return jf
