"""parallel-pipeline: manifests/examples/parallel-pipeline-jobflow.yaml and its JobTemplates, in Python.

A diamond: `>>` into a list fans out, a list `>>` into a flow joins.
"""

from typing import Any

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate


def step(name: str, image: str, command: list[str], running: str, task_name: str, **fields: Any) -> JobTemplate:
    """A one-container JobTemplate whose simulated Job runs for `running`, then Completes."""
    return JobTemplate(
        name,
        image=image,
        command=command,
        task_name=task_name,
        pod_annotations={SIMULATOR_PHASES: f"Pending:1s,Running:{running},Completed"},
        **fields,
    )


GPU = {"requests": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}}


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    with JobFlow("parallel-pipeline", namespace="default", job_retain_policy="delete") as jf:
        download = jf.flow(
            step(
                "data-download",
                "myregistry/data-download:latest",
                ["python", "download.py"],
                "2s",
                "downloader",
                resources={"requests": {"cpu": "1", "memory": "2Gi"}},
            )
        )
        features = jf.flow(
            step(
                "feature-engineering",
                "myregistry/feature-engineering:latest",
                ["python", "features.py"],
                "3s",
                "features",
                resources={"requests": {"cpu": "2", "memory": "4Gi"}},
            )
        )
        v1 = jf.flow(
            step(
                "model-training-v1",
                "myregistry/model-training:v1",
                ["python", "train.py", "--variant", "v1"],
                "7s",
                "trainer",
                resources=GPU,
                replicas=2,
            )
        )
        v2 = jf.flow(
            step(
                "model-training-v2",
                "myregistry/model-training:v2",
                ["python", "train.py", "--variant", "v2"],
                "3s",
                "trainer",
                resources=GPU,
                replicas=2,
            )
        )
        ensemble = jf.flow(
            step(
                "model-ensemble",
                "myregistry/model-ensemble:latest",
                ["python", "ensemble.py"],
                "3s",
                "ensemble",
                resources={"requests": {"cpu": "2", "memory": "4Gi"}},
            )
        )
        download >> [features, v1]
        features >> v2
        [v1, v2] >> ensemble
    return jf
