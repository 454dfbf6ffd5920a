"""`dependsOn.probe` on the real control plane (ours; upstream stores the field and never reads it).

A probed target lets its dependent start once the probe passes, before the target completes
(docs/probe.md). The simulator stands in for Volcano's job controller and for the kubelet: it
creates the pods of a task that asks for them (`sim.jobflow.volcano.sh/pods: "true"`) and reports
them Running on 127.0.0.1, so the HTTP and TCP checks reach servers this test runs on 127.0.0.1,
and only there.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import EventLog, RunningManager, wait_for
from jobflows import create_all, events_of, flow, job_names, phase_of, template

from informers.errors import NotFoundError
from jobflow_controller.apis import job as vcjob
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.simulated_pods import PODS_ANNOTATION
from jobflow_controller.local.simulator import JobSimulator

LOCALHOST = "127.0.0.1"
#: The target runs long enough that only a probe, never its completion, can start the dependent.
LONG = "Pending:0.3s,Running:60s,Completed"


@pytest.fixture(scope="module")
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=3, probe_allow_loopback=True)
    yield running
    running.stop()


class _Readiness(BaseHTTPRequestHandler):
    """GET /ready: 503 until the test says ready, then 200. Every answer is recorded."""

    ready = threading.Event()
    answers: list[int] = []

    def do_GET(self) -> None:
        code = 200 if self.path == "/ready" and _Readiness.ready.is_set() else 503
        _Readiness.answers.append(code)
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def readiness_server() -> Iterator[int]:
    _Readiness.ready.clear()
    _Readiness.answers.clear()
    server = ThreadingHTTPServer((LOCALHOST, 0), _Readiness)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOCALHOST, 0))
        return int(sock.getsockname()[1])


def _served(name: str, namespace: str, script: str = LONG) -> dict[str, Any]:
    """A JobTemplate whose task `main` gets simulated pods on 127.0.0.1 while it runs."""
    doc = template(name, namespace, script)
    doc["spec"]["tasks"][0]["template"]["metadata"]["annotations"][PODS_ANNOTATION] = "true"
    return doc


def _probed(name: str, target: str, probe: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": [target], "probe": probe}}


def _phase_of_job(clientset: Clientset, namespace: str, name: str) -> str:
    """The Job's phase; "" while it does not exist yet (a Warning about one flow may be recorded by a
    sync that could not create another flow's Job yet, its template not in the cache)."""
    try:
        return vcjob.phase(clientset.jobs(namespace).get(name))
    except NotFoundError:
        return ""


def test_a_task_status_probe_starts_the_dependent_while_the_target_runs(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    """b waits for task `main` of a to be Running; c, without a probe, waits for a to complete."""
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    try:
        create_all(
            clientset,
            [
                template("a", namespace, "Pending:1s,Running:3s,Completed"),
                template("b", namespace),
                template("c", namespace),
            ],
        )
        probe = {"taskStatusList": [{"taskName": "main", "phase": "Running"}]}
        create_all(clientset, [flow("jf", namespace, [{"name": "a"}, _probed("b", "a", probe), _after("c", "a")])])
        wait_for(lambda: phase_of(clientset, namespace, "jf") == "Succeed", 60, what="jf Succeed")
        events = log.snapshot()
    finally:
        log.close()
    a_phase_when_added = {}
    a_phase = ""
    for kind, job in events:
        name = job["metadata"]["name"]
        if name == "jf-a":
            a_phase = vcjob.phase(job)
        elif kind == "ADDED":
            a_phase_when_added[name] = a_phase
    assert a_phase_when_added == {"jf-b": "Running", "jf-c": "Completed"}


def _after(name: str, target: str) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": [target]}}


def test_an_http_probe_that_fails_then_passes_creates_the_dependent_only_once_it_passes(
    controller: RunningManager, clientset: Clientset, namespace: str, readiness_server: int
) -> None:
    create_all(clientset, [_served("server", namespace), template("client", namespace)])
    probe = {"httpGetList": [{"taskName": "main", "port": readiness_server, "path": "/ready"}]}
    create_all(clientset, [flow("jf", namespace, [{"name": "server"}, _probed("client", "server", probe)])])

    # The pod reports Running on 127.0.0.1 and the controller probes it: 503, twice at least.
    wait_for(lambda: _Readiness.answers.count(503) >= 2, 30, what="two failed probes")
    assert "jf-client" not in job_names(clientset, namespace)
    pod = clientset.pods(namespace).get("jf-server-main-0")
    assert (pod["status"]["phase"], pod["status"]["podIP"]) == ("Running", LOCALHOST)
    assert pod["metadata"]["labels"]["volcano.sh/job-name"] == "jf-server"
    assert pod["metadata"]["labels"]["volcano.sh/task-spec"] == "main"

    _Readiness.ready.set()
    ready_at = time.monotonic()
    wait_for(lambda: "jf-client" in job_names(clientset, namespace), 15, what="jf-client created")
    # At most one poll period (2 s) for the failed result to lapse, one check, one sync; with room
    # for a busy machine.
    assert time.monotonic() - ready_at < 8.0
    assert 200 in _Readiness.answers
    # Started by the probe, not by the server's completion.
    assert _phase_of_job(clientset, namespace, "jf-server") == "Running"
    assert phase_of(clientset, namespace, "jf") in ("Pending", "Running")


def test_a_tcp_probe_creates_the_dependent_once_the_port_accepts(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    port = _free_port()
    create_all(clientset, [_served("db", namespace), template("app", namespace)])
    probe = {"tcpSocketList": [{"taskName": "main", "port": port}]}
    create_all(clientset, [flow("jf", namespace, [{"name": "db"}, _probed("app", "db", probe)])])

    wait_for(lambda: _pod_running(clientset, namespace, "jf-db-main-0"), 30, what="the db pod Running")
    # Nothing listens yet: the check is refused, poll after poll.
    with pytest.raises(AssertionError):
        wait_for(lambda: "jf-app" in job_names(clientset, namespace), 5, what="jf-app")

    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((LOCALHOST, port))
        listener.listen(16)
        wait_for(lambda: "jf-app" in job_names(clientset, namespace), 15, what="jf-app created")
    assert _phase_of_job(clientset, namespace, "jf-db") == "Running"


def test_a_probe_naming_a_task_the_target_lacks_gets_an_invalid_probe_warning(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [template("a", namespace), template("b", namespace)])
    probe = {"taskStatusList": [{"taskName": "chief", "phase": "Running"}]}
    create_all(clientset, [flow("jf", namespace, [{"name": "a"}, _probed("b", "a", probe)])])
    message = 'Job jf-b is not created: the probe of flow "b" names task "chief", which none of its targets (a) has'
    wait_for(
        lambda: any(e[:3] == ("Warning", "InvalidProbe", message) for e in events_of(clientset, namespace, "jf")),
        30,
        what="the InvalidProbe warning",
    )
    wait_for(lambda: _phase_of_job(clientset, namespace, "jf-a") == "Completed", 30)
    assert "jf-b" not in job_names(clientset, namespace)


def _pod_running(clientset: Clientset, namespace: str, name: str) -> bool:
    try:
        pod = clientset.pods(namespace).get(name)
    except Exception:  # noqa: BLE001 - not there yet
        return False
    return bool((pod.get("status") or {}).get("phase") == "Running")
