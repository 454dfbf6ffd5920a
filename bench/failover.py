"""Leader-election failover and graceful shutdown of the real `jobflow-controller` command.

Prints one JSON document on stdout. Against a fresh local control plane, with the default lease
timings (15 s lease, 10 s renew deadline, 2 s retry period), five rounds each of:

* ``kill_9``: two replicas; SIGKILL the leader and time until the standby reports leading
  (`leader_election_master_status` 1 on its /metrics). client-go's bound is lease + retry period.
* ``sigterm``: SIGTERM the leader and time until it has exited (workers drained, lease released,
  events flushed) and until the standby leads (the released lease needs no waiting out).

Medians and all samples are reported. Takes about two minutes.
"""

from __future__ import annotations

import json
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from e2e_helpers import ControllerProcess, wait_for

from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import install_crds

ROUNDS = 5


def _pair(kubeconfig: str, logs: Path, lease: str) -> tuple[ControllerProcess, ControllerProcess]:
    flags = (
        "--leader-elect=true",
        "--leader-elect-resource-namespace=default",
        f"--leader-elect-resource-name={lease}",
    )
    first = ControllerProcess(kubeconfig, logs, *flags, name="a")
    wait_for(first.is_leader, 60, interval=0.05, what="the first replica to lead")
    second = ControllerProcess(kubeconfig, logs, *flags, name="b")
    wait_for(lambda: second.get("/readyz")[0] == 200, 60, what="the standby to be ready")
    return first, second


def main() -> int:
    logs = Path(tempfile.mkdtemp(prefix="jobflow-failover-"))
    plane = ControlPlane().start()
    kill, term_exit, term_handover = [], [], []
    try:
        install_crds(plane.kubeconfig_path)
        kubeconfig = str(plane.kubeconfig_path)
        for i in range(ROUNDS):
            print(f"round {i + 1}/{ROUNDS}: kill -9", file=sys.stderr)
            leader, standby = _pair(kubeconfig, logs, f"kill-{uuid.uuid4().hex[:6]}")
            t0 = time.monotonic()
            leader.signal(signal.SIGKILL)
            wait_for(standby.is_leader, 40, interval=0.05, what="takeover")
            kill.append(time.monotonic() - t0)
            standby.stop()
            leader.popen.wait()

            print(f"round {i + 1}/{ROUNDS}: SIGTERM", file=sys.stderr)
            leader, standby = _pair(kubeconfig, logs, f"term-{uuid.uuid4().hex[:6]}")
            t0 = time.monotonic()
            leader.signal(signal.SIGTERM)
            code = leader.popen.wait(timeout=60)
            term_exit.append(time.monotonic() - t0)
            wait_for(standby.is_leader, 40, interval=0.05, what="handover")
            term_handover.append(time.monotonic() - t0)
            standby.stop()
            if code != 0:
                print(f"the leader exited {code} on SIGTERM; logs in {logs}", file=sys.stderr)
                return 1
    finally:
        plane.stop()

    def summary(samples: list[float]) -> dict[str, object]:
        return {"median_s": round(statistics.median(samples), 2), "samples_s": [round(s, 2) for s in samples]}

    print(
        json.dumps(
            {
                "benchmark": "failover",
                "lease": {"duration_s": 15, "renew_deadline_s": 10, "retry_period_s": 2},
                "kill_9_takeover": summary(kill),
                "sigterm_exit": summary(term_exit),
                "sigterm_handover": summary(term_handover),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
