"""The JobTemplate controller, ported from upstream's jobtemplate tests, quirks included."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "jobflow"))  # the shared fakes

import pytest
from jobflow_fakes import job, job_template, new_fake_job_template_controller

from jobflow_controller.apis import FlowRequest
from jobflow_controller.jobtemplate import CONTROLLER_NAME
from jobflow_controller.jobtemplate.batching import DEFAULT_BATCH_WINDOW, SyncBatcher
from jobflow_controller.jobtemplate.controller import get_template_string
from workqueue import FakeClock


def test_controller_name_is_upstreams() -> None:
    assert CONTROLLER_NAME == "jobtemplate-controller"


def test_get_template_string() -> None:
    assert get_template_string("default", "flow") == "default.flow"


def test_sync_job_template_records_the_jobs_made_from_it() -> None:
    controller, clientset, _ = new_fake_job_template_controller()
    template = job_template("jobtemplate", "test")
    controller.job_informer.get_indexer().add(job("job1", "test", template="jobtemplate"))
    controller.sync_job_template(template)
    write = next(a for a in clientset.api.actions if a.verb == "update_status")
    assert write.body["status"] == {"jobDependsOnList": ["job1"]}


def test_sync_job_template_with_no_jobs_writes_nothing() -> None:
    controller, clientset, _ = new_fake_job_template_controller()
    controller.sync_job_template(job_template("jobtemplate", "test"))
    assert clientset.api.actions == []


def test_add_job_template_enqueues_it() -> None:
    controller, _, _ = new_fake_job_template_controller()
    controller.add_job_template(job_template("jobtemplate", "test"))
    assert len(controller.queue) == 1


def test_add_job_splits_the_label_into_namespace_and_template() -> None:
    """Upstream's TestAddJob: the label value "volcano.sh/createdByJobTemplate" splits in two.

    Upstream's Job is in namespace "test"; here it is in "volcano", the namespace the label names,
    since a label naming another namespace is filtered (the next test).
    """
    controller, _, _ = new_fake_job_template_controller()
    obj = job("job1", "volcano")
    obj["metadata"]["labels"] = {"volcano.sh/createdByJobTemplate": "volcano.sh/createdByJobTemplate"}
    controller.add_job(obj)
    item, _ = controller.queue.get()
    assert item == FlowRequest("volcano", job_template_name="sh/createdByJobTemplate")


@pytest.mark.parametrize("value", ["other.train", "volcano.sh/createdByJobTemplate", ".train"])
def test_add_job_labelled_with_another_namespaces_template_enqueues_nothing(value: str) -> None:
    """Deviation: any tenant can label a Job; upstream then syncs the other namespace's template."""
    controller, _, _ = new_fake_job_template_controller()
    obj = job("job1", "test")
    obj["metadata"]["labels"] = {"volcano.sh/createdByJobTemplate": value}
    controller.add_job(obj)
    assert len(controller.queue) == 0


def test_add_job_keeps_dots_in_the_template_name() -> None:
    """Deviation: upstream needs exactly two parts and ignores templates named with a dot."""
    controller, _, _ = new_fake_job_template_controller()
    obj = job("job1", "ns")
    obj["metadata"]["labels"] = {"volcano.sh/createdByJobTemplate": "ns.train.v2"}
    controller.add_job(obj)
    item, _ = controller.queue.get()
    assert item == FlowRequest("ns", job_template_name="train.v2")


def test_add_job_without_the_label_enqueues_nothing() -> None:
    controller, _, _ = new_fake_job_template_controller()
    controller.add_job(job("job1", "ns"))
    assert len(controller.queue) == 0


def test_enqueue_job_template_deduplicates() -> None:
    controller, _, _ = new_fake_job_template_controller()
    controller.enqueue_job_template(FlowRequest("ns", job_template_name="a"))
    controller.enqueue_job_template(FlowRequest("ns", job_template_name="a"))
    assert len(controller.queue) == 1
    controller.enqueue_job_template(FlowRequest("ns", job_template_name="b"))
    assert len(controller.queue) == 2


def test_a_dropped_request_has_upstreams_empty_reason_and_leading_space() -> None:
    controller, _, recorder = new_fake_job_template_controller()
    controller.workers.max_requeue_num = 0
    controller.job_template_informer.get_indexer().add(job_template("t", "ns"))
    controller.workers.handle_err(RuntimeError("boom"), FlowRequest("ns", job_template_name="t"))
    assert recorder.drain() == ["Warning   JobTemplate failed for boom"]


def test_a_status_conflict_re_reads_the_template_and_writes_again() -> None:
    """Ours (docs/deviations.md row 25): RetryOnConflict, as for JobFlows."""
    controller, clientset, _ = new_fake_job_template_controller()
    cached = job_template("jobtemplate", "test")  # resourceVersion 1
    controller.job_template_informer.get_indexer().add(cached)
    controller.job_informer.get_indexer().add(job("job1", "test", template="jobtemplate"))
    newer = job_template("jobtemplate", "test")
    newer["metadata"]["resourceVersion"] = "2"  # someone labelled it meanwhile
    clientset.api.objects[("jobtemplates", "test", "jobtemplate")] = newer

    controller.sync_handler(FlowRequest("test", job_template_name="jobtemplate"))

    assert clientset.api.verbs("jobtemplates") == [
        ("update_status", "jobtemplate"),
        ("get", "jobtemplate"),
        ("update_status", "jobtemplate"),
    ]
    assert clientset.api.objects[("jobtemplates", "test", "jobtemplate")]["status"] == {"jobDependsOnList": ["job1"]}


# -- one sync per template per batch of Jobs (batching.py) -------------------------------------------------


def test_a_job_add_after_a_quiet_spell_syncs_its_template_at_once() -> None:
    controller, _, _ = new_fake_job_template_controller()
    controller.add_job(job("job1", "test", template="jobtemplate"))
    assert len(controller.queue) == 1


def test_the_job_adds_of_a_burst_share_one_sync_at_the_end_of_the_window() -> None:
    controller, _, _ = new_fake_job_template_controller()
    clock = controller.clock
    assert isinstance(clock, FakeClock)
    req = FlowRequest("test", job_template_name="jobtemplate")
    controller.add_job(job("job1", "test", template="jobtemplate"))
    item, _ = controller.queue.get()
    controller.queue.done(item)

    for name in ("job2", "job3", "job4"):
        clock.step(0.1)
        controller.add_job(job(name, "test", template="jobtemplate"))

    assert len(controller.queue) == 0
    clock.step(DEFAULT_BATCH_WINDOW)
    assert controller.queue.get(timeout=5.0) == (req, False)
    controller.queue.done(req)
    assert len(controller.queue) == 0


def test_a_batched_sync_records_every_job_of_the_burst_in_one_write() -> None:
    controller, clientset, _ = new_fake_job_template_controller()
    clock = controller.clock
    assert isinstance(clock, FakeClock)
    template = job_template("jobtemplate", "test")
    controller.job_template_informer.get_indexer().add(template)
    clientset.api.objects[("jobtemplates", "test", "jobtemplate")] = template
    for name in ("job1", "job2", "job3"):
        obj = job(name, "test", template="jobtemplate")
        controller.job_informer.get_indexer().add(obj)
        controller.add_job(obj)  # the first sync is not run yet: it will list all three

    item, _ = controller.queue.get(timeout=5.0)
    controller.sync_handler(item)
    controller.queue.done(item)
    clock.step(DEFAULT_BATCH_WINDOW)
    assert len(controller.queue) == 0

    writes = [a.body["status"]["jobDependsOnList"] for a in clientset.api.actions if a.verb == "update_status"]
    assert writes == [["job1", "job2", "job3"]]


def test_sync_batcher_schedules_the_next_sync_one_window_after_the_last() -> None:
    batcher = SyncBatcher(window=2.0)
    assert batcher.delay("k", 10.0) == 0.0
    assert batcher.delay("k", 10.5) == 1.5
    assert batcher.delay("k", 11.0) is None  # the sync at 12.0 will see it
    assert batcher.delay("k", 12.5) == 1.5  # after the sync at 12.0: the next one at 14.0
    assert batcher.delay("k", 20.0) == 0.0  # a quiet spell: at once
    assert batcher.delay("other", 20.0) == 0.0
