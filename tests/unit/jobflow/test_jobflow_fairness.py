"""A sync creating many Jobs gives way to the syncs that wait (fairness.py, docs/fairness.md)."""

from __future__ import annotations

from typing import Any

import pytest
from jobflow_fakes import FakeResourceClient, job, job_flow, job_template, new_fake_controller

from jobflow_controller.jobflow.fairness import CREATE_SLICE_SECONDS, gives_way
from workqueue import FakeClock


@pytest.mark.parametrize(
    ("created", "spent", "others_waiting", "expected"),
    [
        (0, 10.0, True, False),  # every sync creates at least one Job: a backlog always moves
        (1, CREATE_SLICE_SECONDS, True, True),  # its slice spent, others wait: it gives way
        (5, CREATE_SLICE_SECONDS - 0.01, True, False),  # within its slice
        (24, 10.0, False, False),  # nobody waits: it goes on
    ],
)
def test_a_sync_gives_way_once_its_slice_is_spent_and_only_if_others_wait(
    created: int, spent: float, others_waiting: bool, expected: bool
) -> None:
    assert gives_way(created, spent, others_waiting) is expected


def _wide(creates_take: float) -> tuple[Any, Any]:
    """A controller with a 10-flow JobFlow `wide`, whose every Job create takes `creates_take` s."""
    controller, clientset, _ = new_fake_controller()
    clock = controller.clock
    assert isinstance(clock, FakeClock)
    controller.job_flow_informer.get_indexer().add(job_flow("wide", flows=[{"name": f"f{i}"} for i in range(10)]))
    for i in range(10):
        controller.job_template_informer.get_indexer().add(job_template(f"f{i}"))
    create = FakeResourceClient.create

    def slow_create(self: FakeResourceClient, obj: dict[str, Any]) -> dict[str, Any]:
        clock.step(creates_take)
        return create(self, obj)

    clientset.resource = lambda resource, namespace=None: _Slow(clientset.api, resource, namespace, slow_create)  # type: ignore[method-assign]
    return controller, clientset


class _Slow(FakeResourceClient):
    def __init__(self, api: Any, resource: Any, namespace: Any, create: Any) -> None:
        super().__init__(api, resource, namespace)
        self._create = create

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self._create(self, obj)
        return result


def _created(clientset: Any) -> list[str]:
    return [n for v, n in clientset.api.verbs("jobs") if v == "create"]


def test_a_sync_stops_creating_after_its_slice_while_another_job_flow_waits_and_comes_back() -> None:
    controller, clientset = _wide(creates_take=0.1)
    other = controller.request_for("tenant-b", "small")
    controller.queue.add(other)  # another tenant's JobFlow waits ready
    controller.sync.handle_job_flow(controller.request_for("default", "wide"))

    slice_creates = round(CREATE_SLICE_SECONDS / 0.1)
    assert _created(clientset) == [f"wide-f{i}" for i in range(slice_creates)]
    assert len(controller.queue) == 2  # `wide` queued again, behind the JobFlow that waited
    assert controller.queue.get(timeout=1)[0] == other


def test_a_sync_alone_in_the_queue_creates_its_whole_batch() -> None:
    controller, clientset = _wide(creates_take=0.1)
    controller.sync.handle_job_flow(controller.request_for("default", "wide"))

    assert _created(clientset) == [f"wide-f{i}" for i in range(10)]
    assert len(controller.queue) == 0


def test_the_next_syncs_create_the_rest_in_spec_order_and_nothing_twice() -> None:
    controller, clientset = _wide(creates_take=0.1)
    req = controller.request_for("default", "wide")
    for _ in range(10):
        controller.queue.add(controller.request_for("tenant-b", "small"))  # someone always waits
        controller.sync.handle_job_flow(req)
        for name in _created(clientset):  # the informer shows what was created
            controller.job_informer.get_indexer().add(job(name, flow="wide"))

    assert _created(clientset) == [f"wide-f{i}" for i in range(10)]
