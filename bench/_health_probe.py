"""Probes a controller's health endpoints the way a kubelet would, for the length of a benchmark run.

Why: the failure mode issue 47 names (Argo's controller restarted in a loop past 8,000 workflows) is a
liveness probe that times out or fails while the controller works through a backlog. A kubelet GETs
the probe path every `periodSeconds` with a `timeoutSeconds` deadline; the manifests use 10 s and 5 s
for `/livez`. This thread GETs `/healthz` and `/livez` every PERIOD seconds (more often than the
kubelet, to see more of the run) and records each answer's latency, and every answer that was not 200
within TIMEOUT seconds as a failure.
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from typing import Any

PATHS = ("/healthz", "/livez")
PERIOD = 1.0
#: manifests/deployment.yaml's livenessProbe timeoutSeconds.
TIMEOUT = 5.0


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class HealthProbe:
    """Started once the controller is ready, stopped at the end of the run; `figures()` after."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._stop = threading.Event()
        self._latencies: dict[str, list[float]] = {path: [] for path in PATHS}
        self._failures: dict[str, list[str]] = {path: [] for path in PATHS}
        self._thread = threading.Thread(target=self._run, name="health-probe", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(TIMEOUT + 1.0)

    def _probe(self, path: str) -> None:
        started = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self._port}{path}", timeout=TIMEOUT) as response:
                ok, what = response.status == 200, str(response.status)
        except urllib.error.HTTPError as err:
            ok, what = False, str(err.code)
        except OSError as err:
            ok, what = False, type(err).__name__
        elapsed = time.monotonic() - started
        self._latencies[path].append(elapsed)
        if not ok:
            self._failures[path].append(f"{what} after {elapsed:.2f}s")

    def _run(self) -> None:
        while not self._stop.wait(PERIOD):
            for path in PATHS:
                self._probe(path)

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {"period_s": PERIOD, "timeout_s": TIMEOUT}
        for path in PATHS:
            latencies = self._latencies[path]
            p99, worst = _percentile(latencies, 0.99), max(latencies, default=None)
            out[path] = {
                "probes": len(latencies),
                "failures": len(self._failures[path]),
                "first_failures": self._failures[path][:5],
                "p99_ms": round(p99 * 1000.0, 1) if p99 is not None else None,
                "max_ms": round(worst * 1000.0, 1) if worst is not None else None,
            }
        return out
