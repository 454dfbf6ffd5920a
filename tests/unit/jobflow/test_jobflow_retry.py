"""Opt-in retry of a flow's failed Job (issue 12 part 3, docs/retry.md).

The policy is the flow's `retry` field (`spec.flows[].retry`, which our CRD adds to upstream's), or,
for clusters running upstream's CRD, the JobFlow annotation `flow.volcano.sh/retry`. A flow's Job
that ends Failed or Terminated while the JobFlow is Pending or Running is recorded as retried in
the status (a `Retrying` running history), deleted, and created again once the delete is seen and
the backoff (through `add_after`) has passed; after `maxRetries` the JobFlow goes Failed as
upstream's does. The tests drive a recording fake API and copy what it holds into the
informer caches between syncs, as the watch would.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jobflow_fakes import job_flow, job_template, new_fake_controller

from jobflow_controller.apis import FlowRequest
from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION, RETRY_ANNOTATION, RetryPolicy, retry_policies
from jobflow_controller.jobflow.controller import JobFlowController
from jobflow_controller.jobflow.retry import RETRY_BACKOFF_CAP, RETRY_BACKOFF_FLOOR, retry_delay
from jobflow_controller.jobflow.state.metrics import RETRY_NAME
from jobflow_controller.record import FakeRecorder
from jobflow_controller.validation import validate_job_flow, validate_job_flow_update
from workqueue import FakeClock

FLOW_UID = "0b6c1e7e-5d0f-4a53-9e0e-1f4c2b9a7d11"
CHAIN = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]


def _req() -> FlowRequest:
    return JobFlowController.request_for("default", "f")


def _flow(retry: dict[str, Any] | None, flows: list[dict[str, Any]] | None = None, **kw: Any) -> dict[str, Any]:
    """JobFlow "f" whose flows named in `retry` get that `retry` field."""
    listed = [dict(f) for f in (flows if flows is not None else [{"name": "a"}])]
    for f in listed:
        if retry is not None and f["name"] in retry:
            f["retry"] = retry[f["name"]]
    return job_flow("f", flows=listed, uid=FLOW_UID, **kw)


def _annotated(retry: dict[str, Any] | str, flows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """JobFlow "f" with the policies in the `flow.volcano.sh/retry` annotation (upstream's CRD)."""
    obj = _flow(None, flows)
    obj["metadata"]["annotations"] = {RETRY_ANNOTATION: retry if isinstance(retry, str) else json.dumps(retry)}
    return obj


class World:
    """The fake API plus a controller whose caches are refreshed from it after every sync."""

    def __init__(self, flow: dict[str, Any], controller: JobFlowController | None = None) -> None:
        if controller is None:
            controller, clientset, recorder = new_fake_controller()
            self.clientset, self.recorder = clientset, recorder
            clientset.api.objects[("jobflows", "default", "f")] = flow
        self.controller = controller
        self.delays: list[tuple[FlowRequest, float]] = []
        controller.queue.add_after = lambda item, seconds, priority=None: self.delays.append((item, seconds))  # type: ignore[method-assign]
        for f in flow["spec"]["flows"]:
            controller.job_template_informer.get_indexer().add(job_template(f["name"]))
        self.observe()

    @classmethod
    def restarted(cls, old: World) -> World:
        """A new controller process against the same API: its caches are listed afresh."""
        controller, _, recorder = new_fake_controller(clientset=old.clientset)
        assert isinstance(controller.clock, FakeClock)
        controller.clock.set_time(old.controller.clock.now())  # time goes on across the restart
        world = cls(old.flow(), controller)
        world.clientset, world.recorder = old.clientset, recorder
        world.observe()
        return world

    def flow(self) -> dict[str, Any]:
        obj: dict[str, Any] = self.clientset.api.objects[("jobflows", "default", "f")]
        return obj

    def job(self, name: str) -> dict[str, Any] | None:
        return self.clientset.api.objects.get(("jobs", "default", name))

    def observe(self) -> None:
        if not hasattr(self, "clientset"):
            return
        self.controller.job_flow_informer.get_indexer().update(self.flow())
        jobs = self.controller.job_informer.get_indexer()
        expectations = self.controller.create_expectations
        for cached in list(jobs.list()):
            if self.job(cached["metadata"]["name"]) is None:
                jobs.delete(cached)
                expectations.observed("default", cached["metadata"]["name"])
        for (plural, _, _), obj in list(self.clientset.api.objects.items()):
            if plural == "jobs":
                jobs.update(obj)
                expectations.observed("default", obj["metadata"]["name"])  # as the Job handlers do

    def sync(self, after_backoff: bool = False) -> None:
        """One sync; `after_backoff` first lets fake time pass beyond any retry's wait (RETRY_BACKOFF_CAP)."""
        if after_backoff:
            clock = self.controller.clock
            assert isinstance(clock, FakeClock)
            clock.step(RETRY_BACKOFF_CAP)
        self.controller.sync.handle_job_flow(_req())
        self.observe()

    def set_phase(self, name: str, phase: str, retry_count: int = 0) -> None:
        stored = self.job(name)
        assert stored is not None, f"no Job {name}"
        stored["status"] = {"state": {"phase": phase}, "retryCount": retry_count}
        stored["metadata"].setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
        self.observe()

    def entry(self, name: str) -> dict[str, Any]:
        for e in self.flow()["status"].get("jobStatusList", []):
            if e["name"] == name:
                return dict(e)
        raise AssertionError(f"no jobStatusList entry {name}")

    def phase(self) -> str:
        return str(self.flow()["status"].get("state", {}).get("phase", ""))

    def job_verbs(self) -> list[tuple[str, str]]:
        return [(v, n) for v, n in self.clientset.api.verbs("jobs") if v in ("create", "delete")]


def _retry_events(recorder: FakeRecorder) -> list[str]:
    return [e for e in recorder.drain() if "RetryJob" in e]


# -- the core ------------------------------------------------------------------------------------


def test_a_failed_job_is_retried_up_to_max_retries_then_the_job_flow_fails() -> None:
    w = World(_flow({"a": {"maxRetries": 2, "backoff": "0s"}}))
    w.sync()
    assert w.job_verbs() == [("create", "f-a")]
    for attempt in (1, 2):
        w.set_phase("f-a", "Running")
        w.sync()
        w.set_phase("f-a", "Failed")
        w.sync()  # records the retry, then deletes the Job
        assert w.phase() == "Running"
        assert w.job("f-a") is None
        assert w.entry("f-a")["restartCount"] == attempt
        w.sync(after_backoff=True)  # the delete was seen: created again once the backoff passed
        created = w.job("f-a")
        assert created is not None
        assert created["metadata"]["annotations"][ATTEMPT_ANNOTATION] == str(attempt)
    w.set_phase("f-a", "Failed")
    w.sync()
    assert w.phase() == "Failed"
    assert w.job("f-a") is not None  # no third retry: it stays, as upstream leaves it
    assert w.job_verbs() == [("create", "f-a"), ("delete", "f-a"), ("create", "f-a")] * 1 + [
        ("delete", "f-a"),
        ("create", "f-a"),
    ]
    assert w.entry("f-a")["restartCount"] == 2
    assert w.controller.metrics.retry_count("default") == 2
    assert w.controller.metrics.failed_count("default") == 1


def test_each_retry_is_a_normal_retry_job_event_naming_the_job_the_attempt_and_max_retries() -> None:
    w = World(_flow({"a": {"maxRetries": 2, "backoff": "30s"}}))
    w.sync()
    w.set_phase("f-a", "Failed")
    w.recorder.drain()
    w.sync()
    assert _retry_events(w.recorder) == [
        "Normal RetryJob Job f-a ended Failed: deleting it to create it again in 30s (retry 1 of 2)"
    ]


def test_the_backoff_is_waited_through_add_after_never_in_the_worker() -> None:
    w = World(_flow({"a": {"maxRetries": 1, "backoff": "30s"}}))
    w.sync()
    w.set_phase("f-a", "Failed")
    w.sync()
    assert w.job("f-a") is None
    w.sync()  # the delete event's sync: too early
    assert w.job("f-a") is None
    assert w.delays == [(_req(), 30.0)]
    w.controller.clock.step(10)  # type: ignore[attr-defined]
    w.sync()
    assert w.job("f-a") is None
    assert w.delays[-1] == (_req(), 20.0)
    w.controller.clock.step(20)  # type: ignore[attr-defined]
    w.sync()  # the add_after wake-up
    assert w.job("f-a") is not None
    assert w.phase() in ("Pending", "Running")


def test_the_retries_done_survive_a_controller_restart() -> None:
    w = World(_flow({"a": {"maxRetries": 2, "backoff": "0s"}}))
    w.sync()
    w.set_phase("f-a", "Failed")
    w.sync()  # retry 1 recorded, Job deleted
    restarted = World.restarted(w)
    restarted.sync(after_backoff=True)  # the new process re-creates it as attempt 1
    created = restarted.job("f-a")
    assert created is not None and created["metadata"]["annotations"][ATTEMPT_ANNOTATION] == "1"
    restarted.set_phase("f-a", "Failed")
    again = World.restarted(restarted)
    again.sync()
    assert _retry_events(again.recorder) == [
        "Normal RetryJob Job f-a ended Failed: deleting it to create it again in 2s (retry 2 of 2)"
    ]
    again.sync(after_backoff=True)
    again.set_phase("f-a", "Failed")
    last = World.restarted(again)
    last.sync()
    assert last.phase() == "Failed"
    assert last.entry("f-a")["restartCount"] == 2


def test_a_job_deleted_for_a_retry_but_still_cached_is_not_counted_again() -> None:
    w = World(_flow({"a": {"maxRetries": 3, "backoff": "0s"}}))
    w.sync()
    w.set_phase("f-a", "Failed")
    old = dict(w.job("f-a") or {})
    w.sync()
    # The delete is not seen yet: the cache still holds the Failed Job (attempt 0, one retry recorded).
    w.controller.job_informer.get_indexer().add(old)
    w.controller.sync.handle_job_flow(_req())
    w.controller.sync.handle_job_flow(_req())
    assert sum(1 for h in w.entry("f-a")["runningHistories"] if h.get("state") == "Retrying") == 1
    assert w.phase() == "Pending"  # the old Job is no failure
    assert w.job_verbs()[-1] == ("delete", "f-a")  # its delete is issued again, nothing created
    assert w.controller.metrics.retry_count("default") == 1
    w.observe()  # now the delete is seen
    w.sync(after_backoff=True)
    assert w.job_verbs()[-1] == ("create", "f-a")


def test_the_re_created_job_is_never_deleted_for_the_old_one_a_lagging_cache_still_holds() -> None:
    w = World(_flow({"a": {"maxRetries": 3, "backoff": "0s"}}))
    w.sync()
    w.set_phase("f-a", "Failed")
    old = copy.deepcopy(w.job("f-a") or {})
    old["metadata"]["uid"] = "uid-of-the-first-job"
    w.sync()  # the retry recorded, the first Job deleted
    w.sync(after_backoff=True)  # the delete seen: re-created as attempt 1
    recreated = w.job("f-a")
    assert recreated is not None
    recreated["metadata"]["uid"] = "uid-of-the-second-job"
    w.controller.job_informer.get_indexer().update(old)  # the Job watch lags behind both
    w.controller.sync.handle_job_flow(_req())  # the delete by the old uid fails its precondition: no error
    assert w.job("f-a") is recreated
    assert w.entry("f-a")["restartCount"] == 1


def test_a_cache_behind_the_retry_write_never_skips_the_backoff() -> None:
    w = World(_flow({"a": {"maxRetries": 1, "backoff": "30s"}}))
    w.sync()
    w.set_phase("f-a", "Failed")
    w.observe()
    stale = dict(w.flow())
    w.sync()  # retry recorded and Job deleted
    w.controller.job_flow_informer.get_indexer().update(stale)  # the JobFlow watch lags
    w.controller.sync.handle_job_flow(_req())
    w.observe()
    assert w.job("f-a") is None
    assert w.delays and w.delays[-1][1] == 30.0


def test_a_terminated_job_is_retried_too() -> None:
    w = World(_flow({"a": {"maxRetries": 1}}))
    w.sync()
    w.set_phase("f-a", "Terminated")
    w.sync()
    assert ("delete", "f-a") in w.job_verbs()
    assert w.phase() != "Failed"


def test_restart_count_adds_the_flow_retries_to_the_jobs_own_retry_count() -> None:
    w = World(_flow({"a": {"maxRetries": 1, "backoff": "0s"}}))
    w.sync()
    w.set_phase("f-a", "Failed", retry_count=3)
    w.sync()
    assert w.entry("f-a")["restartCount"] == 4
    w.sync(after_backoff=True)
    w.set_phase("f-a", "Running", retry_count=1)
    w.sync()
    assert w.entry("f-a")["restartCount"] == 2


# -- what does not change ------------------------------------------------------------------------


def test_without_a_retry_policy_a_failed_job_fails_the_job_flow_as_upstream() -> None:
    w = World(_flow(None))
    w.sync()
    w.set_phase("f-a", "Failed", retry_count=3)
    w.sync()
    assert w.phase() == "Failed"
    assert w.job_verbs() == [("create", "f-a")]
    assert w.entry("f-a")["restartCount"] == 3
    assert w.controller.metrics.retry_count("default") == 0
    assert ATTEMPT_ANNOTATION not in (w.job("f-a") or {})["metadata"]["annotations"]


def test_a_completed_job_is_never_retried_nor_re_created() -> None:
    w = World(_flow({"a": {"maxRetries": 2, "backoff": "0s"}, "b": {"maxRetries": 2}}, flows=CHAIN))
    w.sync()
    w.set_phase("f-a", "Completed")
    w.sync()
    assert w.job("f-b") is not None
    # a's Job is deleted after it completed (a TTL): it is not created again.
    del w.clientset.api.objects[("jobs", "default", "f-a")]
    w.observe()
    w.set_phase("f-b", "Completed")
    w.sync()
    w.sync()
    assert w.phase() == "Succeed"
    assert w.job_verbs() == [("create", "f-a"), ("create", "f-b")]
    assert w.controller.metrics.retry_count("default") == 0


def test_no_retry_once_another_flow_failed_the_job_flow() -> None:
    flows = [{"name": "a"}, {"name": "b"}]
    w = World(_flow({"a": {"maxRetries": 2}}, flows=flows))
    w.sync()
    w.set_phase("f-a", "Failed")
    w.set_phase("f-b", "Failed")
    w.sync()
    assert w.phase() == "Failed"
    assert ("delete", "f-a") not in w.job_verbs()
    assert w.controller.metrics.retry_count("default") == 0


def test_a_bad_policy_stored_without_the_webhook_gets_a_warning_and_no_retries_for_its_flow() -> None:
    flows = [{"name": "a"}, {"name": "b"}]
    w = World(_flow({"a": {"maxRetries": -1}, "b": {"maxRetries": 1}}, flows=flows))
    w.sync()
    assert [e for e in w.recorder.drain() if "InvalidRetryPolicy" in e] == [
        "Warning InvalidRetryPolicy No retries for these flows: "
        'jobflow Flow "a": retry.maxRetries: must not be negative, got -1'
    ]
    w.set_phase("f-b", "Failed")
    w.sync()
    assert ("delete", "f-b") in w.job_verbs()  # b's good policy still applies
    w.set_phase("f-a", "Failed")
    w.sync()
    assert w.phase() == "Failed"
    assert ("delete", "f-a") not in w.job_verbs()


def test_policies_in_force_leave_out_a_bad_one_and_say_why() -> None:
    resolved = retry_policies(_flow({"a": {"maxRetries": 1, "backoff": "soon"}}))
    assert resolved.policies == {}
    assert resolved.problems == [
        'jobflow Flow "a": retry.backoff: invalid duration "soon" (a Go duration such as "30s", "1m30s")'
    ]
    unreadable = retry_policies(_annotated("{not json"))
    assert unreadable.policies == {}
    assert [p.split(": ")[:2] for p in unreadable.problems] == [["annotation flow.volcano.sh/retry", "not valid JSON"]]


def test_backoff_defaults_to_zero_and_is_read_as_a_go_duration() -> None:
    assert retry_policies(_flow({"a": {"maxRetries": 2}})).policies == {"a": RetryPolicy(max_retries=2, backoff=0.0)}
    got = retry_policies(_flow({"a": {"maxRetries": 0, "backoff": "1m30s"}})).policies
    assert got == {"a": RetryPolicy(max_retries=0, backoff=90.0)}


# -- the annotation, for clusters running upstream's CRD -------------------------------------------


def test_the_annotation_gives_a_policy_to_a_flow_without_the_field() -> None:
    w = World(_annotated({"a": {"maxRetries": 1, "backoff": "0s"}}))
    w.sync()
    w.set_phase("f-a", "Failed")
    w.sync()
    assert w.job_verbs() == [("create", "f-a"), ("delete", "f-a")]
    assert w.entry("f-a")["restartCount"] == 1


def test_the_field_wins_over_the_annotation_for_the_same_flow() -> None:
    obj = _flow({"a": {"maxRetries": 3, "backoff": "10s"}}, flows=[{"name": "a"}, {"name": "b"}])
    obj["metadata"]["annotations"] = {
        RETRY_ANNOTATION: json.dumps({"a": {"maxRetries": 1}, "b": {"maxRetries": 2, "backoff": "1s"}})
    }
    assert retry_policies(obj).policies == {
        "a": RetryPolicy(max_retries=3, backoff=10.0),
        "b": RetryPolicy(max_retries=2, backoff=1.0),
    }


# -- the metric ----------------------------------------------------------------------------------


def test_the_retry_counter_is_exposed_under_its_bare_name() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from jobflow_controller.jobflow.state.metrics import JobFlowMetrics

    registry = CollectorRegistry()
    metrics = JobFlowMetrics(registry)
    metrics.update_job_flow_job_retry("ns1")
    text = generate_latest(registry).decode()
    assert f'{RETRY_NAME}{{jobflow_namespace="ns1"}} 1.0' in text
    samples = [line for line in text.splitlines() if not line.startswith("#")]
    assert not [line for line in samples if line.startswith(f"{RETRY_NAME}_")]  # no _total, no _created


# -- admission -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("retry", "message"),
    [
        ({"maxRetries": -1}, 'jobflow Flow "a": retry.maxRetries: must not be negative, got -1'),
        (
            {"maxRetries": 1, "backoff": "30 seconds"},
            'jobflow Flow "a": retry.backoff: invalid duration "30 seconds" (a Go duration such as "30s", "1m30s")',
        ),
        ({"maxRetries": 1, "backoff": "-5s"}, 'jobflow Flow "a": retry.backoff: must not be negative, got "-5s"'),
        ({"maxRetries": 101}, 'jobflow Flow "a": retry.maxRetries: must be at most 100, got 101'),
        ({}, 'jobflow Flow "a": retry.maxRetries: required'),
        ({"maxRetries": "2"}, 'jobflow Flow "a": retry.maxRetries: must be an integer, got "2"'),
        (
            {"maxRetry": 2, "maxRetries": 2},
            'jobflow Flow "a": retry: unknown field "maxRetry" (known: maxRetries, backoff)',
        ),
        (3, 'jobflow Flow "a": retry: must be an object with maxRetries and backoff, got 3'),
    ],
)
def test_admission_refuses_a_bad_retry_field_with_a_precise_message(retry: Any, message: str) -> None:
    assert validate_job_flow(_flow({"a": retry})) == [message]


@pytest.mark.parametrize(
    ("retry", "message"),
    [
        ({"a": {"maxRetries": -1}}, 'annotation flow.volcano.sh/retry["a"].maxRetries: must not be negative, got -1'),
        ({"z": {"maxRetries": 1}}, 'annotation flow.volcano.sh/retry["z"]: no flow of this JobFlow is named "z"'),
        (
            ["a"],
            "annotation flow.volcano.sh/retry: must be a JSON object keyed by flow name, "
            'e.g. {"a": {"maxRetries": 2, "backoff": "30s"}}',
        ),
    ],
)
def test_admission_refuses_a_bad_retry_annotation_with_a_precise_message(retry: Any, message: str) -> None:
    assert validate_job_flow(_annotated(retry)) == [message]


def test_admission_refuses_an_annotation_that_is_not_json() -> None:
    (problem,) = validate_job_flow(_annotated("{not json"))
    assert problem.startswith("annotation flow.volcano.sh/retry: not valid JSON: ")


def test_a_good_policy_passes_admission() -> None:
    assert validate_job_flow(_flow({"a": {"maxRetries": 0}})) == []
    assert validate_job_flow(_flow({"a": {"maxRetries": 3, "backoff": "1m30s"}})) == []
    assert validate_job_flow(_annotated({"a": {"maxRetries": 3, "backoff": "1m30s"}})) == []


def test_a_null_retry_field_is_no_policy() -> None:
    assert validate_job_flow(_flow({"a": None})) == []
    assert retry_policies(_flow({"a": None})).policies == {}


def test_an_update_checks_the_retry_field_only_when_it_changes_the_flows() -> None:
    stored = _flow({"a": {"maxRetries": -1}})  # stored while the webhook was off
    relabelled = _flow({"a": {"maxRetries": -1}})
    relabelled["metadata"]["labels"] = {"team": "x"}
    assert validate_job_flow_update(relabelled, stored) == []
    fixed = _flow({"a": {"maxRetries": 1}})
    assert validate_job_flow_update(fixed, stored) == []
    worse = _flow({"a": {"maxRetries": -2}})
    assert validate_job_flow_update(worse, fixed) == [
        'jobflow Flow "a": retry.maxRetries: must not be negative, got -2'
    ]


def test_an_update_checks_the_annotation_when_it_or_the_flows_change() -> None:
    stored = _annotated({"a": {"maxRetries": -1}})
    relabelled = _annotated({"a": {"maxRetries": -1}})
    relabelled["metadata"]["labels"] = {"team": "x"}
    assert validate_job_flow_update(relabelled, stored) == []
    worse = _annotated({"a": {"maxRetries": -2}})
    assert validate_job_flow_update(worse, stored) == [
        'annotation flow.volcano.sh/retry["a"].maxRetries: must not be negative, got -2'
    ]
    reflowed = _annotated({"a": {"maxRetries": -1}}, flows=[{"name": "a"}, {"name": "b"}])
    assert validate_job_flow_update(reflowed, stored) != []


def test_max_retries_is_bounded_at_100() -> None:
    assert validate_job_flow(_flow({"a": {"maxRetries": 100}})) == []
    assert retry_policies(_flow({"a": {"maxRetries": 100}})).policies == {
        "a": RetryPolicy(max_retries=100, backoff=0.0)
    }


@pytest.mark.parametrize(
    ("backoff", "waits"),
    [
        (0.0, [RETRY_BACKOFF_FLOOR, 2.0, 4.0, 8.0]),  # the floor, doubling
        (30.0, [30.0, 60.0, 120.0, 240.0, 360.0, 360.0]),  # doubling up to the cap
        (900.0, [900.0, 900.0]),  # a backoff above the cap is waited as it is
    ],
)
def test_each_retry_waits_twice_the_last_from_a_floor_up_to_a_cap(backoff: float, waits: list[float]) -> None:
    policy = RetryPolicy(max_retries=100, backoff=backoff)
    assert [retry_delay(policy, n) for n in range(1, len(waits) + 1)] == waits
    assert RETRY_BACKOFF_CAP == 360.0


def test_a_zero_backoff_still_waits_the_floor_through_add_after() -> None:
    w = World(_flow({"a": {"maxRetries": 2, "backoff": "0s"}}))
    w.sync()
    w.set_phase("f-a", "Failed")
    w.sync()  # the retry recorded, the Job deleted
    w.sync()  # the delete seen, but the floor has not passed
    assert w.job("f-a") is None
    assert w.delays and w.delays[-1][1] == RETRY_BACKOFF_FLOOR
