"""conditional-step: manifests/examples/params/conditional-step-jobflow.yaml and its JobTemplates, in Python."""

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    with JobFlow(
        "conditional-step", namespace="default", params={"mode": "incremental"}, job_retain_policy="retain"
    ) as jf:
        fetch_updates = jf.flow(
            JobTemplate(
                "fetch-updates",
                image="myregistry/search-indexer:latest",
                command=["fetch", "--since=24h"],
                task_name="fetch",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
        )
        full_reindex = jf.flow(
            JobTemplate(
                "full-reindex",
                image="myregistry/search-indexer:latest",
                command=["reindex", "--mode=$(params.mode)"],
                task_name="reindex",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
            after=fetch_updates,
            when=[(jf.param("mode"), "in", ["full"])],
        )
        refresh_cache = jf.flow(
            JobTemplate(
                "refresh-cache",
                image="myregistry/search-indexer:latest",
                command=["refresh-cache", "--mode=$(params.mode)"],
                task_name="refresh",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
            after=fetch_updates,
            when=[(jf.param("mode"), "notin", ["full"])],
        )
        jf.flow(
            JobTemplate(
                "publish",
                image="myregistry/search-indexer:latest",
                command=["publish"],
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:1s,Completed"},
            ),
            after=[full_reindex, refresh_cache],
            rule="NoneFailed",
        )
    return jf
