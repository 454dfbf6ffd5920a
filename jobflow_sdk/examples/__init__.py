"""Every example of manifests/examples/ written with the SDK, one module each.

`EXAMPLES` maps each module to the YAML files it reproduces exactly (tests/unit/sdk/
test_sdk_examples.py compares them, so the two cannot drift): the JobFlow's (or CronJobFlow's) file
and the file of its JobTemplates (None when the example has none of its own). Each module's
`pipeline()` returns the object, its JobTemplates attached.
"""

from __future__ import annotations

#: module -> (the object's YAML, its JobTemplates' YAML), relative to manifests/examples/.
EXAMPLES: dict[str, tuple[str, str | None]] = {
    "ml_pipeline": ("ml-pipeline-jobflow.yaml", "ml-pipeline-jobtemplates.yaml"),
    "parallel_pipeline": ("parallel-pipeline-jobflow.yaml", "parallel-pipeline-jobtemplates.yaml"),
    "nightly_etl": ("nightly-etl-cronjobflow.yaml", None),
    "conditional_step": ("params/conditional-step-jobflow.yaml", "params/conditional-step-jobtemplates.yaml"),
    "hyperparameter_sweep": (
        "params/hyperparameter-sweep-jobflow.yaml",
        "params/hyperparameter-sweep-jobtemplates.yaml",
    ),
    "model_selection": ("results/model-selection-jobflow.yaml", "results/model-selection-jobtemplates.yaml"),
    "flaky_optional_step": (
        "failure-aware/flaky-optional-step-jobflow.yaml",
        "failure-aware/flaky-optional-step-jobtemplates.yaml",
    ),
    "nightly_report": (
        "failure-aware/nightly-report-jobflow.yaml",
        "failure-aware/nightly-report-jobtemplates.yaml",
    ),
    "on_failure_alerting": (
        "failure-aware/on-failure-alerting-jobflow.yaml",
        "failure-aware/on-failure-alerting-jobtemplates.yaml",
    ),
}
