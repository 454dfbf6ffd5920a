"""Helpers for end-to-end tests: polling with a deadline instead of fixed sleeps."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import NotFoundError
from jobflow_controller.sharding import shard_for_namespace

#: Leader election quick enough for a test: a 4 s Lease, renewed within 3 s, tried every 0.5 s,
#: in the namespace every test control plane has.
LEASE_SECONDS, RETRY_SECONDS = 4.0, 0.5
FAST_LEASE_FLAGS = (
    "--leader-elect=true",
    f"--leader-elect-lease-duration={LEASE_SECONDS:g}s",
    "--leader-elect-renew-deadline=3s",
    f"--leader-elect-retry-period={int(RETRY_SECONDS * 1000)}ms",
    "--leader-elect-resource-namespace=default",
)


def balanced_namespaces(prefix: str, shards: int, per_shard: int) -> list[str]:
    """`per_shard` namespace names `<prefix>-NN` for each of `shards` shards, sorted: the hash decides
    a name's shard, so names are tried in turn until every shard has its share."""
    chosen: dict[int, list[str]] = defaultdict(list)
    index = 0
    while any(len(chosen[s]) < per_shard for s in range(shards)):
        name = f"{prefix}-{index:02d}"
        shard = shard_for_namespace(name, shards)
        if len(chosen[shard]) < per_shard:
            chosen[shard].append(name)
        index += 1
    return sorted(n for names in chosen.values() for n in names)


def wait_for(predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05, what: str = "") -> Any:
    """Poll `predicate` until it returns something truthy; fail the test with `what` on timeout."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}; last value: {last!r}")


class RunningManager:
    """A controller manager running in this process (in a thread) against the test control plane."""

    def __init__(self, kubeconfig: str, **overrides: Any) -> None:
        from jobflow_controller.manager.options import Options
        from jobflow_controller.manager.server import Manager

        options = Options(kubeconfig=kubeconfig, leader_elect=False, graceful_shutdown_timeout=5.0)
        for key, value in overrides.items():
            setattr(options, key, value)
        self.manager = Manager(options)
        self.exit_code: int | None = None
        self._thread = threading.Thread(target=self._run, name="manager", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self.exit_code = self.manager.run()

    def stop(self, timeout: float = 30.0) -> None:
        self.manager.stop.set()
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the manager did not stop"


class EventLog:
    """Every watch event of one resource in one namespace, in the API server's order."""

    def __init__(self, list_watcher: Any) -> None:
        from informers import ResourceEventHandlerFuncs, SharedIndexInformer

        self.events: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.informer = SharedIndexInformer(list_watcher)
        self.informer.add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=lambda obj, *_: self._record("ADDED", obj),
                update_func=lambda old, new: self._record("MODIFIED", new),
                delete_func=lambda obj: self._record("DELETED", obj),
            )
        )
        threading.Thread(target=self.informer.run, args=(self._stop,), daemon=True).start()
        wait_for(self.informer.has_synced, what="the event log's informer to sync")

    def _record(self, kind: str, obj: Any) -> None:
        with self._lock:
            self.events.append((kind, obj))

    def snapshot(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return list(self.events)

    def close(self) -> None:
        self._stop.set()


class ControllerProcess:
    """The real `jobflow-controller` command in a child process, with its health and metrics ports."""

    def __init__(
        self,
        kubeconfig: str,
        log_dir: Path,
        *args: str,
        name: str = "controller",
        env: Mapping[str, str] | None = None,
    ) -> None:
        from jobflow_controller.local.processes import free_port

        self.healthz_port = free_port()
        self.metrics_port = free_port()
        self.log_path = log_dir / f"{name}-{self.healthz_port}.log"
        binary = str(Path(sys.executable).parent / "jobflow-controller")
        self.args = [
            binary,
            f"--kubeconfig={kubeconfig}",
            "--enable-healthz",
            f"--healthz-address=127.0.0.1:{self.healthz_port}",
            "--enable-metrics",
            f"--listen-address=127.0.0.1:{self.metrics_port}",
            *args,
        ]
        with self.log_path.open("wb") as log:
            self.popen = subprocess.Popen(
                self.args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env
            )

    def get(self, path: str, port: int | None = None) -> tuple[int, str]:
        url = f"http://127.0.0.1:{port or self.healthz_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()
        except OSError:
            return 0, ""

    def metrics(self) -> str:
        return self.get("/metrics", self.metrics_port)[1]

    def metric(self, family: str, **labels: str) -> float:
        """The sum of the samples of `family` whose labels include `labels` (0 when there are none)."""
        total = 0.0
        for line in self.metrics().splitlines():
            series, _, value = line.rpartition(" ")
            if series.split("{", 1)[0] != family:
                continue
            if all(re.search(rf'\b{key}="{re.escape(val)}"', series) for key, val in labels.items()):
                total += float(value)
        return total

    def is_leader(self) -> bool:
        return any(
            line.startswith("leader_election_master_status{") and line.endswith(" 1.0")
            for line in self.metrics().splitlines()
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def signal(self, sig: int) -> None:
        if self.popen.poll() is None:
            os.kill(self.popen.pid, sig)

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            started = time.monotonic()
            try:
                self.popen.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
            took = time.monotonic() - started
            if took > 15:  # past the drain and the grace: say what it was doing, in the run's warnings summary
                tail = self.log()[-4000:]
                warnings.warn(f"{self.log_path.name} took {took:.1f}s to stop; its log ends:\n{tail}", stacklevel=2)


def wait_for_foreground_deletes(clientset: Clientset, namespace: str) -> None:
    """A Foreground delete completes only once kube-controller-manager's garbage collector watches
    the resource, which it starts at its discovery resync (every 30 s) after the CRD appears."""
    probe = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "gc-probe", "namespace": namespace},
        "spec": {},
    }
    clientset.jobs(namespace).create(probe)
    clientset.jobs(namespace).delete("gc-probe", propagation_policy="Foreground")

    def gone() -> bool:
        try:
            clientset.jobs(namespace).get("gc-probe")
        except NotFoundError:
            return True
        return False

    wait_for(gone, 75, interval=0.2, what="the garbage collector to finish a Foreground delete")
