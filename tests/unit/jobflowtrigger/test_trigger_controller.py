"""The trigger controller's decisions (jobflowtrigger/controller.py), with fake caches and API: an
invalid trigger is reported once per generation, a kind that may not be watched is TriggerFailed,
the endpoint's 404/429/400/202, and which resource events queue a firing."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from trigger_fakes import FakeApi, Recorder, trigger

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.jobflowtrigger.controller import JobFlowTriggerController
from jobflow_controller.jobflowtrigger.ratelimit import TriggerRateLimiter
from jobflow_controller.jobflowtrigger.runs import TriggerRuns
from jobflow_controller.kube.errors import ForbiddenError, InvalidError


class FakeInformer:
    def add_event_handler(self, handler: Any) -> None:
        pass

    def has_synced(self) -> bool:
        return True


class FakeLister:
    def __init__(self, objects: dict[str, dict[str, Any]]) -> None:
        self.objects = objects

    def job_flow_triggers(self, namespace: str) -> FakeLister:
        return self

    def job_flows(self, namespace: str) -> FakeLister:
        return self

    def get(self, name: str) -> dict[str, Any]:
        if name not in self.objects:
            raise NotFoundError(name)
        return self.objects[name]

    def list(self) -> list[dict[str, Any]]:
        return list(self.objects.values())


class FakeFactory:
    def __init__(self, api: FakeApi) -> None:
        self.api = api

    def job_flows(self) -> FakeFactory:
        return self

    def informer(self) -> FakeInformer:
        return FakeInformer()

    def lister(self) -> FakeLister:
        return FakeLister(self.api.objects["flows"])


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def controller(*triggers: dict[str, Any]) -> tuple[JobFlowTriggerController, FakeApi, Recorder]:
    api, recorder = FakeApi(), Recorder()
    for t in triggers:
        api.objects["triggers"][t["metadata"]["name"]] = t
    ctrl = JobFlowTriggerController(
        api,  # type: ignore[arg-type]
        FakeFactory(api),  # type: ignore[arg-type]
        recorder,
        watch_kinds=["v1/ConfigMap"],
        limiter=TriggerRateLimiter(clock=Clock()),
    )
    ctrl.trigger_lister = FakeLister(api.objects["triggers"])
    ctrl.runs = TriggerRuns(api, recorder, ctrl.children_of)  # type: ignore[arg-type]
    return ctrl, api, recorder


def named(name: str, **spec: Any) -> dict[str, Any]:
    obj = trigger(**spec)
    obj["metadata"] = {**obj["metadata"], "name": name, "uid": f"uid-{name}", "generation": 1}
    return obj


def failed(recorder: Recorder) -> list[str]:
    return [message for _t, reason, message in recorder.events if reason == "TriggerFailed"]


def test_an_invalid_trigger_is_reported_once_per_generation() -> None:
    bad = named("bad", concurrencyPolicy="Sometimes")
    ctrl, api, recorder = controller(bad)
    ctrl.sync_handler("team/bad")
    ctrl.sync_handler("team/bad")
    assert len(failed(recorder)) == 1 and "spec.concurrencyPolicy" in failed(recorder)[0]
    api.objects["triggers"]["bad"] = {**bad, "metadata": {**bad["metadata"], "generation": 2}}
    ctrl.sync_handler("team/bad")
    assert len(failed(recorder)) == 2


def test_a_kind_the_controller_may_not_watch_is_trigger_failed_and_not_watched() -> None:
    secret = named("secret", http=None, resource={"apiVersion": "v1", "kind": "Secret"})
    del secret["spec"]["http"]
    ctrl, _, recorder = controller(secret)
    ctrl.sync_handler("team/secret")
    assert any("may not watch v1/Secret" in m for m in failed(recorder))
    assert ctrl.watches.running() == []


def test_the_endpoint_refuses_unknown_and_resource_triggers_with_404() -> None:
    cm = named("cm", resource={"apiVersion": "v1", "kind": "ConfigMap"})
    del cm["spec"]["http"]
    ctrl, _, _ = controller(cm)
    assert ctrl.admit("team", "nope").code == 404  # type: ignore[union-attr]
    assert ctrl.admit("team", "cm").code == 404  # type: ignore[union-attr]


def test_the_endpoint_answers_429_past_the_burst() -> None:
    ctrl, _, _ = controller(named("etl", http={}))
    answers = [ctrl.admit("team", "etl") for _ in range(6)]
    assert answers[:5] == [None] * 5
    assert answers[5] is not None and answers[5].code == 429 and answers[5].retry_after == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("body", "params", "code"),
    [
        (b'{"dataset": "d"}', [{"name": "dataset", "cel": "body.dataset"}], 202),
        (b"{oops", [{"name": "dataset", "cel": "body.dataset"}], 400),
        (b"{}", [{"name": "dataset", "cel": "body.dataset"}], 400),
        (b'{"dataset": ["a"]}', [{"name": "dataset", "cel": "body.dataset"}], 400),
        (b"{}", [{"name": "dataset", "value": "x", "cel": "body"}], 400),
    ],
)
def test_a_firing_by_http_answers_with_its_code(body: bytes, params: list[Any], code: int) -> None:
    ctrl, api, recorder = controller(named("etl", http={}, params=params))
    answer = ctrl.fire("team", "etl", body)
    assert answer.code == code, answer.body
    assert bool([c for c in api.calls if c[0] == "create"]) is (code == 202)
    if code == 202:
        assert answer.body["jobFlow"] in api.objects["flows"]
        assert recorder.events[-1][1] == "Triggered"


WEBHOOK_DENIAL = 'admission webhook "jobflows.flow.volcano.sh" denied the request: param "nope" is not declared'


@pytest.mark.parametrize(
    ("refusal", "code"),
    [
        (ApiStatusError(400, "", WEBHOOK_DENIAL), 400),  # the webhook refuses the run's params
        (ApiStatusError(400, "BadRequest", "the run is malformed"), 400),
        (InvalidError(422, "Invalid", "spec.params[0].value: Too long"), 400),  # the CRD's schema or rules
        (ForbiddenError(403, "Forbidden", "the controller may not create jobflows"), 500),
        (ApiStatusError(500, "InternalError", "etcdserver: request timed out"), 500),
        (ApiStatusError(503, "ServiceUnavailable", "the webhook is unreachable"), 500),
        (OSError("connection reset by peer"), 500),
    ],
)
def test_a_run_the_api_server_refuses_as_invalid_answers_400_else_500(refusal: Exception, code: int) -> None:
    ctrl, api, recorder = controller(named("etl", http={}, params=[{"name": "nope", "cel": "body.d"}]))
    api.refuse = refusal
    answer = ctrl.fire("team", "etl", b'{"d": "x"}')
    assert answer.code == code, answer.body
    assert answer.body["message"] == f"cannot create the jobflow: {refusal}"
    assert failed(recorder) == [f"cannot create the jobflow: {refusal}"]  # the Warning names the cause
    assert api.objects["flows"] == {}
    assert api.objects["triggers"]["etl"]["status"] == {}  # nothing counted


def test_only_matching_changes_of_the_triggers_namespace_queue_a_firing() -> None:
    cm = named("cm", resource={"apiVersion": "v1", "kind": "ConfigMap", "labelSelector": {"matchLabels": {"a": "1"}}})
    del cm["spec"]["http"]
    ctrl, _, _ = controller(cm)
    obj = {"metadata": {"name": "x", "namespace": "team", "labels": {"a": "1"}}}
    ctrl._resource_event("v1/ConfigMap", "update", obj, copy.deepcopy(obj))
    ctrl._resource_event("v1/ConfigMap", "update", {"metadata": {"name": "y", "namespace": "team"}}, None)
    ctrl._resource_event("v1/Secret", "update", obj, None)
    assert ctrl.firings.qsize() == 1
    namespace, name, event, variables = ctrl.firings.get_nowait()
    assert (namespace, name, event, variables["type"]) == ("team", "cm", "update", "update")


def test_only_a_new_generation_of_a_trigger_is_synced_again() -> None:
    ctrl, _, _ = controller()
    old = named("etl", http={})
    ctrl._trigger_update(old, {**old, "status": {"triggeredCount": 1}})
    assert len(ctrl.queue) == 0
    ctrl._trigger_update(old, {**old, "metadata": {**old["metadata"], "generation": 2}})
    assert len(ctrl.queue) == 1


def test_without_its_crd_the_trigger_controller_logs_its_own_line() -> None:
    import threading

    from structlog.testing import capture_logs

    from jobflow_controller.cronjobflow.crd_wait import wait_for_crd
    from jobflow_controller.jobflowtrigger.controller import MESSAGE_WAITING

    class StopOnSleep:
        def sleep(self, seconds: float, stop: threading.Event) -> bool:
            stop.set()
            return True

    with capture_logs() as logs:
        waited = wait_for_crd(lambda: False, threading.Event(), StopOnSleep(), waiting=MESSAGE_WAITING)  # type: ignore[arg-type]
    assert waited is False
    assert [entry["event"] for entry in logs] == [MESSAGE_WAITING]
    assert "JobFlowTrigger CRD" in MESSAGE_WAITING


def template(*params: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": "tpl", "namespace": "team"}, "spec": {"params": list(params), "jobFlow": {}}}


DATASET = {"name": "dataset", "default": "daily"}
REQUIRED = {"name": "dataset"}
BY_BODY = [{"name": "dataset", "cel": "body.d"}]
UNDECLARED = [{"name": "nope", "cel": "body.d"}]
UNDECLARED_MESSAGE = 'the bound params do not fit the template: param "nope" is not declared by JobFlowTemplate "tpl"'
MISSING_MESSAGE = (
    'the bound params do not fit the template: param "dataset" is required by JobFlowTemplate "tpl" and has no value'
)


@pytest.mark.parametrize(
    ("tpl", "params", "code", "message"),
    [
        (template(DATASET), BY_BODY, 202, None),
        (template(DATASET), [], 202, None),  # the default fills it
        (template(REQUIRED), BY_BODY, 202, None),
        (None, UNDECLARED, 202, None),  # no template yet: the run waits for it, as documented
        (template(DATASET), UNDECLARED, 400, UNDECLARED_MESSAGE),
        (template(REQUIRED), [], 400, MISSING_MESSAGE),
    ],
)
def test_params_the_template_refuses_answer_400_and_make_no_run(
    tpl: dict[str, Any] | None, params: list[Any], code: int, message: str | None
) -> None:
    """Issue 46: without the webhook such a run was created, refused by the JobFlow controller, and
    stayed active, so under Forbid every later firing got 409."""
    ctrl, api, recorder = controller(named("etl", http={}, params=params, concurrencyPolicy="Forbid"))
    if tpl is not None:
        api.objects["templates"]["tpl"] = tpl
    answer = ctrl.fire("team", "etl", b'{"d": "x"}')
    assert answer.code == code, answer.body
    assert len(api.objects["flows"]) == (code == 202)
    if message is not None:
        assert answer.body["message"] == message
        assert failed(recorder) == [message]  # the Warning names the cause
        assert api.objects["triggers"]["etl"]["status"] == {}  # nothing counted, nothing active


def test_a_resource_event_the_template_refuses_is_trigger_failed_and_makes_no_run() -> None:
    cm = named("cm", resource={"apiVersion": "v1", "kind": "ConfigMap"}, params=[{"name": "nope", "value": "x"}])
    del cm["spec"]["http"]
    ctrl, api, recorder = controller(cm)
    api.objects["templates"]["tpl"] = template(DATASET)
    ctrl._fire(cm, {"object": {}, "oldObject": None, "type": "create"})
    assert failed(recorder) == [UNDECLARED_MESSAGE] and api.objects["flows"] == {}


class BrokenTemplates(FakeApi):
    def job_flow_templates(self, namespace: str) -> Any:
        raise ApiStatusError(500, "InternalError", "etcdserver: request timed out")


def test_a_template_that_cannot_be_read_fails_the_firing_with_500() -> None:
    ctrl, _, recorder = controller(named("etl", http={}))
    api = BrokenTemplates()
    api.objects["triggers"]["etl"] = named("etl", http={})
    ctrl.runs = TriggerRuns(api, recorder, ctrl.children_of)  # type: ignore[arg-type]
    answer = ctrl.fire("team", "etl", b"{}")
    assert answer.code == 500 and "cannot read jobflowtemplate tpl" in answer.body["message"]
    assert api.objects["flows"] == {} and failed(recorder) == [answer.body["message"]]
