"""Helpers shared by the benchmarks that run against a real local control plane.

Not a benchmark: ``make bench`` skips ``bench/_*.py``, and running this file directly only says so.
The benchmarks import it as ``bench._common`` after putting the repository root first on sys.path
(see the top of each benchmark).

What lives here: progress logging to stderr, a hard watchdog so no benchmark can hang, RSS and CPU
readings from /proc, a deep ``sys.getsizeof``, percentiles, a thread-pool runner, the control plane
with the CRDs installed, and a client for the benchmark's own requests.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import ssl
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, TypeVar

REPO_ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = REPO_ROOT / ".venv" / "bin"
#: The controller runs from a virtualenv with the runtime set only (`make runtime-venv`: the project,
#: editable, without extras), as the image installs it: the development virtualenv also holds rich,
#: pygments and attrs (dev and test tools), which structlog imports when they are there (5.5 MiB of
#: RSS the image never has). Without it, the development virtualenv's, and machine() says so.
RUNTIME_VENV_BIN = REPO_ROOT / ".venv-runtime" / "bin"


def controller_command() -> str:
    """The jobflow-controller executable the benchmarks run (``$JOBFLOW_BENCH_CONTROLLER`` overrides
    it: another build's, to compare two builds on the same benchmark and machine)."""
    override = os.environ.get("JOBFLOW_BENCH_CONTROLLER")
    if override:
        return override
    runtime = RUNTIME_VENV_BIN / "jobflow-controller"
    return str(runtime if runtime.exists() else VENV_BIN / "jobflow-controller")


PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_START = time.monotonic()

T = TypeVar("T")
R = TypeVar("R")


class BenchError(RuntimeError):
    """The benchmark cannot produce a result; the message says what went wrong and where."""


def log(message: str) -> None:
    """One progress line on stderr, stamped with the seconds since the process started."""
    sys.stderr.write(f"[{time.monotonic() - _START:7.1f}s] {message}\n")
    sys.stderr.flush()


def emit(result: dict[str, Any]) -> None:
    """The benchmark's one JSON document, on stdout."""
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    sys.stdout.flush()


# -- time bounds ---------------------------------------------------------------------------------


class Watchdog:
    """Kills the benchmark if it overruns: runs the cleanups, says why on stderr, exits 1.

    Every wait in a benchmark has its own deadline; this is the last line of defence against a
    wait that was forgotten, so a benchmark fails with a message instead of hanging ``make bench``.
    """

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self._cleanups: list[Callable[[], None]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="watchdog", daemon=True)
        self._thread.start()
        # SIGTERM (a kill, a CI cancel) unwinds like Ctrl-C, so every `finally` stops its control
        # plane and controller: Python's default would leave them running.
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _exit_on_sigterm)

    def on_timeout(self, cleanup: Callable[[], None]) -> None:
        self._cleanups.append(cleanup)

    def cancel(self) -> None:
        self._done.set()

    def _watch(self) -> None:
        if self._done.wait(self.seconds):
            return
        log(f"ERROR: {self.what} did not finish within {self.seconds:.0f}s; cleaning up and exiting 1")
        for cleanup in reversed(self._cleanups):
            with contextlib.suppress(Exception):
                cleanup()
        os._exit(1)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the cleanup short
    log("SIGTERM: cleaning up and exiting 143")
    sys.exit(128 + signum)


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.02) -> Any:
    """Poll ``predicate`` until truthy; raise a BenchError naming ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise BenchError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


# -- measurements --------------------------------------------------------------------------------


def rss_bytes(pid: int | str = "self") -> int:
    """Resident set size now, from /proc/<pid>/statm (pages)."""
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE_SIZE


def proc_status_kib(pid: int | str, field: str) -> int:
    """A ``kB`` field of /proc/<pid>/status (VmRSS, VmHWM, ...), in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise BenchError(f"/proc/{pid}/status has no {field}")


def cpu_seconds(pid: int | str = "self") -> float:
    """utime + stime of a process (its threads included), from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2 :].split()  # the command name may hold spaces
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def pymalloc_bytes() -> dict[str, int]:
    """pymalloc's own accounting (``sys._debugmallocstats``): arena bytes, and how much is in use.

    RSS cannot tell freed Python objects from live ones: a freed block stays in its arena (and in
    RSS) until the whole 1 MiB arena is empty. ``allocated`` is live small objects (<= 512 B),
    ``available`` and ``unused_pools`` are free space inside arenas the process still holds.
    """
    import tempfile

    with tempfile.TemporaryFile(mode="w+b") as capture:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(capture.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        text = capture.read().decode(errors="replace")
    wanted = {
        "bytes/arena": "arenas",
        "# bytes in allocated blocks": "allocated_blocks",
        "# bytes in available blocks": "available_blocks",
        "unused pools": "unused_pools",
    }
    out: dict[str, int] = {}
    for line in text.splitlines():
        label, sep, value = line.partition("=")
        for marker, key in wanted.items():
            if sep and marker in label and key not in out:
                out[key] = int(value.strip().replace(",", ""))
    return out


def deep_sizeof(obj: Any, seen: set[int] | None = None) -> int:
    """``sys.getsizeof`` of ``obj`` and everything it holds, each object counted once.

    Pass the same ``seen`` across several objects to measure what they cost together: strings
    shared between them (dictionary keys decoded by one ``json.loads`` call are) are counted once.
    """
    if seen is None:
        seen = set()
    total = 0
    stack = [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
    return total


def percentile(values: Iterable[float], pct: float) -> float | None:
    """The ``pct`` percentile (nearest rank, as most latency reports use); None when empty."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, min(len(ordered), round(pct / 100.0 * len(ordered) + 0.5 - 1e-9)))
    return ordered[rank - 1]


def latency_summary_ms(values: list[float]) -> dict[str, Any]:
    def ms(v: float | None) -> float | None:
        return None if v is None else round(v * 1000.0, 1)

    return {
        "count": len(values),
        "p50_ms": ms(percentile(values, 50)),
        "p90_ms": ms(percentile(values, 90)),
        "p99_ms": ms(percentile(values, 99)),
        "max_ms": ms(max(values) if values else None),
        "mean_ms": ms(sum(values) / len(values) if values else None),
    }


def run_pool(fn: Callable[[T], R], items: list[T], workers: int, what: str, timeout: float) -> list[R]:
    """Run ``fn`` over ``items`` on a thread pool; results in completion order.

    Progress goes to stderr every 10 %; the first failure, or overrunning ``timeout``, raises.
    """
    results: list[R] = []
    step = max(1, len(items) // 10)
    deadline = time.monotonic() + timeout
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=what.replace(" ", "-")) as pool:
        futures = [pool.submit(fn, item) for item in items]
        try:
            for future in as_completed(futures, timeout=timeout):
                results.append(future.result())
                if len(results) % step == 0:
                    log(f"  {what}: {len(results)}/{len(items)}")
                if time.monotonic() > deadline:
                    raise TimeoutError
        except TimeoutError:
            for future in futures:
                future.cancel()
            raise BenchError(f"{what}: only {len(results)} of {len(items)} done after {timeout:.0f}s") from None
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return results


def load_average() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    import platform

    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_at_start": load_average(),
        "controller_command": controller_command(),
    }


# -- the cluster ---------------------------------------------------------------------------------


@contextlib.contextmanager
def control_plane(watchdog: Watchdog | None = None, *, controller_manager: bool = False) -> Iterator[Any]:
    """A fresh etcd + kube-apiserver (+ kube-controller-manager) with the project's CRDs."""
    from jobflow_controller.local.controlplane import ControlPlane
    from jobflow_controller.local.kubectl import install_crds

    plane = ControlPlane(controller_manager=controller_manager)
    if watchdog is not None:
        watchdog.on_timeout(plane.stop)
    started = time.monotonic()
    plane.start()
    try:
        install_crds(plane.kubeconfig_path)
        log(f"control plane up at {plane.server} with CRDs in {time.monotonic() - started:.1f}s")
        yield plane
    finally:
        plane.stop()
        log("control plane stopped")


def rest_client(kubeconfig: str | os.PathLike[str], *, qps: float = 0.0, burst: int = 1000, agent: str) -> Any:
    """A RestClient for the benchmark's own requests (no client-side limit by default).

    Its connection pool is sized for the benchmark's thread pools, so no request waits for a socket.
    """
    from jobflow_controller.kube.config import build_config
    from jobflow_controller.kube.rest import RestClient

    config = build_config(str(kubeconfig))
    config.connection_pool_maxsize = 32
    return RestClient(config, qps=qps, burst=burst, user_agent=agent)


def apiserver_metrics(plane: Any) -> str:
    """The kube-apiserver's own `/metrics` (every client's requests, APF, watches), read as admin."""
    ctx = ssl.create_default_context(cafile=str(plane.ca_path))
    ctx.load_cert_chain(str(plane.pki / "admin.crt"), str(plane.pki / "admin.key"))
    with urllib.request.urlopen(plane.server + "/metrics", timeout=20, context=ctx) as response:
        return str(response.read().decode())


def create_namespace(clientset: Any, name: str, labels: dict[str, str] | None = None) -> None:
    from jobflow_controller.local.resources import NAMESPACES

    metadata: dict[str, Any] = {"name": name, **({"labels": labels} if labels else {})}
    clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})


def seed_namespaces(clientset: Any, namespaces: Iterable[str], steps: str, script: str) -> None:
    """Create each namespace with one JobTemplate per step (`steps`, a name a letter), whose Jobs
    the simulator moves through `script`."""
    from tests.e2e.jobflows import template

    for namespace in namespaces:
        create_namespace(clientset, namespace)
        for step in steps:
            clientset.job_templates(namespace).create(template(step, namespace, script))


def create_job_flows(clientset: Any, flows: list[dict[str, Any]], workers: int, timeout: float) -> None:
    """POST every JobFlow from a pool of `workers` threads (each into its own namespace)."""
    run_pool(
        lambda f: clientset.job_flows(f["metadata"]["namespace"]).create(f), flows, workers, "create jobflows", timeout
    )


def simulator_process(plane: Any, namespaces: list[str]) -> Any:
    """The Volcano job simulator as a process of its own (``bench/e2e_flows.py --simulator``), one
    JobSimulator per namespace; not started yet."""
    from jobflow_controller.local.processes import Process

    argv = [sys.executable, str(Path(__file__).resolve().parent / "e2e_flows.py"), "--simulator"]
    return Process("simulator", [*argv, str(plane.kubeconfig_path), ",".join(namespaces)], plane.root / "simulator.log")


# -- what a benchmark's own informers see ----------------------------------------------------------


def phase_of(obj: Any) -> str:
    """`status.state.phase` of a Job or JobFlow as an informer hands it over ("" for anything else)."""
    return str(((obj.get("status") or {}).get("state") or {}).get("phase") or "") if isinstance(obj, dict) else ""


def key_of(obj: Any) -> str:
    """namespace/name."""
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


if __name__ == "__main__":
    sys.stderr.write("bench/_common.py holds helpers for the benchmarks; it is not a benchmark itself.\n")
