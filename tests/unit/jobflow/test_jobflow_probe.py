"""`dependsOn.probe` as a dependency condition (ours; upstream stores the field and never reads it).

The rule (docs/probe.md): a target is met when its Job is Completed, or when the probe entries naming
one of its Job's tasks all pass. Network checks run on the probe pool, never on the worker; their
results are cached per (JobFlow uid, flow, check, pod) for the poll period, and a JobFlow waiting on
a failing check is put back after that period. The clock is fake, the runner is fake, and the pool
is either inline or held by the test.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

import pytest
import structlog.testing
from jobflow_fakes import FakeClientset, job, job_flow, job_template

from jobflow_controller.apis.probe import HttpGet, TcpSocket
from jobflow_controller.jobflow import JobFlowController, JobFlowOptions
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.probes import PROBE_POLL_PERIOD, PROBE_TIMEOUT, ProbeCache, ProbeKey, ProbeResult
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.record import FakeRecorder
from workqueue import FakeClock

UID = "uid-1"
SPEC: dict[str, Any] = {
    "tasks": [
        {"name": "ps", "replicas": 1, "template": {"spec": {"containers": [{"name": "m", "image": "x"}]}}},
        {"name": "worker", "replicas": 2, "template": {"spec": {"containers": [{"name": "m", "image": "x"}]}}},
    ]
}


# -- doubles --------------------------------------------------------------------------------------
class FakeRunner:
    """Answers each check from `ok` (by kind and port); records every call and the thread it ran on."""

    def __init__(self) -> None:
        self.ok: dict[tuple[str, int], bool] = {}
        self.calls: list[tuple[str, str, Any, float]] = []

    def http_get(self, host: str, check: HttpGet, timeout: float) -> ProbeResult:
        self.calls.append(("http", host, check, timeout))
        return ProbeResult(self.ok.get(("http", check.port), False), "HTTP 503")

    def tcp_socket(self, host: str, check: TcpSocket, timeout: float) -> ProbeResult:
        self.calls.append(("tcp", host, check, timeout))
        return ProbeResult(self.ok.get(("tcp", check.port), False), "connection refused")


class InlineExecutor(Executor):
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


class HeldExecutor(Executor):
    """Keeps every submitted check until the test runs it: a check that takes as long as it likes."""

    def __init__(self) -> None:
        self.held: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.held.append((fn, args))
        return Future()

    def run_all(self) -> None:
        held, self.held = self.held, []
        for fn, args in held:
            fn(*args)


class FakePods:
    def __init__(self, synced: bool = True) -> None:
        self.pods: list[dict[str, Any]] = []
        self.synced = synced

    def task_pods(self, namespace: str, job_name: str, task: str) -> list[dict[str, Any]] | None:
        if not self.synced:
            return None
        return [
            p
            for p in self.pods
            if p["metadata"]["labels"] == {"volcano.sh/job-name": job_name, "volcano.sh/task-spec": task}
        ]


def _controller(executor: Executor | None = None) -> tuple[JobFlowController, FakeClientset, FakeRecorder, FakeRunner]:
    clientset, recorder, runner = FakeClientset(), FakeRecorder(), FakeRunner()
    controller = JobFlowController(
        clientset,  # type: ignore[arg-type]
        VolcanoInformerFactory(clientset),  # type: ignore[arg-type]
        recorder,
        JobFlowOptions(probe_runner=runner, probe_executor=executor or InlineExecutor()),
        clock=FakeClock(),
    )
    return controller, clientset, recorder, runner


def _setup(
    probe: dict[str, Any] | None,
    *,
    target_phase: str = "Running",
    counts: dict[str, dict[str, int]] | None = None,
    executor: Executor | None = None,
    targets: tuple[str, ...] = ("a",),
    extra_flows: tuple[dict[str, Any], ...] = (),
) -> tuple[JobFlowController, FakeClientset, FakeRecorder, FakeRunner, FakePods]:
    controller, clientset, recorder, runner = _controller(executor)
    depends_on: dict[str, Any] = {"targets": list(targets)}
    if probe is not None:
        depends_on["probe"] = probe
    flows = [*({"name": t} for t in targets), {"name": "b", "dependsOn": depends_on}, *extra_flows]
    controller.job_flow_informer.get_indexer().add(job_flow("jf", flows=flows, uid=UID))
    for name in ("a", "b", "c", "d"):
        controller.job_template_informer.get_indexer().add(job_template(name, spec=SPEC))
    for target in targets:
        controller.job_informer.get_indexer().add(_target_job(f"jf-{target}", target_phase, counts))
    pods = FakePods()
    controller.probes.gate.pods = pods
    return controller, clientset, recorder, runner, pods


def _target_job(name: str, phase: str, counts: dict[str, dict[str, int]] | None = None) -> dict[str, Any]:
    target = job(name, flow="jf", template=name.removeprefix("jf-"), phase=phase, owner_uid=UID)
    target["metadata"]["uid"] = f"job-{name}"
    target["spec"] = SPEC
    if counts:
        target["status"]["taskStatusCount"] = {task: {"phase": phases} for task, phases in counts.items()}
    return target


def _pod(job_name: str, task: str, index: int, *, phase: str = "Running", ip: str = "10.0.0.1") -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"{job_name}-{task}-{index}",
            "namespace": "default",
            "uid": f"pod-{job_name}-{task}-{index}",
            "labels": {"volcano.sh/job-name": job_name, "volcano.sh/task-spec": task},
            "ownerReferences": [
                {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job_name, "uid": f"job-{job_name}"}
                | {"controller": True}
            ],
        },
        "status": {"phase": phase, "podIP": ip} if ip else {"phase": phase},
    }


def _sync(controller: JobFlowController) -> None:
    controller.sync.handle_job_flow(JobFlowController.request_for("default", "jf"))


def _created(clientset: FakeClientset) -> list[str]:
    """The Jobs the controller created (stored by the fake API server)."""
    return sorted(name for plural, _ns, name in clientset.api.objects if plural == "jobs")


def _wait_for_len(controller: JobFlowController, n: int, timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while len(controller.queue) != n and time.monotonic() < deadline:
        time.sleep(0.005)
    assert len(controller.queue) == n


HTTP = {
    "httpGetList": [{"taskName": "ps", "port": 8080, "path": "/ready", "httpHeader": {"name": "X-A", "value": "1"}}]
}
TCP = {"tcpSocketList": [{"taskName": "ps", "port": 2222}]}


# -- without a probe: upstream's rule -------------------------------------------------------------
def test_without_a_probe_a_running_target_does_not_let_its_dependent_start() -> None:
    controller, clientset, _, runner, _ = _setup(None, counts={"ps": {"Running": 1}})
    _sync(controller)
    assert _created(clientset) == []
    assert runner.calls == []
    assert len(controller.queue) == 0


# -- taskStatusList ---------------------------------------------------------------------------------
def test_a_task_status_probe_is_met_when_every_replica_of_the_task_is_in_the_phase() -> None:
    probe = {"taskStatusList": [{"taskName": "worker", "phase": "Running"}]}
    controller, clientset, _, _, _ = _setup(probe, counts={"worker": {"Running": 2}})
    _sync(controller)
    assert _created(clientset) == ["jf-b"]


def test_a_task_status_probe_is_not_met_while_fewer_pods_than_replicas_are_in_the_phase() -> None:
    probe = {"taskStatusList": [{"taskName": "worker", "phase": "Running"}]}
    controller, clientset, _, _, _ = _setup(probe, counts={"worker": {"Running": 1, "Pending": 1}})
    _sync(controller)
    assert _created(clientset) == []
    # No poll: the Job's own status update (its taskStatusCount) enqueues the JobFlow.
    assert len(controller.queue) == 0


def test_a_completed_target_is_met_whatever_its_probe_says() -> None:
    probe = {"taskStatusList": [{"taskName": "worker", "phase": "Running"}]}
    controller, clientset, _, _, _ = _setup(probe, target_phase="Completed", counts={"worker": {"Succeeded": 2}})
    _sync(controller)
    assert _created(clientset) == ["jf-b"]


def test_every_entry_naming_a_task_of_the_target_must_pass() -> None:
    probe = {
        "taskStatusList": [{"taskName": "worker", "phase": "Running"}, {"taskName": "ps", "phase": "Running"}],
    }
    controller, clientset, _, _, _ = _setup(probe, counts={"worker": {"Running": 2}, "ps": {"Pending": 1}})
    _sync(controller)
    assert _created(clientset) == []


def test_a_target_no_entry_applies_to_keeps_upstreams_rule() -> None:
    """Targets a (tasks ps, worker) and c (no task `train`): c must still complete."""
    probe = {"taskStatusList": [{"taskName": "worker", "phase": "Running"}]}
    controller, clientset, _, _, _ = _setup(probe, targets=("a", "c"), counts={"worker": {"Running": 2}})
    c_job = _target_job("jf-c", "Running")
    c_job["spec"] = {"tasks": [{"name": "train", "replicas": 1}]}
    controller.job_informer.get_indexer().update(c_job)
    controller.job_template_informer.get_indexer().update(job_template("c", spec=c_job["spec"]))
    _sync(controller)
    assert _created(clientset) == []
    controller.job_informer.get_indexer().update({**c_job, "status": {"state": {"phase": "Completed"}}})
    _sync(controller)
    assert _created(clientset) == ["jf-b"]


# -- httpGetList / tcpSocketList ---------------------------------------------------------------------
def test_an_http_probe_is_run_against_the_running_pods_ip_with_its_path_header_and_timeout() -> None:
    controller, clientset, _, runner, pods = _setup(HTTP)
    pods.pods.append(_pod("jf-a", "ps", 0))
    runner.ok[("http", 8080)] = True
    _sync(controller)
    assert _created(clientset) == ["jf-b"]
    ((kind, host, check, timeout),) = runner.calls
    assert (kind, host, timeout) == ("http", "10.0.0.1", PROBE_TIMEOUT)
    assert check == HttpGet(task_name="ps", port=8080, path="/ready", header=("X-A", "1"))


def test_a_failing_http_probe_holds_the_dependent_and_polls_again_after_the_poll_period() -> None:
    controller, clientset, _, _, pods = _setup(HTTP)
    pods.pods.append(_pod("jf-a", "ps", 0))
    _sync(controller)
    assert _created(clientset) == []
    # The inline pool finished the check at once, which enqueued the JobFlow; take that away.
    _drain(controller)
    controller.clock.step(PROBE_POLL_PERIOD)  # type: ignore[attr-defined]
    _wait_for_len(controller, 1)


def test_a_failed_result_stands_for_the_poll_period_then_the_check_runs_again() -> None:
    controller, clientset, _, runner, pods = _setup(HTTP)
    pods.pods.append(_pod("jf-a", "ps", 0))
    _sync(controller)
    runner.ok[("http", 8080)] = True
    _sync(controller)
    assert len(runner.calls) == 1  # cached
    assert _created(clientset) == []
    controller.clock.step(PROBE_POLL_PERIOD)  # type: ignore[attr-defined]
    _sync(controller)
    assert len(runner.calls) == 2
    assert _created(clientset) == ["jf-b"]


def test_a_tcp_probe_is_met_once_the_port_accepts() -> None:
    controller, clientset, _, runner, pods = _setup(TCP)
    pods.pods.append(_pod("jf-a", "ps", 0))
    _sync(controller)
    assert _created(clientset) == []
    runner.ok[("tcp", 2222)] = True
    controller.clock.step(PROBE_POLL_PERIOD)  # type: ignore[attr-defined]
    _sync(controller)
    assert _created(clientset) == ["jf-b"]
    assert [(kind, host, check.port) for kind, host, check, _ in runner.calls] == [("tcp", "10.0.0.1", 2222)] * 2


def test_the_worker_never_waits_for_a_check_the_finished_check_enqueues_the_job_flow() -> None:
    held = HeldExecutor()
    controller, clientset, _, runner, pods = _setup(HTTP, executor=held)
    pods.pods.append(_pod("jf-a", "ps", 0))
    runner.ok[("http", 8080)] = True
    _sync(controller)  # returns with the check still held: nothing ran on this thread
    assert runner.calls == []
    assert _created(clientset) == []
    _sync(controller)
    assert len(held.held) == 1  # a running check is not submitted twice
    _drain(controller)
    held.run_all()
    assert len(controller.queue) == 1  # the pass is acted on at once, not after the poll
    _sync(controller)
    assert _created(clientset) == ["jf-b"]


def test_a_network_probe_needs_as_many_passing_running_pods_as_the_task_has_replicas() -> None:
    probe = {"tcpSocketList": [{"taskName": "worker", "port": 2222}]}
    controller, clientset, _, runner, pods = _setup(probe)
    runner.ok[("tcp", 2222)] = True
    pods.pods.append(_pod("jf-a", "worker", 0, ip="10.0.0.1"))
    pods.pods.append(_pod("jf-a", "worker", 1, phase="Pending", ip=""))
    _sync(controller)
    assert _created(clientset) == []
    pods.pods[1] = _pod("jf-a", "worker", 1, ip="10.0.0.2")
    _sync(controller)
    assert _created(clientset) == ["jf-b"]
    assert sorted(host for _, host, _, _ in runner.calls) == ["10.0.0.1", "10.0.0.2"]


@pytest.mark.parametrize(
    "pod",
    [
        _pod("jf-a", "ps", 0, phase="Pending", ip=""),
        _pod("jf-a", "ps", 0, phase="Succeeded"),
        {**_pod("jf-a", "ps", 0), "metadata": {**_pod("jf-a", "ps", 0)["metadata"], "ownerReferences": []}},
        {**_pod("jf-a", "ps", 0), "metadata": {**_pod("jf-a", "ps", 0)["metadata"], "deletionTimestamp": "x"}},
    ],
    ids=["pending-without-ip", "succeeded", "not-the-jobs", "being-deleted"],
)
def test_only_running_pods_of_the_target_job_are_checked(pod: dict[str, Any]) -> None:
    controller, clientset, _, runner, pods = _setup(HTTP)
    runner.ok[("http", 8080)] = True
    pods.pods.append(pod)
    _sync(controller)
    assert runner.calls == []
    assert _created(clientset) == []


def test_while_the_pod_cache_fills_the_probe_waits_and_polls() -> None:
    controller, clientset, _, runner, pods = _setup(HTTP)
    pods.synced = False
    _sync(controller)
    assert _created(clientset) == []
    assert runner.calls == []
    controller.clock.step(PROBE_POLL_PERIOD)  # type: ignore[attr-defined]
    _wait_for_len(controller, 1)


# -- what the controller says about a probe it cannot judge -----------------------------------------
def test_a_probe_naming_a_task_no_target_has_gets_an_invalid_probe_warning_and_the_flow_waits() -> None:
    probe = {"taskStatusList": [{"taskName": "chief", "phase": "Running"}]}
    controller, clientset, recorder, _, _ = _setup(
        probe, target_phase="Completed", extra_flows=({"name": "d", "dependsOn": {"targets": ["a"]}},)
    )
    _sync(controller)
    assert _created(clientset) == ["jf-d"]  # the other flows go on
    assert _warnings(recorder) == [
        f'Warning {c.REASON_INVALID_PROBE} Job jf-b is not created: the probe of flow "b" names task '
        '"chief", which none of its targets (a) has'
    ]


def test_the_task_check_reads_the_template_before_the_target_job_exists() -> None:
    probe = {"taskStatusList": [{"taskName": "chief", "phase": "Running"}]}
    controller, _, recorder, _, _ = _setup(probe)
    controller.job_informer.get_indexer().delete(_target_job("jf-a", "Running"))
    _sync(controller)
    assert [e.split(" ")[1] for e in _warnings(recorder)] == [c.REASON_INVALID_PROBE]


def test_a_probe_admission_would_refuse_gets_an_invalid_probe_warning_naming_the_problem() -> None:
    controller, clientset, recorder, _, _ = _setup({"tcpSocketList": [{"taskName": "ps", "port": 0}]})
    _sync(controller)
    assert _created(clientset) == []
    assert recorder.drain() == [
        f'Warning {c.REASON_INVALID_PROBE} Job jf-b is not created: the probe of flow "b" is invalid: '
        "dependsOn.probe.tcpSocketList[0].port: must be between 1 and 65535, not 0"
    ]


# -- the cache ----------------------------------------------------------------------------------------
def _key(pod: str = "p") -> ProbeKey:
    return ProbeKey(UID, "b", TcpSocket("ps", 1), pod)


def test_the_cache_holds_at_most_max_pending_checks_in_hand() -> None:
    held = HeldExecutor()
    cache = ProbeCache(FakeClock(), executor=held, max_pending=2)
    for pod in ("p1", "p2", "p3"):
        assert cache.result(_key(pod), lambda: ProbeResult(True), lambda: None) is None
    assert len(held.held) == 2
    held.run_all()
    assert cache.result(_key("p3"), lambda: ProbeResult(True), lambda: None) is None  # submitted now
    assert len(held.held) == 1


def test_a_result_older_than_the_poll_period_is_not_used_while_it_is_checked_again() -> None:
    held, clock = HeldExecutor(), FakeClock()
    cache = ProbeCache(clock, executor=held)
    assert cache.result(_key(), lambda: ProbeResult(True), lambda: None) is None
    held.run_all()
    assert cache.result(_key(), lambda: ProbeResult(True), lambda: None) == ProbeResult(True)
    clock.step(PROBE_POLL_PERIOD)
    assert cache.result(_key(), lambda: ProbeResult(True), lambda: None) is None
    assert len(held.held) == 1


def test_a_results_age_counts_from_when_its_check_was_submitted() -> None:
    """The sync that submits a check polls again after the poll period; that sync must check again."""
    held, clock = HeldExecutor(), FakeClock()
    cache = ProbeCache(clock, executor=held)
    cache.result(_key(), lambda: ProbeResult(False), lambda: None)
    clock.step(0.5)  # the check takes half a second
    held.run_all()
    clock.step(PROBE_POLL_PERIOD - 0.5)  # the poll, one period after the submitting sync
    assert cache.result(_key(), lambda: ProbeResult(True), lambda: None) is None
    assert len(held.held) == 1


def test_a_check_that_raises_is_a_failed_check() -> None:
    def boom() -> ProbeResult:
        raise RuntimeError("no route")

    cache = ProbeCache(FakeClock(), executor=InlineExecutor())
    assert cache.result(_key(), boom, lambda: None) == ProbeResult(False, "probe error: no route")


def test_results_nobody_asks_for_expire_and_a_deleted_job_flows_are_forgotten() -> None:
    clock = FakeClock()
    cache = ProbeCache(clock, executor=InlineExecutor(), expiry=5.0)
    cache.result(_key("p1"), lambda: ProbeResult(True), lambda: None)
    cache.result(ProbeKey("other", "b", TcpSocket("ps", 1), "p"), lambda: ProbeResult(True), lambda: None)
    cache.forget("other")
    assert len(cache) == 1
    clock.step(6.0)
    cache.result(_key("p2"), lambda: ProbeResult(True), lambda: None)
    assert len(cache) == 1  # p1 expired, p2 is new


# -- the pod handler --------------------------------------------------------------------------------
def test_a_pod_of_a_target_job_turning_running_enqueues_its_job_flow() -> None:
    controller, _, _, _, _ = _setup(HTTP)
    pending = _pod("jf-a", "ps", 0, phase="Pending", ip="")
    controller.probes.update_pod(pending, pending)
    assert len(controller.queue) == 0  # nothing a probe looks at changed
    controller.probes.update_pod(pending, _pod("jf-a", "ps", 0))
    req, _ = controller.queue.get()
    assert req == JobFlowController.request_for("default", "jf")


def test_a_pod_of_a_job_no_job_flow_controls_enqueues_nothing() -> None:
    controller, _, _, _, _ = _setup(HTTP)
    controller.probes.add_pod(_pod("someone-else", "ps", 0))
    assert len(controller.queue) == 0


def _warnings(recorder: FakeRecorder) -> list[str]:
    return [e for e in recorder.drain() if e.startswith("Warning ")]


def _drain(controller: JobFlowController) -> None:
    while len(controller.queue):
        req, _ = controller.queue.get()
        controller.queue.done(req)


# -- the Pod informer starts on the first network check -------------------------------------------------
def _pod_informer_created(controller: JobFlowController) -> bool:
    from jobflow_controller.kube.resources import PODS

    return PODS in controller.informer_factory._factory.informers()


def test_no_pod_is_listed_for_job_flows_without_network_checks() -> None:
    probe = {"taskStatusList": [{"taskName": "worker", "phase": "Running"}]}
    for spec in (None, probe):
        controller, _, _, _, _ = _setup(spec, counts={"worker": {"Running": 2}})
        controller.probes.gate.pods = controller.probes  # the real pod source
        _sync(controller)
        assert not _pod_informer_created(controller)


def test_the_first_network_check_creates_the_pod_informer_and_waits_for_it_to_sync() -> None:
    controller, clientset, _, runner, _ = _setup(TCP)
    controller.probes.gate.pods = controller.probes
    _sync(controller)
    assert _pod_informer_created(controller)
    assert runner.calls == []
    assert _created(clientset) == []


# -- addresses never checked (docs/probe.md "Limits") ------------------------------------------------
def test_a_pod_on_a_loopback_address_is_never_checked_and_the_job_flow_gets_an_invalid_probe_warning() -> None:
    controller, clientset, recorder, runner, pods = _setup(TCP)
    pods.pods.append(_pod("jf-a", "ps", 0, ip="127.0.0.1"))
    runner.ok[("tcp", 2222)] = True
    _sync(controller)
    assert _created(clientset) == []
    assert runner.calls == []
    assert _warnings(recorder) == [
        f'Warning {c.REASON_INVALID_PROBE} Job jf-b is not created: the probe of flow "b" does not check pod '
        "jf-a-ps-0 at 127.0.0.1: a loopback address is never probed"
    ]


def test_a_host_network_pod_is_never_checked() -> None:
    controller, clientset, recorder, runner, pods = _setup(HTTP)
    pod = _pod("jf-a", "ps", 0, ip="10.0.0.9")
    pods.pods.append({**pod, "spec": {"hostNetwork": True}})
    runner.ok[("http", 8080)] = True
    _sync(controller)
    assert (_created(clientset), runner.calls) == ([], [])
    assert "(spec.hostNetwork)" in _warnings(recorder)[0]


def test_a_failing_check_is_logged_once_not_at_every_sync_that_reads_it() -> None:
    controller, _, _, runner, pods = _setup(HTTP)
    pods.pods.append(_pod("jf-a", "ps", 0))
    with structlog.testing.capture_logs() as logs:
        for _ in range(3):
            _sync(controller)
            controller.clock.step(PROBE_POLL_PERIOD)  # type: ignore[attr-defined]
    failures = [e["event"] for e in logs if e["event"].startswith("probe ")]
    assert len(runner.calls) == 3  # checked three times ...
    assert failures == ["probe httpGet ps:8080/ready of flow b failed on 10.0.0.1: HTTP 503"]  # ... logged once
