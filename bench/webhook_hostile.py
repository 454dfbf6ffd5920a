"""The admission webhook under hostile input, while the API server's reviews keep coming.

The webhook runs in a child process of its own (``--serve``), as the manager serves it, so its
memory is measured apart from the attackers'. For ``ATTACK_SECONDS``, at once:

* a normal AdmissionReview every 100 ms, each on its own connection, as the API server sends them;
* ``SLOW_CONNECTIONS`` connections dripping their headers one byte every ``DRIP_INTERVAL`` s, each
  reconnecting once the server cuts it (``REQUEST_DEADLINE`` after its accept);
* 16 MiB bodies, sent as fast as the server takes them, one after another;
* 3 MiB of nested brackets, and 3 MiB of ``[{},{},...]``, one after another.

Prints one JSON document: the webhook's idle and peak RSS (VmHWM), the normal reviews' latency
(p50/p99/max), how many failed and how, and what each attack got back. No control plane is needed.
Exits 1 if a normal review failed or the webhook died.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

# bench/ holds scripts named like the project's packages (workqueue.py, informers.py): drop it.
_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))

from bench._common import (  # noqa: E402
    Watchdog,
    emit,
    latency_summary_ms,
    log,
    machine,
    proc_status_kib,
)

ATTACK_SECONDS = 15.0
#: The environment manifests/deployment.yaml gives the container (glibc arenas), so the RSS measured
#: is the pod's; ``--default-malloc`` leaves it out.
POD_ENVIRONMENT = {"MALLOC_ARENA_MAX": "2"}
NORMAL_INTERVAL = 0.1
SLOW_CONNECTIONS = 200
DRIP_INTERVAL = 0.5
HUGE_BODY = 16 * 1024 * 1024
HOSTILE_BODY = 3 * 1024 * 1024
JSON = "application/json"


def serve(cert_file: str, key_file: str) -> None:
    """The child: the webhook on a free port, printed on stdout, until stdin closes.

    Its log (warnings up, as the manager's default level) goes to stderr, which the parent drops.
    """
    import logging

    import structlog

    from jobflow_controller.webhook import WebhookServer

    structlog.configure(
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
    )

    with WebhookServer(("127.0.0.1", 0), cert_file, key_file) as server:
        print(server.port, flush=True)
        sys.stdin.read()


def normal_review(uid: int) -> bytes:
    job_flow = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "pipeline", "namespace": "default"},
        "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
    }
    request = {
        "uid": f"normal-{uid}",
        "resource": {"group": "flow.volcano.sh", "version": "v1alpha1", "resource": "jobflows"},
        "operation": "CREATE",
        "object": job_flow,
    }
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


class Target:
    """Where the webhook listens and how to trust it."""

    def __init__(self, port: int, ca_pem: bytes) -> None:
        self.port = port
        self.context = ssl.create_default_context(cadata=ca_pem.decode())

    def tls(self, timeout: float = 15.0) -> ssl.SSLSocket:
        plain = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        return self.context.wrap_socket(plain, server_hostname="127.0.0.1")

    def post(self, body: bytes) -> int:
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=15)
        try:
            connection.request("POST", "/jobflows/validate?timeout=10s", body, {"Content-Type": JSON})
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()


def repeat(until: float, attempt: Callable[[], str], outcomes: Counter[str]) -> None:
    """Run ``attempt`` again and again until ``until``, counting what each one got."""
    while time.monotonic() < until:
        try:
            outcomes[attempt()] += 1
        except (OSError, http.client.HTTPException) as err:
            outcomes[type(err).__name__] += 1


def huge_body(target: Target) -> str:
    with target.tls() as connection:
        head = f"POST /jobflows/validate HTTP/1.1\r\nContent-Type: {JSON}\r\nContent-Length: {HUGE_BODY}\r\n\r\n"
        connection.sendall(head.encode())
        chunk = b"x" * 65536
        try:
            for _ in range(HUGE_BODY // len(chunk)):
                connection.sendall(chunk)
        except OSError:
            pass  # refused before the body was read: the server stopped reading and closed
        reply = connection.recv(64)
    return reply.split(b" ", 2)[1].decode() if reply.startswith(b"HTTP/") else "no answer"


def slow_connection(target: Target, until: float, cut_after: list[float]) -> str:
    started = time.monotonic()
    with target.tls() as connection:
        connection.sendall(b"POST /jobflows/validate HTTP/1.1\r\nX-Slow: ")
        try:
            while time.monotonic() < until:
                connection.sendall(b"a")
                time.sleep(DRIP_INTERVAL)
        except OSError:
            cut_after.append(time.monotonic() - started)
            return "cut by the server"
    return "still open at the end"


def normal_reviews(target: Target, until: float, latencies: list[float], errors: Counter[str]) -> int:
    sent = 0
    next_at = time.monotonic()
    while next_at < until:
        time.sleep(max(0.0, next_at - time.monotonic()))
        next_at += NORMAL_INTERVAL
        sent += 1
        started = time.monotonic()
        try:
            status = target.post(normal_review(sent))
        except (OSError, http.client.HTTPException) as err:
            errors[type(err).__name__] += 1
            continue
        if status == 200:
            latencies.append(time.monotonic() - started)
        else:
            errors[f"HTTP {status}"] += 1
    return sent


def start_webhook(directory: Path, environment: dict[str, str]) -> tuple[subprocess.Popen[str], Target]:
    from jobflow_controller.local.certs import TinyCA, write

    ca = TinyCA("webhook-hostile-ca")
    pair = ca.issue("jobflow-controller-webhook", server=True, ips=("127.0.0.1",))
    cert = write(directory / "tls.crt", pair.cert_pem)
    key = write(directory / "tls.key", pair.key_pem, private=True)
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(cert), str(key)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **environment},
    )
    assert child.stdout is not None
    port = int(child.stdout.readline())
    return child, Target(port, ca.cert_pem)


class Attackers:
    """The hostile clients of ``attack``, started together, each repeating until ``until``.

    ``bench/hostile.py`` turns them on the controller process's webhook while the API server admits
    other JobFlows through it; ``attack`` below adds its own normal reviews.
    """

    def __init__(self, target: Target, until: float) -> None:
        self.outcomes: dict[str, Counter[str]] = {name: Counter() for name in ("huge", "slow", "nested", "values")}
        self.cut_after: list[float] = []
        nested = b"[" * (HOSTILE_BODY // 2) + b"]" * (HOSTILE_BODY // 2)
        many = b"[" + b",".join([b"{}"] * (HOSTILE_BODY // 3 - 1)) + b"]"
        outcomes = self.outcomes
        self.threads = [
            threading.Thread(target=repeat, args=(until, lambda: huge_body(target), outcomes["huge"])),
            threading.Thread(target=repeat, args=(until, lambda: str(target.post(nested)), outcomes["nested"])),
            threading.Thread(target=repeat, args=(until, lambda: str(target.post(many)), outcomes["values"])),
        ]
        self.threads += [
            threading.Thread(
                target=repeat, args=(until, lambda: slow_connection(target, until, self.cut_after), outcomes["slow"])
            )
            for _ in range(SLOW_CONNECTIONS)
        ]
        for thread in self.threads:
            thread.daemon = True
            thread.start()

    def join(self) -> dict[str, Any]:
        """Wait for every attacker; what each attack got back."""
        for thread in self.threads:
            thread.join(timeout=30)
        return {
            "body_16_mib": dict(self.outcomes["huge"]),
            "slow_connections": {
                "connections": SLOW_CONNECTIONS,
                "outcomes": dict(self.outcomes["slow"]),
                "cut_after_s_max": round(max(self.cut_after), 2) if self.cut_after else None,
            },
            "nested_3_mib": dict(self.outcomes["nested"]),
            "empty_objects_3_mib": dict(self.outcomes["values"]),
        }


def attack(target: Target) -> dict[str, Any]:
    until = time.monotonic() + ATTACK_SECONDS
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    attackers = Attackers(target, until)
    sent = normal_reviews(target, until, latencies, errors)
    return {
        "normal_reviews": {"sent": sent, "answered_200": len(latencies), "errors": dict(errors)}
        | latency_summary_ms(latencies),
        "attacks": attackers.join(),
    }


def main(environment: dict[str, str]) -> int:
    watchdog = Watchdog(180, "webhook_hostile")
    with tempfile.TemporaryDirectory(prefix="webhook-hostile-") as tmp:
        child, target = start_webhook(Path(tmp), environment)
        watchdog.on_timeout(child.kill)
        try:
            target.post(normal_review(0))
            idle_kib = proc_status_kib(child.pid, "VmRSS")
            log(f"webhook up on port {target.port}, {idle_kib / 1024:.1f} MiB; attacking for {ATTACK_SECONDS:.0f}s")
            result = attack(target)
            alive = child.poll() is None and target.post(normal_review(-1)) == 200
            peak_kib = proc_status_kib(child.pid, "VmHWM")
        finally:
            if child.stdin is not None:
                child.stdin.close()
            child.wait(timeout=30)
    watchdog.cancel()
    emit(
        {
            "benchmark": "webhook_hostile",
            "webhook_idle_rss_mib": round(idle_kib / 1024, 1),
            "webhook_peak_rss_mib": round(peak_kib / 1024, 1),
            "webhook_alive_after": alive,
            "webhook_environment": environment,
            **result,
            "machine": machine(),
        }
    )
    return 0 if alive and not result["normal_reviews"]["errors"] else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", nargs=2, metavar=("CERT", "KEY"), help="run the webhook (the child process)")
    parser.add_argument("--default-malloc", action="store_true", help="without the Deployment's MALLOC_ARENA_MAX")
    args = parser.parse_args()
    if args.serve:
        serve(*args.serve)
        sys.exit(0)
    sys.exit(main({} if args.default_malloc else POD_ENVIRONMENT))
