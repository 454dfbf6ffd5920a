"""A Job this process just created is not POSTed again before the informer shows it (expectations.py)."""

from __future__ import annotations

from typing import Any

from jobflow_fakes import FakeClientset, job, job_flow, job_template, new_fake_controller

from jobflow_controller.jobflow import expectations
from jobflow_controller.jobflow.controller import JobFlowController
from jobflow_controller.jobflow.expectations import CreateExpectations
from workqueue import FakeClock

UID = "5f1d1c2e-0000-4000-8000-000000000003"
REQ = JobFlowController.request_for("default", "f")


def _controller() -> tuple[JobFlowController, FakeClientset, FakeClock]:
    controller, clientset, _ = new_fake_controller()
    clock = controller.clock
    assert isinstance(clock, FakeClock)
    controller.job_template_informer.get_indexer().add(job_template("a"))
    flow = job_flow("f", flows=[{"name": "a"}], rv="1", uid=UID)
    controller.job_flow_informer.get_indexer().add(flow)
    clientset.api.objects[("jobflows", "default", "f")] = flow
    return controller, clientset, clock


def _creates(clientset: FakeClientset) -> list[str]:
    return [a.name for a in clientset.api.actions if a.verb == "create" and a.resource == "jobs"]


def _gets(clientset: FakeClientset) -> int:
    return sum(1 for a in clientset.api.actions if a.verb == "get" and a.resource == "jobs")


def _ours(phase: str = "") -> dict[str, Any]:
    return job("f-a", flow="f", owner_uid=UID, phase=phase)


def test_a_sync_before_the_informer_shows_our_create_does_not_post_it_again() -> None:
    controller, clientset, _ = _controller()
    controller.sync.handle_job_flow(REQ)
    controller.sync.handle_job_flow(REQ)  # the informer has not shown f-a yet

    assert _creates(clientset) == ["f-a"]
    assert _gets(clientset) == 0  # no AlreadyExists to look into


def test_once_the_informer_shows_the_job_the_cache_speaks_for_it() -> None:
    controller, clientset, _ = _controller()
    controller.sync.handle_job_flow(REQ)
    controller.handlers.add_job(_ours())
    assert len(controller.create_expectations) == 0

    controller.handlers.delete_job(_ours("Running"))  # deleted by hand before it completed: created again
    controller.sync.handle_job_flow(REQ)

    assert _creates(clientset) == ["f-a", "f-a"]


def test_a_job_add_syncs_nothing_as_upstream_has_no_job_add_handler() -> None:
    controller, _, _ = _controller()
    controller.handlers.add_job(_ours())
    assert len(controller.queue) == 0


def test_an_expectation_whose_event_never_came_expires() -> None:
    clock = FakeClock()
    expected = CreateExpectations(clock)
    expected.created("default", "f-a")
    assert expected.pending("default", "f-a")
    clock.step(expectations.EXPECTATIONS_TIMEOUT)
    assert not expected.pending("default", "f-a")
    assert len(expected) == 0


def test_an_expired_expectation_lets_the_next_sync_create_the_job_again() -> None:
    controller, clientset, clock = _controller()
    controller.sync.handle_job_flow(REQ)
    del clientset.api.objects[("jobs", "default", "f-a")]  # gone before the informer ever showed it
    clock.step(expectations.EXPECTATIONS_TIMEOUT)

    controller.sync.handle_job_flow(REQ)

    assert _creates(clientset) == ["f-a", "f-a"]


def test_an_expectation_nobody_looks_up_again_leaves_the_memory_once_it_times_out() -> None:
    """The soak's leak: the JobFlow was gone before its Job's name was looked up or seen again, so the
    expectation stayed for the life of the process (1 of 3,600 in an hour). It now times out by itself."""
    clock = FakeClock()
    created = CreateExpectations(clock)
    created.created("default", "gone-a")
    assert created.memory_sizes() == {"create_expectations": 1}
    clock.step(expectations.EXPECTATIONS_TIMEOUT)
    assert created.memory_sizes() == {"create_expectations": 0}
    created.created("default", "x-a")
    clock.step(expectations.EXPECTATIONS_TIMEOUT - 1)
    created.created("default", "y-a")  # a later create sweeps what timed out, and only that
    assert len(created) == 2
    clock.step(1)
    assert len(created) == 1 and created.pending("default", "y-a")
