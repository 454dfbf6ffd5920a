"""The `jobflow-controller` command as an operator runs it: health, metrics, flags, leader election."""

from __future__ import annotations

import datetime
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_helpers import FAST_LEASE_FLAGS, ControllerProcess, wait_for
from jobflows import chain, create_all, flow, job_names, phase_of, template

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ConflictError, NotFoundError
from jobflow_controller.local.simulator import JobSimulator


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[list[ControllerProcess]]:
    started: list[ControllerProcess] = []
    yield started
    for proc in started:
        proc.stop()


def _holder(clientset: Clientset, lease: str) -> str:
    try:
        obj = clientset.leases("default").get(lease)
    except NotFoundError:
        return ""
    return str(obj["spec"].get("holderIdentity") or "")


def _writes(proc: ControllerProcess) -> int:
    """Requests other than GET the process has sent through its REST client (its lease has its own)."""
    total = 0
    for line in proc.metrics().splitlines():
        if line.startswith("rest_client_requests_total{") and 'method="GET"' not in line:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def test_health_endpoints_answer_and_readyz_waits_for_the_caches(
    kubeconfig: Path, tmp_path: Path, processes: list[ControllerProcess]
) -> None:
    proc = ControllerProcess(str(kubeconfig), tmp_path, "--leader-elect=false")
    processes.append(proc)
    wait_for(lambda: proc.get("/readyz") == (200, "ok"), 30, what="/readyz")
    assert proc.get("/healthz") == (200, "ok")
    assert proc.get("/healthz/ping") == (200, "ok")  # upstream's pair; neither can fail
    assert proc.get("/livez") == (200, "ok")
    assert proc.get("/livez/leaderElection") == (200, "ok")
    code, body = proc.get("/readyz?verbose")
    assert code == 200
    assert "[+]informer-sync ok" in body
    assert proc.get("/nope")[0] == 404


def test_metrics_expose_the_exact_names(
    kubeconfig: Path,
    tmp_path: Path,
    processes: list[ControllerProcess],
    simulator: JobSimulator,
    clientset: Clientset,
    namespace: str,
) -> None:
    proc = ControllerProcess(str(kubeconfig), tmp_path, "--leader-elect=false")
    processes.append(proc)
    wait_for(lambda: proc.get("/readyz")[0] == 200, 30)
    create_all(clientset, [template("a", namespace)])
    create_all(clientset, [flow("measured", namespace, chain("a"))])
    wait_for(lambda: phase_of(clientset, namespace, "measured") == "Succeed", 60)
    text = wait_for(lambda: (t := proc.metrics()) and f'jobflow_namespace="{namespace}"' in t and t, 10)
    assert f'volcano_jobflow_succeed_phase_count{{jobflow_namespace="{namespace}"}} 1.0' in text
    for name in (
        "# TYPE volcano_jobflow_succeed_phase_count counter",
        "# HELP workqueue_adds_total Total number of adds handled by workqueue",
        'workqueue_adds_total{name="jobflow"}',
        'workqueue_depth{name="jobflow"}',
        'workqueue_depth{name="jobtemplate"}',
        "workqueue_queue_duration_seconds_bucket{",
        "workqueue_work_duration_seconds_bucket{",
        "workqueue_unfinished_work_seconds{",
        "workqueue_longest_running_processor_seconds{",
        "workqueue_retries_total{",
        "rest_client_requests_total{",
        "rest_client_request_duration_seconds_bucket{",
        # Ours (issue 25): the per-JobFlow memories, back at 0 once the JobFlow's work is done.
        "# TYPE jobflow_controller_memory_objects gauge",
        'jobflow_controller_memory_objects{memory="create_expectations"} 0.0',
        'jobflow_controller_memory_objects{memory="lifecycle_commands"} 0.0',
    ):
        assert name in text, name
    assert "_created" not in text


def test_a_bad_flag_exits_2_with_one_readable_line() -> None:
    binary = str(Path(sys.executable).parent / "jobflow-controller")
    result = subprocess.run([binary, "--max-requeue-num=many"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    # The reason is Go's, as pflag's IntVar gives it (strconv.ParseInt).
    assert result.stderr == (
        "jobflow-controller: error: argument --max-requeue-num: invalid int value 'many': "
        'strconv.ParseInt: parsing "many": invalid syntax\n'
    )


def test_a_controller_named_twice_exits_1_with_upstreams_line() -> None:
    binary = str(Path(sys.executable).parent / "jobflow-controller")
    argv = [binary, "--controllers=*,+job-controller,-job-controller"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stderr) == (
        1,
        "controllers option -job-controller cannot have both '-' and '+' prefixes\n",
    )


def test_version_prints_and_exits_0() -> None:
    binary = str(Path(sys.executable).parent / "jobflow-controller")
    result = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stdout) == (0, "jobflow-controller 0.1.0\n")


def test_only_the_leader_writes_and_a_killed_leader_hands_over_without_duplicate_jobs(
    kubeconfig: Path,
    tmp_path: Path,
    processes: list[ControllerProcess],
    simulator: JobSimulator,
    clientset: Clientset,
    namespace: str,
) -> None:
    lease = f"jf-{uuid.uuid4().hex[:6]}"
    flags = (*FAST_LEASE_FLAGS, f"--leader-elect-resource-name={lease}")
    first = ControllerProcess(str(kubeconfig), tmp_path, *flags, name="first")
    second = ControllerProcess(str(kubeconfig), tmp_path, *flags, name="second")
    processes.extend([first, second])
    wait_for(lambda: _holder(clientset, lease), 30, what="a leader")
    wait_for(lambda: first.get("/readyz")[0] == 200 and second.get("/readyz")[0] == 200, 30, what="both Ready")
    wait_for(lambda: first.is_leader() or second.is_leader(), 10, what="a process to report leading")
    leader, standby = (first, second) if first.is_leader() else (second, first)

    create_all(clientset, [template(n, namespace, "Pending:0.2s,Running:1.5s,Completed") for n in "abc"])
    create_all(clientset, [flow("handover", namespace, chain("a", "b", "c"))])
    wait_for(lambda: "handover-b" in job_names(clientset, namespace), 60, what="the second Job")
    assert _writes(standby) == 0
    assert _writes(leader) > 0

    killed_at = time.monotonic()
    leader.signal(signal.SIGKILL)
    wait_for(standby.is_leader, 4 + 0.5 + 5, interval=0.1, what="the standby to take over")
    took = time.monotonic() - killed_at
    assert took <= 4 + 0.5 + 2, f"failover took {took:.1f}s"
    wait_for(lambda: phase_of(clientset, namespace, "handover") == "Succeed", 60)
    assert job_names(clientset, namespace) == ["handover-a", "handover-b", "handover-c"]
    # The API server names the field manager after the user agent, upstream's binary name.
    written = clientset.job_flows(namespace).get("handover")["metadata"].get("managedFields") or []
    assert {m.get("manager") for m in written if m.get("subresource") == "status"} == {"vc-controller-manager"}
    created = [e for e in clientset.events(namespace).list() if e["reason"] == "Created"]
    assert sorted(e["message"] for e in created) == [f"create a job named handover-{n}!" for n in "abc"]


def test_sigterm_exits_0_and_hands_the_lease_over_at_once(
    kubeconfig: Path, tmp_path: Path, processes: list[ControllerProcess], clientset: Clientset
) -> None:
    lease = f"jf-{uuid.uuid4().hex[:6]}"
    flags = (*FAST_LEASE_FLAGS, f"--leader-elect-resource-name={lease}", "--graceful-shutdown-timeout=10s")
    first = ControllerProcess(str(kubeconfig), tmp_path, *flags, name="first")
    processes.append(first)
    wait_for(first.is_leader, 30, what="the first to lead")
    second = ControllerProcess(str(kubeconfig), tmp_path, *flags, name="second")
    processes.append(second)
    wait_for(lambda: second.get("/readyz")[0] == 200, 30, what="the standby to be Ready")
    assert not second.is_leader()

    stopped_at = time.monotonic()
    first.signal(signal.SIGTERM)
    assert first.popen.wait(timeout=15) == 0
    exited = time.monotonic() - stopped_at
    wait_for(second.is_leader, 3, interval=0.05, what="the standby to lead at once")
    handed = time.monotonic() - stopped_at
    assert exited < 10 and handed < 4 - 0.5, (exited, handed)
    assert "leaderelection lost" not in first.log()


def test_an_address_in_use_exits_1_with_one_readable_line(kubeconfig: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        binary = str(Path(sys.executable).parent / "jobflow-controller")
        result = subprocess.run(
            [
                binary,
                f"--kubeconfig={kubeconfig}",
                "--leader-elect=false",
                "--enable-healthz",
                f"--healthz-address=127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("jobflow-controller: error:")]
    assert lines == ["jobflow-controller: error: cannot serve health or metrics: [Errno 98] Address already in use"]


def test_a_leader_that_loses_its_lease_exits_1(
    kubeconfig: Path, tmp_path: Path, processes: list[ControllerProcess], clientset: Clientset
) -> None:
    """As upstream's `klog.Fatalf("leaderelection lost")`: a replica that cannot renew stops at once."""
    lease = f"jf-{uuid.uuid4().hex[:6]}"
    leader = ControllerProcess(str(kubeconfig), tmp_path, *FAST_LEASE_FLAGS, f"--leader-elect-resource-name={lease}")
    processes.append(leader)
    wait_for(leader.is_leader, 30, what="the process to lead")

    def steal() -> bool:
        stolen = clientset.leases("default").get(lease)
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        stolen["spec"].update(holderIdentity="someone-else", leaseDurationSeconds=600, renewTime=now, acquireTime=now)
        try:
            clientset.leases("default").update(stolen)
        except ConflictError:  # the leader renewed in between: read it again
            return False
        return True

    wait_for(steal, 10, what="the lease to be taken over")
    assert leader.popen.wait(timeout=3 + 10) == 1
    assert "leaderelection lost" in leader.log()


def test_upstreams_tls_flags_serve_healthz_over_https_and_the_webhook_has_its_own(
    kubeconfig: Path, tmp_path: Path, processes: list[ControllerProcess]
) -> None:
    """Issue 14: `--tls-cert-file`/`--tls-private-key-file`/`--ca-cert-file` mean what upstream means
    (HTTPS on the health endpoint); the webhook takes `--webhook-tls-*`, and the two can differ."""
    import ssl
    import urllib.request

    from jobflow_controller.local.certs import TinyCA, write
    from jobflow_controller.local.processes import free_port

    def serving(ca: TinyCA, name: str) -> tuple[Path, Path]:
        pair = ca.issue(name, server=True, dns_names=("localhost",), ips=("127.0.0.1",))
        cert = write(tmp_path / f"{name}.crt", pair.cert_pem)
        return cert, write(tmp_path / f"{name}.key", pair.key_pem, private=True)

    health_ca, webhook_ca = TinyCA("health-ca"), TinyCA("webhook-ca")
    health_cert, health_key = serving(health_ca, "health")
    webhook_cert, webhook_key = serving(webhook_ca, "webhook")
    ca_file = write(tmp_path / "health-ca.crt", health_ca.cert_pem)
    webhook_port = free_port()
    proc = ControllerProcess(
        str(kubeconfig),
        tmp_path,
        "--leader-elect=false",
        f"--tls-cert-file={health_cert}",
        f"--tls-private-key-file={health_key}",
        f"--ca-cert-file={ca_file}",
        "--enable-webhook",
        f"--webhook-address=127.0.0.1:{webhook_port}",
        f"--webhook-tls-cert-file={webhook_cert}",
        f"--webhook-tls-private-key-file={webhook_key}",
    )
    processes.append(proc)

    def https(port: int, path: str, ca: TinyCA) -> tuple[int, str]:
        context = ssl.create_default_context(cadata=ca.cert_pem.decode())
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", timeout=5, context=context) as resp:
                return resp.status, resp.read().decode()
        except OSError:
            return 0, ""

    wait_for(lambda: https(proc.healthz_port, "/readyz", health_ca) == (200, "ok"), 30, what="HTTPS /readyz")
    assert proc.get("/healthz")[0] == 0  # plain HTTP gets no answer on the TLS port
    assert https(webhook_port, "/healthz", webhook_ca) == (200, "ok")
    assert https(webhook_port, "/healthz", health_ca) == (0, "")  # the webhook's certificate is its own
    # Metrics stay plain HTTP on their own address, as upstream's.
    assert "rest_client_requests_total" in proc.metrics()


def test_a_health_certificate_that_does_not_load_exits_1_with_one_readable_line(
    kubeconfig: Path, tmp_path: Path
) -> None:
    binary = str(Path(sys.executable).parent / "jobflow-controller")
    result = subprocess.run(
        [
            binary,
            f"--kubeconfig={kubeconfig}",
            "--leader-elect=false",
            "--enable-healthz",
            "--healthz-address=127.0.0.1:0",
            f"--tls-cert-file={tmp_path / 'missing.crt'}",
            f"--tls-private-key-file={tmp_path / 'missing.key'}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("jobflow-controller: error:")]
    assert lines == ["jobflow-controller: error: cannot serve health or metrics: [Errno 2] No such file or directory"]


#: The container args of Volcano v1.15.1's chart (installer/helm/chart/volcano/templates/controllers.yaml),
#: every optional line on, as tests/unit/manager/test_manager_volcano_chart.py renders them.
VOLCANO_CHART_ARGS = (
    "--logtostderr",
    "--enable-healthz=true",
    "--enable-metrics=true",
    "--leader-elect=true",
    "--scheduler-name=volcano",
    "--leader-elect-resource-namespace=volcano-system",
    "--kube-api-qps=50",
    "--kube-api-burst=100",
    "--worker-threads=3",
    "--worker-threads-for-gc=5",
    "--worker-threads-for-podgroup=5",
    "--sharding-configmap=volcano-sharding-configmap",
    "--sharding-configmap-namespace=volcano-system",
    "--controllers=*,-hyperNode-controller",
    "-v=4",
    "2>&1",
)


def test_volcanos_chart_arguments_start_the_controller(
    kubeconfig: Path, tmp_path: Path, processes: list[ControllerProcess]
) -> None:
    """Issue 20: vc-controller-manager's arguments, as Volcano's chart passes them, run this process.

    Only the Lease is moved (to `default`, under a name of its own) by flags given after them."""
    lease = f"chart-{uuid.uuid4().hex[:8]}"
    flags = (*VOLCANO_CHART_ARGS, "--leader-elect-resource-namespace=default", f"--leader-elect-resource-name={lease}")
    proc = ControllerProcess(str(kubeconfig), tmp_path, *flags)
    processes.append(proc)
    wait_for(lambda: proc.get("/readyz") == (200, "ok"), 30, what="/readyz")
    wait_for(proc.is_leader, 30, what="the lease")
    assert proc.get("/healthz/ping") == (200, "ok")
    line = next(ln for ln in proc.log().splitlines() if "accepted as vc-controller-manager does" in ln)
    for name in ("--scheduler-name", "--worker-threads-for-gc", "--sharding-configmap", "--logtostderr", "2>&1"):
        assert name in line
