"""Fixtures for end-to-end tests: one real control plane per session, one namespace per test.

The control plane is etcd + kube-apiserver + kube-controller-manager started from the cached
binaries (built on first use), with the project's CRDs installed. A failing test gets the tail of
every process's log attached to its report.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.errors import NotFoundError
from jobflow_controller.kube.event_sink import KubeEventSink
from jobflow_controller.kube.resources import PODS
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import install_crds, kubectl
from jobflow_controller.local.resources import NAMESPACES
from jobflow_controller.local.simulator import COMPONENT as SIMULATOR_COMPONENT
from jobflow_controller.local.simulator import JobSimulator
from jobflow_controller.record import EventBroadcaster


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    plane = ControlPlane()
    plane.start()
    try:
        install_crds(plane.kubeconfig_path)
        yield plane
    finally:
        plane.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    plane = getattr(item, "funcargs", {}).get("control_plane")
    if report.failed and isinstance(plane, ControlPlane):
        report.sections.append(("control plane logs", plane.logs()))


@pytest.fixture(scope="session")
def kubeconfig(control_plane: ControlPlane) -> Path:
    return control_plane.kubeconfig_path


@pytest.fixture(scope="session")
def rest(kubeconfig: Path) -> Iterator[RestClient]:
    client = RestClient(build_config(str(kubeconfig)), qps=500, burst=1000, user_agent="jobflow-e2e")
    yield client
    client.close()


@pytest.fixture(scope="session")
def clientset(rest: RestClient) -> Clientset:
    return Clientset(rest)


@pytest.fixture
def namespace(clientset: Clientset, control_plane: ControlPlane) -> Iterator[str]:
    """A fresh namespace, deleted (by the real namespace controller) after the test."""
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    # Pods the simulator ran (dependsOn.probe) are bound to a node no kubelet serves: deleted with a
    # grace period they would never go, and the namespace controller would never finish.
    with contextlib.suppress(NotFoundError):
        for pod in clientset.resource(PODS, name).list():
            clientset.resource(PODS, name).delete(pod["metadata"]["name"], grace_period_seconds=0)
    with contextlib.suppress(NotFoundError):
        clientset.resource(NAMESPACES).delete(name)


@pytest.fixture
def kubectl_run(kubeconfig: Path) -> Callable[..., str]:
    def run(*args: str, check: bool = True) -> str:
        return kubectl(kubeconfig, *args, check=check)

    return run


@pytest.fixture(scope="session")
def simulator(clientset: Clientset) -> Iterator[JobSimulator]:
    """The one Volcano job simulator of the session (two would race on the same Jobs)."""
    stop = threading.Event()
    broadcaster = EventBroadcaster()
    broadcaster.start_recording_to_sink(KubeEventSink.from_rest_client(clientset.rest))
    sim = JobSimulator(clientset, recorder=broadcaster.new_recorder(SIMULATOR_COMPONENT))
    thread = threading.Thread(target=sim.run, args=(stop,), name="job-simulator", daemon=True)
    thread.start()
    yield sim
    stop.set()
    thread.join(timeout=10)
    broadcaster.shutdown(timeout=5)
