"""The JobTemplate add handler through the real informer: the initial list requeues no JobFlow.

A JobTemplate created while the controller runs resumes the flows that wait for it (ours, a
deviations row); the templates of the initial list do not, since every JobFlow is synced at start
anyway (its own add). That skip needs `is_in_initial_list`, which only a handler registered
through `ResourceEventHandlerDetailedFuncs` receives: the controller's own registration is driven
here by a SharedIndexInformer listing and watching a fake API, as in production.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jobflow_fakes import FakeClientset, FakeResourceClient, job_flow, job_template, new_fake_controller

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "informers"))  # the shared fakes

from informers_fakes import FakeListerWatcher, eventually

from jobflow_controller.apis import FlowRequest
from jobflow_controller.jobflow import JobFlowController
from jobflow_controller.kube.resources import JOB_TEMPLATES, Resource

TEMPLATES = 20


class _TemplatesClient(FakeResourceClient):
    def __init__(self, clientset: TemplatesClientset, namespace: str | None) -> None:
        super().__init__(clientset.api, JOB_TEMPLATES, namespace)
        self.templates = clientset.templates

    def lister_watcher(self, label_selector: str | None = None) -> FakeListerWatcher:  # type: ignore[override]
        return self.templates


class TemplatesClientset(FakeClientset):
    """The fake API, with JobTemplates served by a fake ListerWatcher (list, then watch)."""

    def __init__(self, templates: FakeListerWatcher) -> None:
        super().__init__()
        self.templates = templates

    def resource(self, resource: Resource, namespace: str | None = None) -> FakeResourceClient:
        if resource == JOB_TEMPLATES:
            return _TemplatesClient(self, namespace)
        return super().resource(resource, namespace)


def queued(controller: JobFlowController) -> list[str]:
    """The JobFlow names in the queue, taken out."""
    names = []
    while len(controller.queue):
        item, _ = controller.queue.get()
        assert isinstance(item, FlowRequest)
        names.append(item.job_flow_name)
        controller.queue.done(item)
    return sorted(names)


@pytest.fixture
def started() -> Iterator[tuple[JobFlowController, FakeListerWatcher]]:
    """A controller whose JobTemplate informer lists TEMPLATES templates, each awaited by a JobFlow."""
    templates = FakeListerWatcher([job_template(f"t{i}") for i in range(TEMPLATES)])
    controller, _, _ = new_fake_controller(clientset=TemplatesClientset(templates))
    flows: list[dict[str, Any]] = [job_flow(f"f{i}", flows=[{"name": f"t{i}"}]) for i in range(TEMPLATES)]
    flows.append(job_flow("waiting", flows=[{"name": "late"}]))
    for obj in flows:
        controller.job_flow_informer.get_indexer().add(obj)
    stop = threading.Event()
    informer = controller.job_template_informer
    thread = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert eventually(informer.has_synced)
        yield controller, templates
    finally:
        stop.set()
        thread.join(5)


def test_the_initial_list_of_job_templates_requeues_no_job_flow_a_later_template_does(
    started: tuple[JobFlowController, FakeListerWatcher],
) -> None:
    """TEMPLATES templates listed, each awaited by one JobFlow: none queued; `late`, created after
    the sync, queues the one JobFlow waiting for it."""
    controller, templates = started
    # A template created after the sync is delivered after every initial add (one handler thread,
    # in order): once its JobFlow is queued, the initial adds have all been handled.
    templates.add(job_template("late"))
    assert eventually(lambda: len(controller.queue) > 0)
    assert queued(controller) == ["waiting"]
