"""The seam of runs from a template (jobflow/template_ref.py): what a sync plans, and what it writes first."""

from __future__ import annotations

import json
from typing import Any

from informers.errors import NotFoundError
from jobflow_controller.apis import jobflowtemplate as jft
from jobflow_controller.jobflow.template_ref import REASON_INVALID_TEMPLATE, TemplateRefs

#: The template cache cannot answer yet (CRD just installed, cache syncing).
NOT_READY = object()

TEMPLATE = {
    "metadata": {"name": "etl", "namespace": "ns", "resourceVersion": "1"},
    "spec": {
        "params": [{"name": "dataset"}, {"name": "mode", "default": "full"}],
        "jobFlow": {"flows": [{"name": "a"}]},
    },
}


class Source:
    """The template cache: it only says whether templates can be told from missing ones yet."""

    def __init__(self, ready: bool) -> None:
        self.is_ready = ready

    def ready(self) -> bool:
        return self.is_ready


class Client:
    def __init__(self, api: Api) -> None:
        self.api = api

    def patch(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self.api.calls.append(("patch", name, body))
        obj = self.api.obj
        labels = {**obj["metadata"].get("labels", {}), **body["metadata"]["labels"]}
        self.api.obj = {**obj, "metadata": {**obj["metadata"], "labels": labels, "resourceVersion": "11"}}
        return self.api.obj

    def patch_status(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self.api.calls.append(("patch_status", name, body))
        obj = self.api.obj
        status = {**obj.get("status", {}), **body["status"]}
        self.api.obj = {**obj, "status": status, "metadata": {**obj["metadata"], "resourceVersion": "12"}}
        return self.api.obj


class Api:
    def __init__(self, obj: dict[str, Any], template: Any = None) -> None:
        self.obj = obj
        self.template = template
        self.calls: list[tuple[str, str, Any]] = []

    def job_flows(self, namespace: str) -> Client:
        return Client(self)

    def job_flow_templates(self, namespace: str) -> Templates:
        return Templates(self)


class Templates:
    """The API server's templates: the one the test gives, or none."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def get(self, name: str) -> Any:
        self.api.calls.append(("get", name, None))
        if self.api.template is None:
            raise NotFoundError(f'jobflowtemplates.flow.volcano.sh "{name}" not found')
        return self.api.template


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Any, kind: str, reason: str, message: str) -> None:
        self.events.append((kind, reason, message))


class Queue:
    def __init__(self) -> None:
        self.reacted: list[tuple[str, str, float]] = []

    def react(self, namespace: str, name: str, delay: float = 0.0) -> None:
        self.reacted.append((namespace, name, delay))


class OwnWrites:
    def __init__(self) -> None:
        self.wrote_calls = 0

    def wrote(self, sent: Any, stored: Any) -> None:
        self.wrote_calls += 1


class Writer:
    def __init__(self) -> None:
        self.own_writes = OwnWrites()


def run(**params: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "r", "namespace": "ns", "uid": "u", "generation": 1, "resourceVersion": "10"},
        "spec": {"jobFlowTemplateRef": {"name": "etl"}, "params": [{"name": k, "value": v} for k, v in params.items()]},
    }


def refs(template: object, obj: dict[str, Any]) -> tuple[TemplateRefs, Api, Recorder, Queue]:
    """The seam with the API server holding `template` (None: no such template; NOT_READY: no cache yet)."""
    ready = template is not NOT_READY
    api, recorder, queue = Api(obj, template if ready else None), Recorder(), Queue()
    seam = TemplateRefs(Source(ready), api, recorder, queue, Writer())  # type: ignore[arg-type]
    return seam, api, recorder, queue


def test_a_jobflow_without_a_reference_is_planned_as_it_is_with_no_request() -> None:
    plain = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"flows": [{"name": "a"}]}}
    seam, api, recorder, _ = refs(None, plain)
    assert seam.effective(plain) is plain
    assert (api.calls, recorder.events) == ([], [])


def test_the_first_sync_labels_the_run_then_stores_its_spec_and_plans_nothing() -> None:
    seam, api, recorder, queue = refs(TEMPLATE, run(dataset="d"))
    assert seam.effective(api.obj) is None
    assert queue.reacted == [("ns", "r", 0.0)]  # planned by the next sync, at once
    effective = seam.effective(api.obj)
    assert effective is not None
    assert effective["spec"] == {
        "flows": [{"name": "a"}],
        "params": [{"name": "dataset", "value": "d"}, {"name": "mode", "value": "full"}],
    }
    (get, label, store) = api.calls
    assert get == ("get", "etl", None)  # the server's copy, not the cache's
    assert label == ("patch", "r", {"metadata": {"labels": {jft.TEMPLATE_LABEL: "etl"}, "resourceVersion": "10"}})
    assert store[0] == "patch_status" and store[2]["metadata"] == {"resourceVersion": "11"}
    assert json.loads(store[2]["status"][jft.STORED_SPEC_FIELD]) == effective["spec"]
    assert recorder.events == []


def test_a_resolved_run_never_reads_its_template_again() -> None:
    seam, api, _, _ = refs(TEMPLATE, run(dataset="d"))
    assert seam.effective(api.obj) is None
    stored = api.obj
    seam_without, api2, recorder, _ = refs(None, stored)  # the template is gone
    effective = seam_without.effective(stored)
    assert effective is not None and effective["spec"]["flows"] == [{"name": "a"}]
    assert (api2.calls, recorder.events) == ([], [])


def test_a_missing_template_warns_once_and_the_run_is_pending_and_not_planned() -> None:
    seam, api, recorder, _ = refs(None, run(dataset="d"))
    assert seam.effective(api.obj) is None
    assert seam.effective({**api.obj}) is None  # a second sync of the same generation
    assert recorder.events == [
        ("Warning", REASON_INVALID_TEMPLATE, 'JobFlowTemplate "etl" not found; the JobFlow waits for it')
    ]
    assert [c[0] for c in api.calls] == ["get", "patch_status", "get"]  # the server is asked each sync
    assert api.calls[1][2]["status"] == {"state": {"phase": "Pending"}}


def test_params_the_template_refuses_give_the_warning_and_no_spec() -> None:
    seam, api, recorder, _ = refs(TEMPLATE, run(typo="x"))
    assert seam.effective(api.obj) is None
    assert recorder.events == [
        (
            "Warning",
            REASON_INVALID_TEMPLATE,
            'JobFlowTemplate "etl" cannot run this JobFlow: param "typo" is not declared by JobFlowTemplate "etl"; '
            'param "dataset" is required by JobFlowTemplate "etl" and has no value',
        )
    ]
    assert jft.STORED_SPEC_FIELD not in api.obj.get("status", {})


def test_a_template_the_controller_refuses_gives_each_run_the_warning() -> None:
    broken = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "jobFlow": {"flows": [{"name": "a"}, {"name": "a"}]}}}
    seam, api, recorder, _ = refs(broken, run(dataset="d"))
    assert seam.effective(api.obj) is None
    assert 'jobflow Flow names must be unique: "a"' in recorder.events[0][2]


def test_while_the_cache_cannot_answer_the_run_is_put_back_without_a_warning() -> None:
    seam, api, recorder, queue = refs(NOT_READY, run(dataset="d"))
    assert seam.effective(api.obj) is None
    assert (queue.reacted, recorder.events, api.calls) == ([("ns", "r", 1.0)], [], [])


def test_a_stored_spec_that_is_no_longer_valid_is_refused() -> None:
    tampered = {
        **run(),
        "status": {"state": {"phase": "Running"}, jft.STORED_SPEC_FIELD: '{"flows":[{"name":"a"},{"name":"a"}]}'},
    }
    seam, api, recorder, _ = refs(TEMPLATE, tampered)
    assert seam.effective(tampered) is None
    assert recorder.events[0][1] == REASON_INVALID_TEMPLATE
    assert api.calls == []  # resolved already: no read; it has a phase: nothing is written


def test_the_runs_own_fields_override_the_stored_spec() -> None:
    stored = jft.stored_spec_text({"flows": [{"name": "a"}], "suspend": False})
    job_flow = {**run(), "status": {jft.STORED_SPEC_FIELD: stored}}
    job_flow["spec"]["suspend"] = True
    seam, _, _, _ = refs(None, job_flow)
    effective = seam.effective(job_flow)
    assert effective is not None and effective["spec"]["suspend"] is True


def test_a_run_is_forgotten_with_its_memories() -> None:
    seam, api, _, _ = refs(None, run(dataset="d"))
    seam.effective(api.obj)
    assert seam.memory_sizes()["template_warnings"] == 1
    seam.forget_job_flow("ns", "r", "u")
    assert seam.memory_sizes() == {"template_warnings": 0, "template_specs_checked": 0}


def test_a_run_is_resolved_from_the_servers_template_never_from_a_cache_that_lags() -> None:
    """A template deleted (or edited) just before a run was created: the cache may still hold the old
    one, the server does not; the run waits with the Warning instead of running the deleted template."""
    seam, api, recorder, _ = refs(None, run(dataset="d"))
    seam.source = type("Stale", (), {"ready": lambda self: True, "get": lambda self, ns, n: TEMPLATE})()  # type: ignore[assignment]
    assert seam.effective(api.obj) is None
    assert jft.STORED_SPEC_FIELD not in api.obj.get("status", {})
    assert recorder.events[0][1] == REASON_INVALID_TEMPLATE
    edited = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "jobFlow": {"flows": [{"name": "b"}]}}}
    api.template = edited  # the server's newest copy wins over anything cached
    assert seam.effective(api.obj) is None
    effective = seam.effective(api.obj)
    assert effective is not None and effective["spec"]["flows"] == [{"name": "b"}]


def test_a_template_is_checked_once_for_all_its_runs(monkeypatch: Any) -> None:
    import jobflow_controller.jobflow.template_ref as module

    calls = []
    checked = module.template_problems
    monkeypatch.setattr(module, "template_problems", lambda t: calls.append(1) or checked(t))
    tmpl = {**TEMPLATE, "metadata": {**TEMPLATE["metadata"], "uid": "t1"}}
    seam, _, _, _ = refs(tmpl, run(dataset="d"))
    for i in range(3):
        job_flow = run(dataset="d")
        job_flow["metadata"]["name"] = f"r{i}"
        seam._clientset = Api(job_flow, tmpl)  # type: ignore[assignment]
        assert seam.effective(job_flow) is None
        assert seam._clientset.obj["status"][jft.STORED_SPEC_FIELD]  # type: ignore[attr-defined]
    assert calls == [1]
