"""hyperparameter-sweep: manifests/examples/params/hyperparameter-sweep-jobflow.yaml and its JobTemplates, in Python."""

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    with JobFlow(
        "hyperparameter-sweep",
        namespace="default",
        params={"dataset": "s3://bucket/datasets/2026-12-05"},
        job_retain_policy="retain",
    ) as jf:
        prepare_data = jf.flow(
            JobTemplate(
                "prepare-data",
                image="myregistry/prepare-data:latest",
                command=["python", "prepare.py"],
                args=["--dataset=$(params.dataset)"],
                task_name="prepare",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
        )
        train = jf.flow(
            JobTemplate(
                "train",
                image="myregistry/train-model:latest",
                command=["python", "train.py"],
                args=["--lr=$(matrix.lr)", "--seed=$(matrix.seed)", "--dataset=$(params.dataset)"],
                env={"RUN_ID": "$(context.jobflow.name)-$(context.matrix.index)"},
                resources={"requests": {"cpu": "1", "memory": "1Gi"}},
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
            ),
            after=prepare_data,
            matrix={"lr": ["0.1", "0.01"], "seed": ["1", "2", "3"]},
            max_parallel=2,
        )
        jf.flow(
            JobTemplate(
                "pick-best",
                image="myregistry/pick-best:latest",
                command=["python", "pick_best.py", "--runs=$(context.jobflow.name)"],
                task_name="pick",
                pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:1s,Completed"},
            ),
            after=train,
        )
    return jf
