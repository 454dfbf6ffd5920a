"""The name rules upstream never checks: the Job name and the two label values derived from a JobFlow.

The Job name ``<jobflow>-<flow>`` must be a DNS-1123 subdomain (the API server's rule for custom
resource names) of at most 63 characters (Volcano's job webhook requires a qualified name); the label
values ``<namespace>.<jobflow>`` and ``<namespace>.<flow>`` must be valid label values.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.validation import MAX_JOB_NAME_LENGTH, MAX_LABEL_VALUE_LENGTH, validate_job_flow
from jobflow_controller.validation.names import (
    flow_label_problems,
    job_flow_label_problems,
    job_name,
    job_name_problems,
)


def job_flow(*flow_names: str, name: str = "jf", namespace: str = "default") -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if name:
        metadata["name"] = name
    if namespace:
        metadata["namespace"] = namespace
    return {"metadata": metadata, "spec": {"flows": [{"name": n} for n in flow_names]}}


def test_limits_are_the_api_servers() -> None:
    assert MAX_JOB_NAME_LENGTH == 63
    assert MAX_LABEL_VALUE_LENGTH == 63


def test_job_name_is_jobflow_dash_flow() -> None:
    assert job_name("ml-pipeline", "model-training") == "ml-pipeline-model-training"


@pytest.mark.parametrize(
    "flow", ["a", "data-preprocess", "model.v2", "x" * (MAX_JOB_NAME_LENGTH - len("jf-")), "0start", "v1.2.3"]
)
def test_valid_job_names(flow: str) -> None:
    assert job_name_problems("jf", flow) == []


def test_job_name_of_64_characters_is_refused_naming_it() -> None:
    flow = "x" * (MAX_JOB_NAME_LENGTH - len("jf-") + 1)
    assert job_name_problems("jf", flow) == [
        f'jobflow Flow "{flow}": Job name "jf-{flow}" is 64 characters long, it must be at most 63'
    ]


@pytest.mark.parametrize("flow", ["Train", "under_score", "ends-", "dot.", "a..b", "a.-b", "spa ce", "ü"])
def test_job_name_that_is_not_a_lowercase_subdomain_is_refused(flow: str) -> None:
    problems = job_name_problems("jf", flow)
    assert len(problems) == 1
    assert problems[0].startswith(f'jobflow Flow "{flow}": Job name "jf-{flow}" must be a lowercase RFC 1123 subdomain')


def test_label_value_of_the_flow_must_fit_63_characters() -> None:
    flow = "f" * (MAX_LABEL_VALUE_LENGTH - len("default.") + 1)
    assert flow_label_problems("default", flow) == [
        f'jobflow Flow "{flow}": label value "default.{flow}" for volcano.sh/createdByJobTemplate'
        f" is 64 characters long, it must be at most 63"
    ]
    assert flow_label_problems("default", flow[:-1]) == []


def test_label_value_of_the_jobflow_must_fit_63_characters() -> None:
    name = "j" * (MAX_LABEL_VALUE_LENGTH - len("default.") + 1)
    assert job_flow_label_problems("default", name) == [
        f'jobflow "{name}": label value "default.{name}" for volcano.sh/createdByJobFlow'
        f" is 64 characters long, it must be at most 63"
    ]


def test_label_value_with_invalid_characters_is_refused() -> None:
    problems = flow_label_problems("default", "a/b")
    assert problems == [
        'jobflow Flow "a/b": label value "default.a/b" for volcano.sh/createdByJobTemplate must consist of'
        " letters, digits, '-', '_' or '.', and start and end with a letter or digit"
    ]


def test_validate_job_flow_checks_every_rule_after_the_dag_rules() -> None:
    long_flow = "f" * 61
    problems = validate_job_flow(job_flow("ok", long_flow, "Bad", "fine"))
    assert problems == [
        *job_name_problems("jf", long_flow),
        *flow_label_problems("default", long_flow),
        *job_name_problems("jf", "Bad"),
    ]
    assert len(problems) == 3


def test_dag_problems_come_before_name_problems() -> None:
    jf = job_flow("Bad")
    jf["spec"]["flows"].append({"name": "b", "dependsOn": {"targets": ["nope"]}})
    problems = validate_job_flow(jf)
    assert problems[0] == "jobflow Flow is not DAG: vertex is not defined: nope"
    assert problems[1].startswith('jobflow Flow "Bad": Job name "jf-Bad"')


def test_long_jobflow_name_is_refused_once_not_per_flow() -> None:
    name = "n" * 60
    problems = validate_job_flow(job_flow("a", "b", name=name))
    assert problems[0] == job_flow_label_problems("default", name)[0]
    assert sum("createdByJobFlow" in p for p in problems) == 1


def test_duplicate_flow_names_get_name_rules_once() -> None:
    problems = validate_job_flow(job_flow("Bad", "Bad"))
    assert problems == ['jobflow Flow names must be unique: "Bad"', *job_name_problems("jf", "Bad")]


def test_rules_needing_name_or_namespace_are_skipped_without_them() -> None:
    long_flow = "f" * 70
    assert validate_job_flow(job_flow(long_flow, name="", namespace="")) == []
    only_label = validate_job_flow(job_flow(long_flow, name=""))
    assert only_label == flow_label_problems("default", long_flow)
    only_job = validate_job_flow(job_flow(long_flow, namespace=""))
    assert only_job == job_name_problems("jf", long_flow)


def test_messages_quote_names_with_json_escapes() -> None:
    problems = job_name_problems("jf", 'a"b')
    assert problems[0].startswith('jobflow Flow "a\\"b": Job name "jf-a\\"b"')
