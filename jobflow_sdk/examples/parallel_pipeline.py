"""parallel-pipeline: manifests/examples/parallel-pipeline-jobflow.yaml and its JobTemplates, in Python."""

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    with JobFlow("parallel-pipeline", namespace="default", job_retain_policy="delete") as jf:
        data_download = jf.flow(
            JobTemplate(
                "data-download",
                image="myregistry/data-download:latest",
                command=["python", "download.py"],
                resources={"requests": {"cpu": "1", "memory": "2Gi"}},
                task_name="downloader",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
        )
        feature_engineering = jf.flow(
            JobTemplate(
                "feature-engineering",
                image="myregistry/feature-engineering:latest",
                command=["python", "features.py"],
                resources={"requests": {"cpu": "2", "memory": "4Gi"}},
                task_name="features",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:3s,Completed"},
            ),
            after=data_download,
        )
        model_training_v1 = jf.flow(
            JobTemplate(
                "model-training-v1",
                image="myregistry/model-training:v1",
                command=["python", "train.py", "--variant", "v1"],
                resources={"requests": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}},
                replicas=2,
                task_name="trainer",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:7s,Completed"},
            ),
            after=data_download,
        )
        model_training_v2 = jf.flow(
            JobTemplate(
                "model-training-v2",
                image="myregistry/model-training:v2",
                command=["python", "train.py", "--variant", "v2"],
                resources={"requests": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}},
                replicas=2,
                task_name="trainer",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:3s,Completed"},
            ),
            after=feature_engineering,
        )
        jf.flow(
            JobTemplate(
                "model-ensemble",
                image="myregistry/model-ensemble:latest",
                command=["python", "ensemble.py"],
                resources={"requests": {"cpu": "2", "memory": "4Gi"}},
                task_name="ensemble",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:3s,Completed"},
            ),
            after=[model_training_v1, model_training_v2],
        )
    return jf
