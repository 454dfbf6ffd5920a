"""on-failure-alerting: manifests/examples/failure-aware/on-failure-alerting-jobflow.yaml
and its JobTemplates, in Python."""

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    with JobFlow("on-failure-alerting", namespace="default", job_retain_policy="retain") as jf:
        prepare_data = jf.flow(
            JobTemplate(
                "prepare-data",
                image="myregistry/prepare-data:latest",
                command=["python", "prepare.py"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="prepare",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
        )
        train_model = jf.flow(
            JobTemplate(
                "train-model",
                image="myregistry/train-model:latest",
                command=["python", "train.py"],
                resources={"requests": {"cpu": "4", "memory": "8Gi"}},
                task_name="train",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Failed"},
            ),
            after=prepare_data,
        )
        publish_model = jf.flow(
            JobTemplate(
                "publish-model",
                image="myregistry/publish-model:latest",
                command=["python", "publish.py"],
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                task_name="publish",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
            after=train_model,
        )
        jf.flow(
            JobTemplate(
                "page-oncall",
                image="myregistry/pager:latest",
                command=["page", "--team=ml", "--severity=high"],
                resources={"requests": {"cpu": "100m", "memory": "64Mi"}},
                task_name="page",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:1s,Completed"},
            ),
            after=[prepare_data, train_model, publish_model],
            rule="AnyFailed",
        )
    return jf
