"""The size caps (issue 21, ``validation.limits``): at most ``MAX_FLOWS`` flows and ``MAX_TARGETS`` targets a flow.

The same rule serves the webhook (tests/unit/webhook/test_webhook_limits.py refuses over the wire) and
the controller (``InvalidJobFlow``, tests/unit/jobflow/test_jobflow_controller.py); the CRD's
``maxItems`` carry the same numbers (tests/unit/manifests/test_manifests_caps.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from jobflow_controller.validation import (
    MAX_FLOWS,
    MAX_TARGETS,
    size_problems,
    validate_job_flow,
    validate_job_flow_update,
    validation_message,
)


def job_flow(flows: int, targets: tuple[int, ...] = ()) -> dict[str, Any]:
    """``flows`` flows f0, f1, ...; flow ``f<i>`` (from the end) waits for ``targets[i]`` of the first ones.

    The targets are the first flows, so the graph stays a DAG with every target defined.
    """
    spec_flows: list[dict[str, Any]] = [{"name": f"f{i}"} for i in range(flows)]
    for offset, count in enumerate(targets):
        spec_flows[flows - 1 - offset]["dependsOn"] = {"targets": [f"f{i}" for i in range(count)]}
    return {"metadata": {"name": "big", "namespace": "default"}, "spec": {"flows": spec_flows}}


def too_many_targets(flow: str, count: int) -> str:
    return f'jobflow Flow "{flow}": dependsOn.targets: has {count} targets, more than the 100 allowed'


@pytest.mark.parametrize(
    ("flows", "targets", "problems"),
    [
        pytest.param(0, (), [], id="no flows"),
        pytest.param(MAX_FLOWS - 1, (), [], id="499 flows"),
        pytest.param(MAX_FLOWS, (), [], id="500 flows: at the cap"),
        pytest.param(MAX_FLOWS + 1, (), ["jobflow has 501 flows, more than the 500 allowed"], id="501 flows"),
        pytest.param(2_000, (), ["jobflow has 2000 flows, more than the 500 allowed"], id="2000 flows"),
        pytest.param(MAX_TARGETS + 1, (MAX_TARGETS,), [], id="100 targets: at the cap"),
        pytest.param(MAX_TARGETS + 2, (MAX_TARGETS + 1,), [too_many_targets("f101", 101)], id="101 targets"),
        pytest.param(
            300,
            (MAX_TARGETS + 1, MAX_TARGETS, 250),
            [too_many_targets("f297", 250), too_many_targets("f299", 101)],
            id="two flows over the targets cap, in spec order",
        ),
        pytest.param(
            MAX_FLOWS + 1,
            (MAX_TARGETS, MAX_TARGETS + 1),
            ["jobflow has 501 flows, more than the 500 allowed", too_many_targets("f499", 101)],
            id="both caps: flows first",
        ),
        pytest.param(
            MAX_FLOWS,
            (MAX_TARGETS, MAX_TARGETS),
            [],
            id="500 flows, two of them at 100 targets",
        ),
    ],
)
def test_size_caps(flows: int, targets: tuple[int, ...], problems: list[str]) -> None:
    document = job_flow(flows, targets)
    assert validate_job_flow(document) == problems
    assert validation_message(document) == ("; ".join(problems) or None)
    # The controller's check (no patch or retry rules) gives the same.
    assert validate_job_flow(document, patches=False, retries=False) == problems


def test_the_caps_are_500_and_100() -> None:
    assert (MAX_FLOWS, MAX_TARGETS) == (500, 100)


def test_size_problems_come_first_and_the_other_problems_still_follow() -> None:
    document = job_flow(MAX_FLOWS + 1, (MAX_TARGETS + 1,))
    document["spec"]["flows"].append({"name": "f0"})
    document["spec"]["flows"].append({"name": "late", "dependsOn": {"targets": ["nowhere"]}})
    assert validate_job_flow(document) == [
        "jobflow has 503 flows, more than the 500 allowed",
        too_many_targets("f500", 101),
        'jobflow Flow names must be unique: "f0"',
        "jobflow Flow is not DAG: vertex is not defined: nowhere",
    ]


def test_repeated_targets_count_as_written() -> None:
    # The CRD's maxItems counts list items, not distinct names: so does the rule.
    document = job_flow(2)
    document["spec"]["flows"][1]["dependsOn"] = {"targets": ["f0"] * (MAX_TARGETS + 1)}
    assert validate_job_flow(document) == [too_many_targets("f1", 101)]


def test_malformed_flows_and_targets_are_counted_as_the_rest_of_the_rules_read_them() -> None:
    # A non-list targets field is no targets (as upstream's graph has it); every entry of spec.flows counts.
    assert size_problems([("a", "not-a-list")]) == []
    document: dict[str, Any] = {"spec": {"flows": [None] * (MAX_FLOWS + 1)}}
    assert validate_job_flow(document)[0] == "jobflow has 501 flows, more than the 500 allowed"


def test_an_update_leaving_the_flows_alone_is_not_refused_for_the_caps() -> None:
    # Ratchet (as the webhook's other rules beyond upstream's, and as the API server's for maxItems):
    # a JobFlow stored over the caps can still be labelled; changing its flows is checked in full.
    old = job_flow(MAX_FLOWS + 1, (MAX_TARGETS + 1,))
    labelled = {**old, "metadata": {**old["metadata"], "labels": {"team": "a"}}}
    assert validate_job_flow_update(labelled, old) == []
    grown = job_flow(MAX_FLOWS + 2, (MAX_TARGETS + 1,))
    assert validate_job_flow_update(grown, old) == [
        "jobflow has 502 flows, more than the 500 allowed",
        too_many_targets("f501", 101),
    ]
    shrunk = job_flow(MAX_FLOWS, (MAX_TARGETS,))
    assert validate_job_flow_update(shrunk, old) == []


# --- why 500: the stored object of a JobFlow at the cap stays well under etcd's request limit ----------

#: etcd's default --max-request-bytes: a write of a larger object fails, the status write included.
ETCD_REQUEST_LIMIT = 1_572_864  # 1.5 MiB
TIMES = [f"2026-08-20T10:{minute:02d}:{(minute * 7) % 60:02d}Z" for minute in range(8)]


def realistic_object_at_the_cap() -> tuple[dict[str, Any], dict[str, Any]]:
    """A 500-flow JobFlow half-way through, as stored, and its status's managedFields entry.

    The JobFlow is 19 characters, flows 20 (Job names 40), each flow waits for two; 200 Jobs
    Completed, 200 Running, 100 Pending; every Job with two tasks counted in its condition and four
    running histories (Pending, Running, Restarting, Running) and a restart in ``jobStatusList``.
    """
    from jobflow_controller.apis.status import Condition, JobFlowStatus, JobRunningHistory, JobStatus

    flows = [f"preprocess-shard-{i:03d}" for i in range(MAX_FLOWS)]
    jobs = [f"ml-pipeline-nightly-{name}" for name in flows]
    states = ["Completed"] * 200 + ["Running"] * 200 + ["Pending"] * 100
    status = JobFlowStatus(phase="Running", completed_jobs=jobs[:200], running_jobs=jobs[200:400])
    status.pending_jobs = jobs[400:]
    counts = {"master": {"phase": {"Running": 1}}, "worker": {"phase": {"Running": 4, "Pending": 2}}}
    for job, state in zip(jobs, states, strict=True):
        histories = [
            JobRunningHistory(state=s, start_timestamp=TIMES[k], end_timestamp=TIMES[k + 1])
            for k, s in enumerate(["Pending", "Running", "Restarting", "Running"])
        ]
        end = TIMES[7] if state == "Completed" else None
        status.job_status_list.append(JobStatus(job, state, TIMES[0], end, 1, histories))
        status.conditions[job] = Condition(state, TIMES[0], "1h2m3.456789s", counts)
    spec_flows: list[dict[str, Any]] = [{"name": flows[0]}, {"name": flows[1]}]
    spec_flows += [{"name": f, "dependsOn": {"targets": [flows[i - 1], flows[i - 2]]}} for i, f in enumerate(flows)][2:]
    metadata = {"name": "ml-pipeline-nightly", "namespace": "team-ml-research", "uid": "0" * 36, "generation": 1}
    stored = {"metadata": metadata, "spec": {"flows": spec_flows, "jobRetainPolicy": "retain"}}
    stored["status"] = status.to_dict()
    # Server-side field tracking: `conditions` is a map, so each key and field is listed; the lists are atomic.
    task = {".": {}, "f:phase": {".": {}, "f:Running": {}}}
    condition = {".": {}, "f:createTime": {}, "f:phase": {}, "f:runningDuration": {}, "f:taskStatusCount": {}}
    condition["f:taskStatusCount"] = {
        ".": {},
        "f:master": task,
        "f:worker": {**task, "f:phase": {**task["f:phase"], "f:Pending": {}}},
    }
    conditions = {".": {}, **{f"f:{job}": condition for job in jobs}}
    managed = {"f:status": {".": {}, "f:conditions": conditions, "f:jobStatusList": {}, "f:state": {"f:phase": {}}}}
    return stored, managed


def size(document: object) -> int:
    return len(json.dumps(document, separators=(",", ":")))


def test_a_jobflow_at_the_flow_cap_is_stored_in_well_under_etcds_request_limit() -> None:
    # docs/operations.md, "Limits": about 830 bytes of status a flow, 1,300 with the spec, the status's
    # managedFields and kubectl's last-applied copy of the spec: 640 KiB for 500 flows, 41% of 1.5 MiB.
    stored, managed = realistic_object_at_the_cap()
    status, spec = size(stored["status"]), size(stored["spec"])
    assert 800 * MAX_FLOWS < status < 860 * MAX_FLOWS
    total = size(stored) + size(managed) + spec  # the spec twice: kubectl's last-applied-configuration
    assert 1_250 * MAX_FLOWS < total < 1_350 * MAX_FLOWS
    assert total < ETCD_REQUEST_LIMIT / 2
    # Each further running history costs about 100 bytes a flow: some 18 more a Job reach the limit.
    history = size({"startTimestamp": TIMES[0], "endTimestamp": TIMES[1], "state": "Running"}) + 1
    assert history == 98
    assert 17 < (ETCD_REQUEST_LIMIT - total) / (history * MAX_FLOWS) < 20
