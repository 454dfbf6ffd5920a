"""What admission refuses in a CronJobFlow (validation/cronjobflow.py), message by message."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobflow_controller.validation.cronjobflow import (
    MAX_NAME_LENGTH,
    MAX_STARTING_DEADLINE_SECONDS,
    cron_job_flow_problems,
)


def cron(name: str = "nightly", namespace: str = "ns", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schedule": "0 2 * * *",
        "jobFlowTemplate": {
            "spec": {"flows": [{"name": "extract"}, {"name": "load", "dependsOn": {"targets": ["extract"]}}]}
        },
    }
    body.update(spec)
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "CronJobFlow",
        "metadata": {"name": name, "namespace": namespace},
        "spec": body,
    }


def test_a_valid_cronjobflow_has_no_problem() -> None:
    assert (
        cron_job_flow_problems(cron(timeZone="Europe/Berlin", concurrencyPolicy="Replace", startingDeadlineSeconds=0))
        == []
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"schedule": "61 * * * *"}, 'spec.schedule: invalid schedule "61 * * * *": Bad minute'),
        (
            {"schedule": "* * * *"},
            "spec.schedule: invalid schedule \"* * * *\": expected exactly 5 fields, found 4: ['*', '*', '*', '*']",
        ),
        ({"schedule": "@every 5m"}, 'spec.schedule: invalid schedule "@every 5m": unrecognized descriptor: @every 5m'),
        ({"schedule": ""}, 'spec.schedule: required, a cron schedule such as "0 2 * * *" or @daily'),
        (
            {"schedule": "TZ=UTC 0 2 * * *"},
            'spec.schedule: cannot use TZ or CRON_TZ in schedule "TZ=UTC 0 2 * * *", use spec.timeZone instead',
        ),
        (
            {"schedule": "CRON_TZ=Europe/Berlin 0 2 * * *"},
            'spec.schedule: cannot use TZ or CRON_TZ in schedule "CRON_TZ=Europe/Berlin 0 2 * * *",'
            " use spec.timeZone instead",
        ),
        (
            {"timeZone": "Mars/Olympus"},
            'spec.timeZone: unknown time zone "Mars/Olympus": not an IANA time zone name such as Europe/Berlin',
        ),
        (
            {"timeZone": "Local"},
            'spec.timeZone: unknown time zone "Local": not an IANA time zone name such as Europe/Berlin',
        ),
        (
            {"concurrencyPolicy": "Sometimes"},
            'spec.concurrencyPolicy: must be one of Allow, Forbid, Replace, got "Sometimes"',
        ),
        (
            {"schedule": "*/99999999999999999999 * * * *"},
            'spec.schedule: invalid schedule "*/99999999999999999999 * * * *": minute field: step'
            " 99999999999999999999 is larger than the field's 60 values (0-59); it would fire only at the"
            " start of each range",
        ),
        ({"startingDeadlineSeconds": -1}, "spec.startingDeadlineSeconds: must not be negative, got -1"),
        (
            {"startingDeadlineSeconds": 31_536_001},
            "spec.startingDeadlineSeconds: must be at most 31536000 (one year), got 31536001",
        ),
        (
            {"startingDeadlineSeconds": 10**11},
            "spec.startingDeadlineSeconds: must be at most 31536000 (one year), got 100000000000",
        ),
        (
            {"startingDeadlineSeconds": 2**63 - 1},
            "spec.startingDeadlineSeconds: must be at most 31536000 (one year), got 9223372036854775807",
        ),
        (
            {"startingDeadlineSeconds": 10**40},
            "spec.startingDeadlineSeconds: must be at most 31536000 (one year), got a 41-digit number",
        ),
        ({"successfulJobFlowsHistoryLimit": -3}, "spec.successfulJobFlowsHistoryLimit: must not be negative, got -3"),
        ({"failedJobFlowsHistoryLimit": -1}, "spec.failedJobFlowsHistoryLimit: must not be negative, got -1"),
        ({"failedJobFlowsHistoryLimit": "1"}, 'spec.failedJobFlowsHistoryLimit: must be an integer, got "1"'),
        ({"jobFlowTemplate": None}, "spec.jobFlowTemplate: required, the JobFlow each run is made from"),
    ],
)
def test_each_field_refused_with_its_message(spec: dict[str, Any], message: str) -> None:
    assert cron_job_flow_problems(cron(**spec)) == [message]


def test_a_deadline_of_exactly_one_year_is_allowed() -> None:
    assert cron_job_flow_problems(cron(startingDeadlineSeconds=MAX_STARTING_DEADLINE_SECONDS)) == []
    assert MAX_STARTING_DEADLINE_SECONDS == 31_536_000


def test_a_name_longer_than_cronjobs_52_characters_is_refused() -> None:
    name = "a" * (MAX_NAME_LENGTH + 1)
    problems = cron_job_flow_problems(cron(name, namespace="n"))
    assert problems[0] == f'metadata.name: must be no more than 52 characters, "{name}" has 53'


def test_a_name_whose_runs_jobs_break_the_job_name_rules_is_refused_with_the_jobflow_rule() -> None:
    name = "n" * 40  # fine alone; "<40>-<8 digits>-extract" is 57, "...-load" 54: both fit; a longer flow does not
    doc = cron(name, namespace="n", jobFlowTemplate={"spec": {"flows": [{"name": "transform-the-data"}]}})
    assert cron_job_flow_problems(doc) == [
        f'spec.jobFlowTemplate.spec: jobflow Flow "transform-the-data": Job name "{name}-<minutes>-transform-the-data"'
        " is 68 characters long, it must be at most 63"
    ]


def test_a_name_whose_runs_label_would_be_too_long_in_its_namespace_is_refused() -> None:
    name = "n" * 50
    problems = cron_job_flow_problems(
        cron(name, namespace="default", jobFlowTemplate={"spec": {"flows": [{"name": "a"}]}})
    )
    assert problems == [
        f'spec.jobFlowTemplate.spec: jobflow "{name}-<minutes>": label value "default.{name}-<minutes>"'
        " for volcano.sh/createdByJobFlow is 67 characters long, it must be at most 63"
    ]


@pytest.mark.parametrize(
    ("flows", "message"),
    [
        ([{"name": "a"}, {"name": "a"}], 'jobflow Flow names must be unique: "a"'),
        ([{"name": "a", "dependsOn": {"targets": ["b"]}}], "jobflow Flow is not DAG: vertex is not defined: b"),
        ([{"name": "a", "dependsOn": {"targets": ["a"]}}], "jobflow Flow is not DAG"),
    ],
)
def test_the_template_spec_gets_every_jobflow_rule(flows: list[dict[str, Any]], message: str) -> None:
    assert cron_job_flow_problems(cron(jobFlowTemplate={"spec": {"flows": flows}})) == [
        f"spec.jobFlowTemplate.spec: {message}"
    ]


def test_the_template_spec_gets_the_lifecycle_rules_too() -> None:
    doc = cron(jobFlowTemplate={"spec": {"flows": [{"name": "a"}], "ttlSecondsAfterFinished": -1}})
    assert cron_job_flow_problems(doc) == [
        "spec.jobFlowTemplate.spec: spec.ttlSecondsAfterFinished: must not be negative, got -1"
    ]


def test_several_problems_are_all_reported_in_order() -> None:
    problems = cron_job_flow_problems(cron(schedule="61 * * * *", timeZone="Nowhere", startingDeadlineSeconds=-5))
    assert [p.split(":")[0] for p in problems] == ["spec.schedule", "spec.timeZone", "spec.startingDeadlineSeconds"]


def test_an_update_that_leaves_spec_alone_always_passes() -> None:
    stored = cron(schedule="61 * * * *")  # stored before the webhook was installed
    relabelled = copy.deepcopy(stored)
    relabelled["metadata"]["labels"] = {"team": "data"}
    assert cron_job_flow_problems(relabelled, stored) == []
    changed = copy.deepcopy(stored)
    changed["spec"]["suspend"] = True
    assert cron_job_flow_problems(changed, stored) == ['spec.schedule: invalid schedule "61 * * * *": Bad minute']
