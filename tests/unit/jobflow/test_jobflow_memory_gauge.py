"""The per-JobFlow memories are visible from outside (`jobflow_controller_memory_objects`), and each
falls back to nothing once its JobFlow is forgotten: the soak (bench/soak.py) reads this gauge."""

from __future__ import annotations

from jobflow_fakes import job_flow, job_template, new_fake_controller
from prometheus_client import CollectorRegistry

from jobflow_controller.manager.metrics import MEMORY_OBJECTS, MemoryCollector, exposition

MEMORIES = {
    "own_writes",
    "own_writes_pending",
    "create_expectations",
    "deleted_jobs",
    "probe_cache",
    "status_reservations",
    "lifecycle_commands",
    "missing_templates_logged",
    "invalid_warned",
    "validated_specs",
    "input_warned",
    "template_warnings",
    "template_specs_checked",
}


def test_a_new_controller_remembers_nothing() -> None:
    controller, _, _ = new_fake_controller()
    assert controller.memory_sizes() == dict.fromkeys(MEMORIES, 0)


def test_a_synced_job_flow_is_remembered_then_forgotten() -> None:
    controller, _, _ = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    flow = job_flow("f", flows=[{"name": "a"}], uid="u1")
    controller.job_flow_informer.get_indexer().add(flow)
    controller.sync.handle_job_flow(controller.request_for("default", "f"))
    held = controller.memory_sizes()
    assert held["create_expectations"] == 1  # the Job it created, not yet in the cache
    assert held["own_writes"] + held["own_writes_pending"] >= 1  # the status it wrote or keeps
    controller.create_expectations.observed("default", "f-a")
    controller.forget_job_flow("default", "f", "u1")
    assert controller.memory_sizes() == dict.fromkeys(MEMORIES, 0)


def test_the_gauge_sums_every_controller_by_memory() -> None:
    registry = CollectorRegistry()
    registry.register(MemoryCollector(lambda: [{"own_writes": 2, "deleted_jobs": 0}, {"own_writes": 3}]))
    text = exposition(registry).decode()
    assert f'{MEMORY_OBJECTS}{{memory="own_writes"}} 5.0' in text
    assert f'{MEMORY_OBJECTS}{{memory="deleted_jobs"}} 0.0' in text
    assert f"# TYPE {MEMORY_OBJECTS} gauge" in text


def test_no_controller_no_series() -> None:
    registry = CollectorRegistry()
    registry.register(MemoryCollector(lambda: []))
    assert MEMORY_OBJECTS not in exposition(registry).decode()
