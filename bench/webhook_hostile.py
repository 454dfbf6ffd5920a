"""The admission webhook under hostile input, while the API server's reviews keep coming.

The webhook runs in a child process of its own (``--serve``), as the manager serves it, so its
memory is measured apart from the attackers'. For ``ATTACK_SECONDS``, at once:

* a normal AdmissionReview every 100 ms, each on its own connection, as the API server sends them;
* ``SLOW_CONNECTIONS`` connections dripping their headers one byte every ``DRIP_INTERVAL`` s, each
  reconnecting once the server cuts it (``REQUEST_DEADLINE`` after its accept);
* 16 MiB bodies, sent as fast as the server takes them, one after another;
* 3 MiB of nested brackets, and 3 MiB of ``[{},{},...]``, one after another.

The attackers call from ``ATTACKER_ADDRESS`` (127.0.0.2), the normal reviews from 127.0.0.1, as a
tenant pod and the API server call from different addresses in a cluster (the webhook shares its
connections and body bytes out by client address: docs/webhook.md, "Per client").

Prints one JSON document: the webhook's idle and peak RSS (VmHWM), the normal reviews' latency
(p50/p99/max), how many failed and how, and what each attack got back. No control plane is needed.
Exits 1 if a normal review failed or the webhook died.

``--shape-times`` instead times the JSON shape check on issue 33's body (``{"a":"`` and escaped
quotes, no closing quote) at 8 KiB, 64 KiB, 1 MiB and 3 MiB, in this process, against the regular
expression it replaced (run in a child process with a time limit: it is quadratic on this body;
sizes it cannot finish within the limit are extrapolated from the largest it finished, not run).

``bench/hostile.py`` uses the attackers below against the controller's own webhook: ``Attackers``,
``FREEZE_BODIES`` (``webhook_freeze``), ``SilentConnections`` and ``SlowBodies`` (``webhook_clients``).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import select
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
ATTACKER_ADDRESS = "127.0.0.2"
MIB = 1024 * 1024
#: The webhook's MAX_BODY_BYTES: every hostile body here is at most this.
BODY_CAP = 3 * MIB


def _sized(head: bytes, unit: bytes, size: int) -> bytes:
    return (head + unit * (size // len(unit) + 1))[:size]


#: Issue 33's body (1 MiB froze the controller: the shape check's regular expression was retried at
#: every escaped quote) at 1 MiB and at the cap, and variants: only an opening quote, odd runs of
#: backslashes, brackets after each escaped quote (the unclosed tail is counted).
FREEZE_BODIES: dict[str, bytes] = {
    "escaped_quotes_1_mib": _sized(b'{"a":"', b'\\"', MIB),
    "escaped_quotes_3_mib": _sized(b'{"a":"', b'\\"', BODY_CAP),
    "open_quote_3_mib": _sized(b'"', b'\\"', BODY_CAP),
    "odd_backslash_runs_3_mib": _sized(b'{"a":"', b'\\\\\\"', BODY_CAP),
    "escaped_quotes_brackets_3_mib": _sized(b'{"a":"', b'\\"[', BODY_CAP),
}


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
    """Where the webhook listens and how to trust it; ``source`` is the address the client calls from."""

    def __init__(self, port: int, ca_pem: bytes, source: str = "127.0.0.1") -> None:
        self.port = port
        self.ca_pem = ca_pem
        self.source = source
        self.context = ssl.create_default_context(cadata=ca_pem.decode())

    def at(self, source: str) -> Target:
        """The same webhook, called from ``source`` (any 127/8 address reaches 127.0.0.1 on Linux)."""
        return Target(self.port, self.ca_pem, source)

    def plain(self, timeout: float = 15.0) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout, source_address=(self.source, 0))

    def tls(self, timeout: float = 15.0) -> ssl.SSLSocket:
        return self.context.wrap_socket(self.plain(timeout), server_hostname="127.0.0.1")

    def post(self, body: bytes) -> int:
        connection = http.client.HTTPSConnection(
            "127.0.0.1", self.port, context=self.context, timeout=15, source_address=(self.source, 0)
        )
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


def normal_reviews(
    target: Target, until: float, latencies: list[float], errors: Counter[str], interval: float = NORMAL_INTERVAL
) -> int:
    sent = 0
    next_at = time.monotonic()
    while next_at < until:
        time.sleep(max(0.0, next_at - time.monotonic()))
        next_at += interval
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


class FreezeBodies:
    """``FREEZE_BODIES`` posted one after another, round and round, until ``until``: what each got
    back and how long its slowest answer took. One at a time, so an answer's time is its own body's
    (sent, decoded and refused), not a queue behind the others for the two review slots."""

    def __init__(self, target: Target, until: float) -> None:
        self.outcomes: dict[str, Counter[str]] = {name: Counter() for name in FREEZE_BODIES}
        self.slowest: dict[str, float] = dict.fromkeys(FREEZE_BODIES, 0.0)
        self.thread = threading.Thread(target=self._run, args=(target, until), daemon=True)
        self.thread.start()

    def _run(self, target: Target, until: float) -> None:
        while time.monotonic() < until:
            for name, body in FREEZE_BODIES.items():
                started = time.monotonic()
                try:
                    outcome = str(target.post(body))
                except (OSError, http.client.HTTPException) as err:
                    outcome = type(err).__name__
                self.slowest[name] = max(self.slowest[name], time.monotonic() - started)
                self.outcomes[name][outcome] += 1

    def join(self) -> dict[str, Any]:
        self.thread.join(timeout=60)
        return {
            name: {"answers": dict(self.outcomes[name]), "slowest_answer_s": round(self.slowest[name], 3)}
            for name in FREEZE_BODIES
        }


class SilentConnections:
    """``count`` TCP connections from ``target.source`` that never start TLS, each reopened as soon
    as the server closes it, until ``until``: one thread watching them all."""

    def __init__(self, target: Target, count: int, until: float) -> None:
        self.target, self.until = target, until
        self.opened = self.cut = 0
        self.thread = threading.Thread(target=self._run, args=(count,), daemon=True)
        self.thread.start()

    def _open(self) -> socket.socket | None:
        try:
            sock = self.target.plain(timeout=5)
        except OSError:
            return None
        self.opened += 1
        return sock

    def _run(self, count: int) -> None:
        held = [sock for sock in (self._open() for _ in range(count)) if sock is not None]
        while time.monotonic() < self.until and held:
            readable, _, _ = select.select(held, [], [], 0.2)
            for sock in readable:  # readable with nothing to read: closed by the server
                with contextlib.suppress(OSError):
                    sock.recv(1)
                self.cut += 1
                held.remove(sock)
                sock.close()
                if (fresh := self._open()) is not None:
                    held.append(fresh)
        for sock in held:
            sock.close()

    def join(self) -> dict[str, Any]:
        self.thread.join(timeout=30)
        return {"opened": self.opened, "closed_by_the_server": self.cut}


class SlowBodies:
    """``count`` POSTs of a 3 MiB body from ``target.source``, all sent but the last byte, which never
    comes; each sent again once the server answers or closes it, until ``until``."""

    def __init__(self, target: Target, count: int, until: float) -> None:
        self.target, self.until = target, until
        self.outcomes: Counter[str] = Counter()
        head = f"POST /jobflows/validate HTTP/1.1\r\nContent-Type: {JSON}\r\nContent-Length: {BODY_CAP}\r\n\r\n"
        self.request = head.encode() + b" " * (BODY_CAP - 1)
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(count)]
        for thread in self.threads:
            thread.start()

    def _run(self) -> None:
        while time.monotonic() < self.until:
            try:
                with self.target.tls() as connection:
                    connection.sendall(self.request)
                    connection.settimeout(max(0.1, self.until - time.monotonic()))
                    answer = connection.recv(64)
                outcome = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/") else "closed unanswered"
            except TimeoutError:
                outcome = "still held at the end"
            except OSError as err:
                outcome = type(err).__name__
            self.outcomes[outcome] += 1

    def join(self) -> dict[str, Any]:
        for thread in self.threads:
            thread.join(timeout=30)
        return dict(self.outcomes)


class NormalClient:
    """A well-behaved client that is not the API server: one small review every ``interval`` s."""

    def __init__(self, target: Target, until: float, interval: float = 0.25) -> None:
        self.latencies: list[float] = []
        self.errors: Counter[str] = Counter()
        self.sent = 0
        self.thread = threading.Thread(target=self._run, args=(target, until, interval), daemon=True)
        self.thread.start()

    def _run(self, target: Target, until: float, interval: float) -> None:
        self.sent = normal_reviews(target, until, self.latencies, self.errors, interval)

    def join(self) -> dict[str, Any]:
        self.thread.join(timeout=60)
        return {"sent": self.sent, "answered_200": len(self.latencies), "errors": dict(self.errors)} | (
            latency_summary_ms(self.latencies)
        )


def attack(target: Target) -> dict[str, Any]:
    until = time.monotonic() + ATTACK_SECONDS
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    attackers = Attackers(target.at(ATTACKER_ADDRESS), until)
    sent = normal_reviews(target, until, latencies, errors)
    return {
        "normal_reviews": {"sent": sent, "answered_200": len(latencies), "errors": dict(errors)}
        | latency_summary_ms(latencies),
        "attacks": attackers.join(),
    }


# -- the shape check's time on issue 33's body ---------------------------------------------------------

SHAPE_SIZES = {"8_kib": 8 * 1024, "64_kib": 64 * 1024, "1_mib": MIB, "3_mib": BODY_CAP}
#: The old check is run in a child process, killed past this.
OLD_TIME_LIMIT = 150.0
_OLD_SHAPE = r"""
import re, sys, time
text = sys.stdin.read()
started = time.perf_counter()
re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL).sub("", text)
print(time.perf_counter() - started)
"""


def _old_shape_seconds(text: str) -> float | None:
    """The old cut (one ``re.sub``) on ``text``, in a child process; None past ``OLD_TIME_LIMIT``."""
    try:
        child = subprocess.run(
            [sys.executable, "-c", _OLD_SHAPE], input=text, capture_output=True, text=True, timeout=OLD_TIME_LIMIT
        )
    except subprocess.TimeoutExpired:
        return None
    return float(child.stdout)


def shape_times() -> dict[str, Any]:
    from jobflow_controller.webhook.admission import ReviewError, decode_review
    from jobflow_controller.webhook.jsonshape import json_shape_problem
    from jobflow_controller.webhook.limits import MAX_JSON_DEPTH, MAX_JSON_VALUES

    sizes: dict[str, Any] = {}
    finished: tuple[int, float] | None = None  # the largest size the old check finished, and its time
    for name, size in SHAPE_SIZES.items():
        body = _sized(b'{"a":"', b'\\"', size)
        text = body.decode()
        shape, decode = [], []
        for _ in range(3):
            started = time.perf_counter()
            json_shape_problem(text, max_values=MAX_JSON_VALUES, max_depth=MAX_JSON_DEPTH)
            shape.append(time.perf_counter() - started)
            started = time.perf_counter()
            with contextlib.suppress(ReviewError):
                decode_review(body, JSON)
            decode.append(time.perf_counter() - started)
        row: dict[str, Any] = {
            "bytes": size,
            "new_shape_s": round(min(shape), 4),
            "new_decode_s": round(min(decode), 4),
        }
        predicted = finished[1] * (size / finished[0]) ** 2 if finished else 0.0
        if finished and predicted > OLD_TIME_LIMIT:
            row["old_shape_s"] = None
            row["old_shape_s_extrapolated"] = round(predicted, 1)
            row["old_note"] = f"not run: quadratic from {finished[0] // 1024} KiB predicts over {OLD_TIME_LIMIT:.0f} s"
        else:
            log(f"old shape check at {name} (limit {OLD_TIME_LIMIT:.0f} s)")
            old = _old_shape_seconds(text)
            row["old_shape_s"] = None if old is None else round(old, 3)
            if old is None:
                row["old_note"] = f"killed after {OLD_TIME_LIMIT:.0f} s"
            else:
                finished = (size, old)
        sizes[name] = row
        log(f"{name}: {row}")
    return {"benchmark": "webhook_jsonshape", "body": '{"a":" then \\" to the size, no closing quote', "sizes": sizes}


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
    parser.add_argument("--shape-times", action="store_true", help="time the JSON shape check, old and new")
    args = parser.parse_args()
    if args.serve:
        serve(*args.serve)
        sys.exit(0)
    if args.shape_times:
        emit(shape_times() | {"machine": machine()})
        sys.exit(0)
    sys.exit(main({} if args.default_malloc else POD_ENVIRONMENT))
