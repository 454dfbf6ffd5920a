"""ml-pipeline: manifests/examples/ml-pipeline-jobflow.yaml and its JobTemplates, in Python.

A three-step chain: each flow runs the JobTemplate passed to it, and `>>` says what waits for what.
"""

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    preprocess = JobTemplate(
        "data-preprocess",
        image="myregistry/data-preprocess:latest",
        command=["python", "preprocess.py"],
        resources={"requests": {"cpu": "2", "memory": "4Gi"}},
        task_name="preprocess",
        pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:3s,Completed"},
    )
    training = JobTemplate(
        "model-training",
        image="myregistry/model-training:latest",
        command=["python", "train.py"],
        resources={"requests": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}},
        replicas=2,
        task_name="trainer",
        pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:5s,Completed"},
    )
    evaluation = JobTemplate(
        "model-evaluation",
        image="myregistry/model-eval:latest",
        command=["python", "evaluate.py"],
        resources={"requests": {"cpu": "2", "memory": "4Gi"}},
        task_name="evaluator",
        pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:3s,Completed"},
    )
    with JobFlow("ml-pipeline", namespace="default", job_retain_policy="retain") as jf:
        jf.flow(preprocess) >> jf.flow(training) >> jf.flow(evaluation)
    return jf
