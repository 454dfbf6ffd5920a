"""The limits of `dependsOn.probe` (docs/probe.md "Limits"): addresses never checked, a pool fair
across namespaces, and an expiry that does not scan every result."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import pytest

from jobflow_controller.apis.probe import HttpGet, TcpSocket, parse_probe
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.probes import (
    MAX_PENDING_CHECKS,
    MAX_PENDING_PER_NAMESPACE,
    PROBE_POLL_PERIOD,
    PROBE_TIMEOUT,
    PROBE_WORKERS,
    ProbeCache,
    ProbeGate,
    ProbeKey,
    ProbeResult,
)
from jobflow_controller.jobflow.probes.net import refused_target
from workqueue import FakeClock

UID = "uid-1"
JOB: dict[str, Any] = {
    "metadata": {"name": "jf-a", "namespace": "default", "uid": "job-jf-a"},
    "spec": {"tasks": [{"name": "ps", "replicas": 1}]},
}
JOB_FLOW: dict[str, Any] = {"metadata": {"name": "jf", "namespace": "default", "uid": UID}}
TCP = parse_probe({"tcpSocketList": [{"taskName": "ps", "port": 2222}]})
BOTH = parse_probe(
    {"tcpSocketList": [{"taskName": "ps", "port": 2222}], "httpGetList": [{"taskName": "ps", "port": 80}]}
)


class InlineExecutor(Executor):
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


class HeldExecutor(Executor):
    """Keeps every turn of the pool until the test runs it."""

    def __init__(self) -> None:
        self.held: list[Callable[[], Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.held.append(lambda: fn(*args, **kwargs))
        return Future()


class Runner:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def http_get(self, host: str, check: HttpGet, timeout: float) -> ProbeResult:
        self.calls.append(host)
        return ProbeResult(True)

    def tcp_socket(self, host: str, check: TcpSocket, timeout: float) -> ProbeResult:
        self.calls.append(host)
        return ProbeResult(True)


class Pods:
    def __init__(self, *pods: dict[str, Any]) -> None:
        self.pods = list(pods)

    def task_pods(self, namespace: str, job_name: str, task: str) -> list[dict[str, Any]]:
        return self.pods


def _pod(name: str, ip: str, *, host_network: bool = False) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "ownerReferences": [{"kind": "Job", "name": "jf-a", "uid": "job-jf-a", "controller": True}],
        },
        "status": {"phase": "Running", "podIP": ip},
    }
    if host_network:
        pod["spec"] = {"hostNetwork": True}
    return pod


def _gate(*pods: dict[str, Any], allow_loopback: bool = False) -> tuple[ProbeGate, Runner, list[str], list[float]]:
    runner, outlet = Runner(), Outlet()
    gate = ProbeGate(
        ProbeCache(FakeClock(), executor=InlineExecutor()),
        runner,
        Pods(*pods),
        outlet,
        allow_loopback=allow_loopback,
    )
    return gate, runner, outlet.warnings, outlet.requeues


class Outlet:
    """Where the gate's requeues and Warnings go (probe.ProbeOutlet), recorded."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.requeues: list[float] = []

    def react(self, namespace: str, name: str, delay: float = 0.0) -> None:
        self.requeues.append(delay)

    def warn_invalid_probe(self, job_flow: Any, message: str, *args: Any) -> None:
        self.warnings.append(message % args)


# -- addresses never checked ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ip", "why"),
    [
        ("127.0.0.1", "a loopback address is never probed"),
        ("127.3.2.1", "a loopback address is never probed"),
        ("::1", "a loopback address is never probed"),
        ("::ffff:127.0.0.1", "a loopback address is never probed"),
        ("169.254.169.254", "a link-local address is never probed"),
        ("fe80::1", "a link-local address is never probed"),
        ("0.0.0.0", "an unspecified address is never probed"),
        ("::", "an unspecified address is never probed"),
        ("224.0.0.1", "a multicast address is never probed"),
        ("ff02::1", "a multicast address is never probed"),
        ("255.255.255.255", "the broadcast address is never probed"),
        ("not-an-ip", "that is not an IP address"),
    ],
)
def test_an_address_that_is_not_a_pods_own_is_refused(ip: str, why: str) -> None:
    assert refused_target(_pod("p", ip), ip) == why


@pytest.mark.parametrize("ip", ["10.0.0.7", "192.168.1.2", "172.16.0.1", "fd00::7", "100.64.0.1", "8.8.8.8"])
def test_a_pod_network_address_is_checked(ip: str) -> None:
    assert refused_target(_pod("p", ip), ip) is None


def test_a_host_network_pod_is_refused_whatever_its_ip() -> None:
    assert refused_target(_pod("p", "10.0.0.7", host_network=True), "10.0.0.7") == (
        "it runs in its node's network (spec.hostNetwork), so its IP is the node's"
    )


def test_loopback_is_allowed_only_when_asked_and_nothing_else_is() -> None:
    assert refused_target(_pod("p", "127.0.0.1"), "127.0.0.1", allow_loopback=True) is None
    assert refused_target(_pod("p", "169.254.1.1"), "169.254.1.1", allow_loopback=True) is not None
    assert refused_target(_pod("p", "127.0.0.1", host_network=True), "127.0.0.1", allow_loopback=True) is not None


def test_a_refused_pod_is_never_checked_and_its_job_flow_gets_one_warning_naming_it() -> None:
    gate, runner, warnings, requeues = _gate(_pod("jf-a-ps-0", "169.254.169.254"))
    assert not gate.target_met(JOB_FLOW, "b", BOTH, JOB)
    assert runner.calls == []
    assert warnings == [
        'Job jf-b is not created: the probe of flow "b" does not check pod jf-a-ps-0 at 169.254.169.254: '
        "a link-local address is never probed"
    ]
    assert requeues == []  # nothing a poll could change: a pod event syncs the JobFlow again
    assert c.MESSAGE_PROBE_TARGET_REFUSED.startswith("Job %s is not created: ")


def test_a_host_network_pod_makes_the_flow_wait() -> None:
    gate, runner, warnings, _ = _gate(_pod("jf-a-ps-0", "10.0.0.7", host_network=True))
    assert not gate.target_met(JOB_FLOW, "b", TCP, JOB)
    assert runner.calls == []
    assert warnings[0].endswith(
        "at 10.0.0.7: it runs in its node's network (spec.hostNetwork), so its IP is the node's"
    )


def test_other_pods_of_the_task_are_still_checked_beside_a_refused_one() -> None:
    gate, runner, warnings, _ = _gate(_pod("jf-a-ps-0", "127.0.0.1"), _pod("jf-a-ps-1", "10.0.0.8"))
    assert gate.target_met(JOB_FLOW, "b", TCP, JOB)  # one replica: the good pod suffices
    assert runner.calls == ["10.0.0.8"]
    assert len(warnings) == 1


def test_with_loopback_allowed_a_loopback_pod_is_checked() -> None:
    gate, runner, warnings, _ = _gate(_pod("jf-a-ps-0", "127.0.0.1"), allow_loopback=True)
    assert gate.target_met(JOB_FLOW, "b", TCP, JOB)
    assert (runner.calls, warnings) == (["127.0.0.1"], [])


# -- fairness across namespaces -----------------------------------------------------------------------
def _key(namespace: str, i: int) -> ProbeKey:
    return ProbeKey(f"uid-{namespace}", "b", TcpSocket("ps", 1), f"p{i}", namespace)


def _recording(started: list[str], name: str) -> Callable[[], ProbeResult]:
    def run() -> ProbeResult:
        started.append(name)
        return ProbeResult(True)

    return run


def test_one_namespace_holds_at_most_its_cap_of_checks_and_the_pool_its_total() -> None:
    held = HeldExecutor()
    cache = ProbeCache(FakeClock(), executor=held)
    for i in range(1000):
        cache.result(_key("a", i), lambda: ProbeResult(True), lambda: None)
    assert cache.pending() == MAX_PENDING_PER_NAMESPACE
    for n in range(MAX_PENDING_CHECKS // MAX_PENDING_PER_NAMESPACE):
        for i in range(MAX_PENDING_PER_NAMESPACE):
            cache.result(_key(f"ns{n}", i), lambda: ProbeResult(True), lambda: None)
    assert cache.pending() == MAX_PENDING_CHECKS


def test_the_pool_takes_checks_round_robin_across_namespaces() -> None:
    held, started = HeldExecutor(), list[str]()
    cache = ProbeCache(FakeClock(), executor=held)
    for i in range(1000):
        cache.result(_key("a", i), _recording(started, f"a{i}"), lambda: None)
    cache.result(_key("b", 0), _recording(started, "b0"), lambda: None)
    for turn in held.held[:4]:  # the pool's turns in the order they were handed out
        turn()
    assert started == ["a0", "b0", "a1", "a2"]


def test_a_flood_from_one_namespace_delays_anothers_check_by_at_most_the_stated_bound() -> None:
    """A floods 1,000 slow checks (each its whole timeout T), then B asks for one: with W workers
    B's check starts within ⌈N/W⌉·T, N = 2 namespaces waiting (docs/probe.md "Limits")."""
    timeout, workers = 0.2, PROBE_WORKERS
    pool = ThreadPoolExecutor(max_workers=workers)
    cache, b_started = ProbeCache(FakeClock(), executor=pool), threading.Event()

    def slow() -> ProbeResult:
        time.sleep(timeout)
        return ProbeResult(False, "timed out")

    for i in range(1000):
        cache.result(_key("a", i), slow, lambda: None)
    time.sleep(timeout / 2)  # A's first checks are running, the rest of its cap queued
    asked = time.monotonic()

    def b_check() -> ProbeResult:
        b_started.set()
        return ProbeResult(True)

    cache.result(_key("b", 0), b_check, lambda: None)
    assert b_started.wait(5.0)
    waited = time.monotonic() - asked
    cache.shutdown()
    bound = math.ceil(2 / workers) * timeout
    assert waited <= bound + 0.1, f"B waited {waited:.2f}s, bound {bound:.2f}s"
    # Without the round-robin B would wait for all of A's capped checks: 16 / 4 x 0.2 s = 0.8 s.
    assert MAX_PENDING_PER_NAMESPACE / workers * timeout > bound + 0.1


def test_the_stated_bound_with_the_shipped_numbers_is_one_timeout() -> None:
    assert math.ceil(2 / PROBE_WORKERS) * PROBE_TIMEOUT == 1.0


# -- expiry ----------------------------------------------------------------------------------------------
def test_a_lookup_examines_o1_results_amortized_not_every_result() -> None:
    clock = FakeClock()
    cache = ProbeCache(clock, executor=InlineExecutor(), max_pending_per_namespace=10_000, max_pending=10_000)
    n = 2000
    for i in range(n):
        cache.result(_key("a", i), lambda: ProbeResult(True), lambda: None)
    before = cache.expiry_examined
    for _ in range(5):  # five polls, each asking for all 2,000 results
        clock.step(PROBE_POLL_PERIOD)
        for i in range(n):
            cache.result(_key("a", i), lambda: ProbeResult(True), lambda: None)
    assert cache.expiry_examined - before <= 5 * n  # one look per lookup; a scan would be 5 x 2,000²
    assert len(cache) == n


def test_results_nobody_asks_for_are_dropped_from_the_front_only() -> None:
    clock = FakeClock()
    cache = ProbeCache(clock, executor=InlineExecutor(), expiry=5.0, max_pending_per_namespace=10_000)
    for i in range(100):
        cache.result(_key("a", i), lambda: ProbeResult(True), lambda: None)
    clock.step(3.0)
    for i in range(50, 100):  # the last 50 asked again
        cache.result(_key("a", i), lambda: ProbeResult(True), lambda: None)
    clock.step(3.0)
    before = cache.expiry_examined
    cache.result(_key("a", 99), lambda: ProbeResult(True), lambda: None)
    assert len(cache) == 50  # the first 50 expired
    assert cache.expiry_examined - before == 51  # the 50 dropped and the first one kept


def test_a_result_whose_check_is_in_hand_is_kept_past_its_expiry() -> None:
    held, clock, done = HeldExecutor(), FakeClock(), threading.Event()
    cache = ProbeCache(clock, executor=held, expiry=5.0)
    cache.result(_key("a", 0), lambda: ProbeResult(True), done.set)
    clock.step(6.0)  # the check is still queued
    cache.result(_key("a", 1), lambda: ProbeResult(True), lambda: None)
    assert len(cache) == 2
    held.held[0]()
    assert done.is_set()  # its result was stored, not dropped


def test_forgetting_a_job_flow_drops_only_its_results() -> None:
    cache = ProbeCache(FakeClock(), executor=InlineExecutor())
    for namespace in ("a", "b"):
        for i in range(3):
            cache.result(_key(namespace, i), lambda: ProbeResult(True), lambda: None)
    cache.forget("uid-a")
    assert len(cache) == 3
