"""The JobFlowTemplate cache (jobflow/template_source.py): when runs may be resolved, and which ones a
template's events resume."""

from __future__ import annotations

import threading
from typing import Any

from jobflow_controller.apis import jobflowtemplate as jft
from jobflow_controller.jobflow.template_source import TemplateSource


class Informer:
    def __init__(self) -> None:
        self.synced = False
        self.handlers: list[Any] = []

    def has_synced(self) -> bool:
        return self.synced

    def add_event_handler(self, handler: Any) -> None:
        self.handlers.append(handler)


class Templates:
    def __init__(self, informer: Informer) -> None:
        self._informer = informer

    def informer(self) -> Informer:
        return self._informer


class Factory:
    def __init__(self) -> None:
        self.informer = Informer()
        self.started = 0

    def job_flow_templates(self) -> Templates:
        return Templates(self.informer)

    def start(self, stop: threading.Event) -> None:
        self.started += 1


class Lister:
    def __init__(self, job_flows: list[dict[str, Any]]) -> None:
        self.items = job_flows

    def job_flows(self, namespace: str) -> Lister:
        return self

    def list(self) -> list[dict[str, Any]]:
        return self.items


class Queue:
    def __init__(self) -> None:
        self.reacted: list[tuple[str, str]] = []

    def react(self, namespace: str, name: str, delay: float = 0.0) -> None:
        self.reacted.append((namespace, name))


def job_flow(name: str, template: str, phase: str = "", resolved: bool = False) -> dict[str, Any]:
    status: dict[str, Any] = {"state": {"phase": phase}} if phase else {}
    if resolved:
        status[jft.STORED_SPEC_FIELD] = '{"flows":[{"name":"a"}]}'
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"jobFlowTemplateRef": {"name": template}},
        "status": status,
    }


def source(job_flows: list[dict[str, Any]] | None = None) -> tuple[TemplateSource, Factory, Queue]:
    factory, queue = Factory(), Queue()
    made = TemplateSource(factory, lambda: True, Lister(job_flows or []), queue)  # type: ignore[arg-type]
    return made, factory, queue


def template(name: str, generation: int = 1) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "generation": generation}}


def test_runs_cannot_be_resolved_until_the_crd_is_served_and_the_cache_has_synced() -> None:
    made, factory, _ = source()
    assert made.ready() is False  # no informer: the CRD was not seen yet
    made.start_now(threading.Event())
    assert (made.ready(), factory.started) == (False, 1)  # created, not synced
    factory.informer.synced = True
    assert made.ready() is True


def test_a_template_added_resumes_only_the_unfinished_unresolved_runs_that_name_it() -> None:
    runs = [
        job_flow("waiting", "etl"),
        job_flow("pending", "etl", phase="Pending"),
        job_flow("resolved", "etl", phase="Running", resolved=True),
        job_flow("done", "etl", phase="Failed"),
        job_flow("other", "other"),
    ]
    made, _, queue = source(runs)
    made.add_template(template("etl"))
    assert queue.reacted == [("ns", "waiting"), ("ns", "pending")]


def test_a_template_update_resumes_runs_only_when_its_spec_changed() -> None:
    made, _, queue = source([job_flow("waiting", "etl")])
    made.update_template(template("etl", 1), template("etl", 1))  # a label or status: same generation
    assert queue.reacted == []
    made.update_template(template("etl", 1), template("etl", 2))
    assert queue.reacted == [("ns", "waiting")]
