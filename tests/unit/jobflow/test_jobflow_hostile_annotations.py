"""Tenant annotations the controller cannot read (issue 33 item 2, docs/hostile-input.md).

A JobFlow whose `flow.volcano.sh/retry-request` and `flow.volcano.sh/retry` hold 5,000 `[` (what
no webhook let through, or was stored while it was off), touched again and again: the informer's
handlers never raise, each cause gets one Warning per generation and one log line, and the JobFlow
is otherwise synced as any other.
"""

from __future__ import annotations

import copy
from typing import Any

import structlog
from jobflow_fakes import job_flow, job_template, new_fake_controller

from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION
from jobflow_controller.apis.retry import RETRY_ANNOTATION
from jobflow_controller.jobflow.controller import JobFlowController
from jobflow_controller.jobflow.input_warnings import MAX_MESSAGE

HOSTILE = "[" * 5000


def _flow(annotations: dict[str, str], *, generation: int = 1, rv: str = "1") -> dict[str, Any]:
    obj = job_flow("f", flows=[{"name": "a"}], uid="uid-f", generation=generation, rv=rv)
    obj["metadata"]["annotations"] = dict(annotations)
    return obj


def _controller(flow: dict[str, Any]) -> tuple[JobFlowController, Any, Any]:
    controller, clientset, recorder = new_fake_controller()
    clientset.api.objects[("jobflows", "default", "f")] = flow
    controller.job_flow_informer.get_indexer().add(flow)
    controller.job_template_informer.get_indexer().add(job_template("a"))
    return controller, clientset, recorder


def _sync(controller: JobFlowController, clientset: Any) -> None:
    controller.sync.handle_job_flow(JobFlowController.request_for("default", "f"))
    controller.job_flow_informer.get_indexer().update(clientset.api.objects[("jobflows", "default", "f")])


def _warnings(recorder: Any) -> list[str]:
    return [e for e in recorder.drain() if e.startswith("Warning")]


BOTH = {RETRY_REQUEST_ANNOTATION: HOSTILE, RETRY_ANNOTATION: HOSTILE}


def test_the_update_handler_never_raises_on_5000_brackets_and_queues_the_job_flow_once() -> None:
    controller, _, _ = _controller(_flow({}))
    old = _flow({}, rv="1")
    for i in range(2, 12):
        new = _flow(BOTH | {"touched": str(i)}, rv=str(i))
        controller.handlers.update_job_flow(old, new)  # before the fix: RecursionError
        old = new
    assert len(controller.queue) == 1  # the malformed request appeared once; touches queue nothing
    assert controller.handlers.add_job_flow(old) is None


def test_5000_brackets_get_one_warning_per_cause_per_generation_and_the_flows_still_run() -> None:
    flow = _flow(BOTH)
    controller, clientset, recorder = _controller(flow)
    with structlog.testing.capture_logs() as logs:
        for _ in range(5):
            _sync(controller, clientset)  # before the fix: RecursionError out of the sync
    warnings = _warnings(recorder)
    assert sorted(w.split(" ", 2)[1] for w in warnings) == ["InvalidRetryPolicy", "InvalidRetryRequest"]
    assert (
        "Warning InvalidRetryRequest Re-run request ignored: annotation flow.volcano.sh/retry-request: "
        "not valid JSON: nested deeper than 8 levels"
    ) in warnings
    assert (
        "Warning InvalidRetryPolicy No retries for these flows: annotation flow.volcano.sh/retry: "
        "not valid JSON: nested deeper than 8 levels"
    ) in warnings
    assert [entry for entry in logs if entry["log_level"] in ("warning", "error")] == []  # the events' own lines only
    assert ("create", "f-a") in clientset.api.verbs("jobs")  # the JobFlow is served as any other


def test_a_new_generation_warns_again() -> None:
    flow = _flow(BOTH)
    controller, clientset, recorder = _controller(flow)
    _sync(controller, clientset)
    assert len(_warnings(recorder)) == 2
    bumped = copy.deepcopy(clientset.api.objects[("jobflows", "default", "f")])
    bumped["metadata"]["generation"] = 2
    clientset.api.objects[("jobflows", "default", "f")] = bumped
    controller.job_flow_informer.get_indexer().update(bumped)
    _sync(controller, clientset)
    _sync(controller, clientset)
    assert len(_warnings(recorder)) == 2


def test_a_warning_quoting_a_long_value_is_cut() -> None:
    long_name = "x" * 60_000
    flow = _flow({RETRY_REQUEST_ANNOTATION: '{"id": "r", "flows": ["' + long_name + '"]}'})
    controller, clientset, recorder = _controller(flow)
    _sync(controller, clientset)
    (warning,) = _warnings(recorder)
    assert len(warning) < MAX_MESSAGE + 100
    assert 'no flow of this JobFlow is named "xxxx' in warning


def test_a_deleted_job_flow_is_forgotten() -> None:
    controller, clientset, _ = _controller(_flow(BOTH))
    _sync(controller, clientset)
    assert len(controller.sync.input_warnings) == 1
    controller.memories.forget("default", "f")
    assert len(controller.sync.input_warnings) == 0
