"""`spec.results` resolved into `status.results` when the JobFlow Succeeds (docs/results.md): a table of
values and what they resolve to, an unresolvable entry left out with one `InvalidResult` Warning, the
recorded results kept by later syncs, and a JobFlow without `spec.results` writing no `results`."""

from __future__ import annotations

from typing import Any

import pytest
from jobflow_fakes import job_flow, job_template, new_fake_controller
from test_jobflow_planner import UID, world_of
from test_jobflow_results import plan, vc_job

from jobflow_controller.apis import Phase
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.controller import JobFlowController
from jobflow_controller.jobflow.own_results import resolve

FLOWS = [
    {"name": "train", "results": {"names": ["acc", "model"]}},
    {"name": "publish", "dependsOn": {"targets": ["train"]}},
]
RECORDED = {"acc": "0.93", "model": "s3://m/42"}


def succeeded_world(own: list[Any] | None, status_phase: str = "Running", extra: dict[str, Any] | None = None) -> Any:
    status = {
        "jobStatusList": [{"name": "f-train", "state": "Completed", "results": RECORDED}],
        **(extra or {}),
    }
    obj = job_flow("f", flows=FLOWS, uid=UID, status=status, phase=status_phase)
    if own is not None:
        obj["spec"]["results"] = own
    obj["spec"]["params"] = [{"name": "bucket", "value": "b1"}]
    return world_of(obj, [vc_job("f-train", "Completed"), vc_job("f-publish", "Completed", uid="u2")])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("$(flows.train.results.model)", "s3://m/42"),
        ("acc=$(flows.train.results.acc) in $(params.bucket)", "acc=0.93 in b1"),
        ("literal", "literal"),
        ("$$(flows.train.results.acc)", "$(flows.train.results.acc)"),
    ],
)
def test_a_value_resolves_when_the_jobflow_succeeds(value: str, expected: str) -> None:
    p = plan(succeeded_world([{"name": "best", "value": value}]))
    assert p.status is not None and p.status.phase == Phase.SUCCEED
    assert p.status_body()["results"] == [{"name": "best", "value": expected}]
    assert [n for n in p.notices if n.reason == c.REASON_INVALID_RESULT] == []


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("$(params.nope)", "result 'best': $(params.nope) has no value"),
        ("$(flows.train.results.acc)" * 2000, "result 'best': value is 8000 bytes, more than the 4096 allowed"),
    ],
)
def test_an_unresolvable_entry_is_left_out_and_named_in_one_warning(value: str, problem: str) -> None:
    own = [{"name": "best", "value": value}, {"name": "ok", "value": "$(flows.train.results.acc)"}]
    p = plan(succeeded_world(own))
    assert p.status_body()["results"] == [{"name": "ok", "value": "0.93"}]
    (notice,) = [n for n in p.notices if n.reason == c.REASON_INVALID_RESULT]
    assert notice.warning and notice.message_fmt == c.MESSAGE_INVALID_OWN_RESULT
    assert notice.args == (problem,)


def test_a_later_sync_keeps_the_recorded_results_and_warns_no_more() -> None:
    recorded = {"results": [{"name": "best", "value": "kept"}]}
    p = plan(succeeded_world([{"name": "best", "value": "$(params.nope)"}], Phase.SUCCEED, recorded))
    assert p.status_body()["results"] == [{"name": "best", "value": "kept"}]
    assert [n for n in p.notices if n.reason == c.REASON_INVALID_RESULT] == []


def test_no_results_before_the_jobflow_succeeds() -> None:
    w = succeeded_world([{"name": "best", "value": "x"}])
    w = world_of(w.job_flow, [vc_job("f-train", "Completed"), vc_job("f-publish", "Running", uid="u2")])
    assert "results" not in plan(w).status_body()


def test_a_jobflow_without_spec_results_writes_no_results() -> None:
    p = plan(succeeded_world(None))
    assert p.status is not None and p.status.phase == Phase.SUCCEED
    assert "results" not in p.status_body()


def test_resolve_keeps_spec_order() -> None:
    found, problems = resolve((("b", "$(x)"), ("a", "1")), {"x": "2"})
    assert found == [{"name": "b", "value": "2"}, {"name": "a", "value": "1"}] and problems == []


def test_the_controller_reports_a_stored_bad_reference_as_invalid_job_flow() -> None:
    controller, clientset, recorder = new_fake_controller()
    obj = job_flow("bad", flows=[{"name": "train", "results": {"names": ["acc"]}}])
    obj["spec"]["results"] = [{"name": "best", "value": "$(flows.train.results.loss)"}]
    controller.job_flow_informer.get_indexer().add(obj)
    controller.job_template_informer.get_indexer().add(job_template("train"))
    controller.sync.handle_job_flow(JobFlowController.request_for("default", "bad"))
    assert [a.verb for a in clientset.api.actions if a.resource == "jobs"] == []
    (event,) = recorder.drain()
    assert event.startswith("Warning InvalidJobFlow") and 'flow "train" declares no result "loss"' in event
