"""model-selection: manifests/examples/results/model-selection-jobflow.yaml and its JobTemplates, in
Python (docs/results.md).

`train` reports an accuracy and a model URI from its pod's termination message (the local simulator
writes it from `sim.jobflow.volcano.sh/results`); `publish` runs only when the accuracy is one it
accepts, and its command gets the model URI; the JobFlow's own result names the model published.
"""

from jobflow_sdk import SIMULATOR_PHASES, JobFlow, JobTemplate

#: What the simulated trainer's pod writes to its termination message (a real one writes it to
#: /dev/termination-log: `echo '{"accuracy": "0.93", ...}' > /dev/termination-log`).
SIMULATOR_RESULTS = "sim.jobflow.volcano.sh/results"
REPORTED = '{"accuracy": "0.93", "model": "s3://models/model-selection/42"}'


def pipeline() -> JobFlow:
    """The JobFlow with its JobTemplates (`jf.templates`)."""
    train = JobTemplate(
        "train",
        image="myregistry/model-training:latest",
        command=["python", "train.py", "--report=/dev/termination-log"],
        task_name="trainer",
        pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:3s,Completed", SIMULATOR_RESULTS: REPORTED},
    )
    publish = JobTemplate(
        "publish",
        image="myregistry/model-publish:latest",
        command=["python", "publish.py", "--model=$(flows.train.results.model)"],
        task_name="publisher",
        pod_annotations={SIMULATOR_PHASES: "Pending:1s,Running:2s,Completed"},
    )
    best = {"published-model": "$(flows.train.results.model)"}
    with JobFlow("model-selection", namespace="default", job_retain_policy="retain", results=best) as jf:
        trained = jf.flow(train, results=["accuracy", "model"])
        accepted = jf.flow(publish, when=[(trained.results.accuracy, "in", ["0.92", "0.93", "0.94"])])
        trained >> accepted
    return jf
