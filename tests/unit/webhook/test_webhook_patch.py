"""What the webhook says about `spec.flows[].patch` (ours: upstream ignores the field), posted as real reviews.

Admission cannot see the JobTemplate, so it refuses only what is wrong whatever the template holds:
the patch's shape, patch tasks (and containers, env, ports, volume mounts, volumes) without their
key, two entries of one keyed list with the same key. A patch task the template lacks is the
controller's to report (`InvalidPatch`, tests/unit/jobflow/test_jobflow_patch.py).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from webhook_support import WebhookClient, flow, job_flow, review

from jobflow_controller.validation import validation_message


def patched(name: str, job_spec: object, *targets: str) -> dict[str, Any]:
    return {**flow(name, *targets), "patch": {"jobSpec": job_spec}}


def message(response: dict[str, Any]) -> str:
    assert response["allowed"] is False
    text: str = response["status"]["message"]
    return text


def test_a_valid_patch_is_allowed(client: WebhookClient) -> None:
    job_spec = {
        "maxRetry": 3,
        "queue": "default",
        "tasks": [
            {
                "name": "worker",
                "replicas": 4,
                "template": {"spec": {"containers": [{"name": "main", "image": "x", "env": [{"name": "A"}]}]}},
            }
        ],
    }
    assert client.review(review(job_flow(flow("a"), patched("train", job_spec, "a"))))["allowed"] is True


def test_a_patch_task_the_template_may_lack_is_allowed(client: WebhookClient) -> None:
    """Only the controller sees the template; it reports such a task with an InvalidPatch event."""
    response = client.review(review(job_flow(patched("train", {"tasks": [{"name": "no-such-task"}]}))))
    assert response["allowed"] is True


def test_a_patch_task_without_a_name_is_denied(client: WebhookClient) -> None:
    response = client.review(review(job_flow(patched("train", {"tasks": [{"name": "ps"}, {"replicas": 2}]}))))
    assert message(response) == (
        'jobflow Flow "train": patch.jobSpec.tasks[1]: has no name '
        "(patch entries are matched to the template's by name)"
    )


def test_two_patch_tasks_with_one_name_are_denied(client: WebhookClient) -> None:
    response = client.review(review(job_flow(patched("train", {"tasks": [{"name": "w"}, {"name": "w"}]}))))
    assert message(response) == 'jobflow Flow "train": patch.jobSpec.tasks[1]: name "w" is already used by tasks[0]'


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ("replicas=3", 'jobflow Flow "train": patch: must be an object, not a string'),
        ({"jobSpec": [{"name": "w"}]}, 'jobflow Flow "train": patch.jobSpec: must be an object, not an array'),
        (
            {"jobSpec": {"tasks": {"w": {}}}},
            'jobflow Flow "train": patch.jobSpec.tasks: must be an array, not an object',
        ),
        ({"jobSpec": {"tasks": [None]}}, 'jobflow Flow "train": patch.jobSpec.tasks[0]: must be an object, not null'),
        (
            {"jobSpec": {"tasks": [{"name": 1}]}},
            'jobflow Flow "train": patch.jobSpec.tasks[0].name: must be a string, not a number',
        ),
        (
            {
                "jobSpec": {
                    "tasks": [{"name": "w", "template": {"spec": {"containers": [{"name": "c", "ports": [{}]}]}}}]
                }
            },
            'jobflow Flow "train": patch.jobSpec.tasks[0].template.spec.containers[0].ports[0]: has no containerPort '
            "(patch entries are matched to the template's by containerPort and protocol)",
        ),
    ],
    ids=["patch-string", "job-spec-array", "tasks-object", "task-null", "name-number", "port-without-number"],
)
def test_a_patch_of_the_wrong_shape_is_denied(client: WebhookClient, patch: object, expected: str) -> None:
    response = client.review(review(job_flow({**flow("train"), "patch": patch})))
    assert message(response) == expected


def test_patch_problems_come_after_the_dag_problems_each_flow_in_spec_order(client: WebhookClient) -> None:
    response = client.review(
        review(
            job_flow(
                patched("b", {"tasks": [{"replicas": 1}]}, "missing"),
                patched("a", {"tasks": [{"name": "x"}, {"name": "x"}]}),
            )
        )
    )
    assert message(response) == (
        "jobflow Flow is not DAG: vertex is not defined: missing; "
        'jobflow Flow "b": patch.jobSpec.tasks[0]: has no name (patch entries are matched to the template\'s by name); '
        'jobflow Flow "a": patch.jobSpec.tasks[1]: name "x" is already used by tasks[0]'
    )


def test_an_update_that_leaves_a_stored_bad_patch_alone_is_allowed(client: WebhookClient) -> None:
    """The ratchet of docs/webhook.md: a patch is part of spec.flows."""
    old = job_flow(patched("train", {"tasks": [{"replicas": 1}]}))
    annotated = copy.deepcopy(old)
    annotated["metadata"]["annotations"] = {"team": "ml"}
    assert client.review(review(annotated, operation="UPDATE", old=old))["allowed"] is True


def test_an_update_that_changes_the_flows_is_held_to_the_patch_rules(client: WebhookClient) -> None:
    old = job_flow(patched("train", {"tasks": [{"replicas": 1}]}))
    new = job_flow(patched("train", {"tasks": [{"replicas": 2}]}))
    assert message(client.review(review(new, operation="UPDATE", old=old))).startswith(
        'jobflow Flow "train": patch.jobSpec.tasks[0]: has no name'
    )


def test_the_controller_leaves_patch_problems_out_of_the_whole_job_flows_check() -> None:
    bad = job_flow(patched("train", {"tasks": [{"replicas": 1}]}))
    assert validation_message(bad) is not None
    assert validation_message(bad, patches=False) is None
