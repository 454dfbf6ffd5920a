"""bench/shards.py's elastic scenario (issue 47): a fixed number of shards over replicas that come and go.

Three runs, each on a fresh control plane, ``--shards=12`` (no --shard-index: replicas as a
Deployment's, the rebalancing rule spreads the shards), JobFlows (three-step chains) over 24
namespaces, two per shard:

- ``one_replica``: one replica holds all 12 shards; its CPU for the run is the yardstick;
- ``three_replicas``: three replicas, started together, each settles on its quota of 4 before the
  JobFlows are created; each one's share of the work (JobFlow syncs, Job creates) and the sum of
  their CPU against ``one_replica``'s;
- ``churn``: three replicas; once a third of the JobFlows have started, one is SIGKILLed and a fourth
  started: the seconds until every shard is held again (the handover) and until every live replica
  holds its quota (the rebalance), no JobFlow stranded, and Job creates per Job name (a watch of
  every Job sees one uid per name; must be 1).
"""

from __future__ import annotations

import re
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from e2e_helpers import ControllerProcess, balanced_namespaces
from faults import LISTED, JobLog

from bench._common import (
    BenchError,
    Watchdog,
    control_plane,
    cpu_seconds,
    create_job_flows,
    load_average,
    log,
    proc_status_kib,
    rest_client,
    seed_namespaces,
    simulator_process,
    wait_until,
)
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.kube.clientset import Clientset
from tests.e2e.jobflows import chain, flow

SHARDS = 12
NAMESPACES_PER_SHARD = 2
SCRIPT = "Pending:0s,Running:0s,Completed"
#: Leases of 8 s renewed within 6 s, tried every second: twice the e2e tests' fast flags. With twelve
#: shards a replica renews twelve Leases a retry period; at 0.5 s and a 3 s deadline a replica on this
#: shared, loaded machine missed renewals (a lost shard and a takeover each time).
LEASE_FLAGS = (
    "--leader-elect=true",
    "--leader-elect-lease-duration=8s",
    "--leader-elect-renew-deadline=6s",
    "--leader-elect-retry-period=1s",
    "--leader-elect-resource-namespace=default",
)
CLIENT_FLAGS = ("--kube-api-qps=1000", "--kube-api-burst=2000", "--worker-threads=3")
CREATE_WORKERS = 8
POLL_SECONDS = 2.0
RUN_TIMEOUT = 1500.0
IDENTITY = re.compile(r"campaigning for shards .*?identity=['\"]?([^\s'\"]+)")


class _Run:
    """One run's control plane, simulator and replicas."""

    def __init__(self, plane: Any, namespaces: list[str], watchdog: Watchdog) -> None:
        self.plane = plane
        self.namespaces = namespaces
        self.watchdog = watchdog
        self.clientset = Clientset(rest_client(plane.kubeconfig_path, agent="bench-shards-elastic"))
        self.logs = Path(tempfile.mkdtemp(prefix="jobflow-bench-elastic-"))
        self.base = f"elastic-{uuid.uuid4().hex[:4]}"
        self.procs: list[ControllerProcess] = []
        self.simulator = simulator_process(plane, namespaces)
        watchdog.on_timeout(self.simulator.stop)

    def start_replica(self) -> ControllerProcess:
        flags = (*LEASE_FLAGS, *CLIENT_FLAGS, f"--leader-elect-resource-name={self.base}", f"--shards={SHARDS}")
        proc = ControllerProcess(str(self.plane.kubeconfig_path), self.logs, *flags, name=f"r{len(self.procs)}")
        self.watchdog.on_timeout(proc.stop)
        self.procs.append(proc)
        return proc

    def live(self) -> list[ControllerProcess]:
        return [p for p in self.procs if p.popen.poll() is None]

    def held(self) -> list[int]:
        return [int(p.metric("jobflow_controller_shards_held")) for p in self.live()]

    def balanced(self) -> bool:
        held, live = self.held(), len(self.live())
        quota = sorted([SHARDS // live + (1 if i < SHARDS % live else 0) for i in range(live)])
        return sorted(held) == quota

    def stop(self) -> None:
        for proc in self.procs:
            proc.stop()
        self.simulator.stop()


def _succeeded(clientset: Clientset) -> int:
    return sum(jf.phase(f) == "Succeed" for f in clientset.job_flows().list())


def _wait_all_succeed(run: _Run, total: int, started: float) -> float:
    deadline = started + RUN_TIMEOUT
    last_report = 0.0
    while True:
        succeeded = _succeeded(run.clientset)
        now = time.monotonic()
        if succeeded == total:
            return now - started
        if now > deadline:
            raise BenchError(f"only {succeeded} of {total} JobFlows Succeed after {RUN_TIMEOUT:.0f}s")
        if now - last_report > 10.0:
            last_report = now
            log(f"  {succeeded}/{total} Succeed; shards held {run.held()}")
        time.sleep(POLL_SECONDS)


def _per_replica(proc: ControllerProcess, cpu0: float, cpu_end: float | None) -> dict[str, Any]:
    alive = proc.popen.poll() is None
    return {
        "replica": proc.log_path.name.split("-")[0],
        "alive_at_end": alive,
        "shards_held_at_end": int(proc.metric("jobflow_controller_shards_held")) if alive else 0,
        "cpu_seconds_run": round((cpu_end if cpu_end is not None else cpu_seconds(proc.popen.pid)) - cpu0, 2),
        "peak_rss_mib": round(proc_status_kib(proc.popen.pid, "VmHWM") / 1024, 1) if alive else None,
        "shards_lost": proc.log().count("lost=True"),
        "shards_handed_over": proc.log().count("handed_over=True"),
        "jobflow_syncs": int(proc.metric("workqueue_adds_total", name="jobflow")) if alive else None,
        "posts_created": int(proc.metric("rest_client_requests_total", method="POST", code="201")) if alive else None,
    }


def _creates_per_job(events: list[tuple[str, dict[str, Any]]], namespaces: list[str]) -> dict[str, int]:
    uids: dict[str, set[str]] = defaultdict(set)
    for kind, obj in events:
        if kind in ("ADDED", LISTED) and meta.namespace(obj) in namespaces:
            uids[f"{meta.namespace(obj)}/{meta.name(obj)}"].add(meta.uid(obj))
    return {name: len(ids) for name, ids in uids.items()}


def _identity(proc: ControllerProcess) -> str:
    match = IDENTITY.search(proc.log())
    return match.group(1) if match else ""


def _churn(run: _Run, job_log: JobLog, total: int) -> dict[str, Any]:
    """Kill one replica once a third of the flows started, start another: time the handover."""

    def started_flows() -> int:
        return len({(meta.namespace(o), meta.name(o).rsplit("-", 1)[0]) for _k, o in job_log.snapshot()})

    wait_until(lambda: started_flows() >= total // 3, 600.0, "a third of the flows started", interval=0.2)
    victim = run.procs[0]
    victim_cpu = cpu_seconds(victim.popen.pid)
    victim_held = int(victim.metric("jobflow_controller_shards_held"))
    killed = time.monotonic()
    victim.signal(9)
    victim.popen.wait(10)
    run.start_replica()
    wait_until(lambda: sum(run.held()) == SHARDS, 120.0, "every shard held again", interval=0.2)
    handover = time.monotonic() - killed
    wait_until(run.balanced, 180.0, "every live replica at its quota", interval=0.2)
    rebalance = time.monotonic() - killed
    log(f"  killed r0 (held {victim_held}); shards held again after {handover:.1f}s, balanced after {rebalance:.1f}s")
    return {
        "victim_shards": victim_held,
        "victim_cpu_at_kill": victim_cpu,
        "seconds_to_every_shard_held": round(handover, 2),
        "seconds_to_every_replica_at_quota": round(rebalance, 2),
        "held_after_rebalance": run.held(),
    }


def elastic_run(jobflows: int, replicas: int, watchdog: Watchdog, *, churn: bool = False) -> dict[str, Any]:
    mode = "churn" if churn else f"{replicas} replica(s)"
    log(f"== elastic: {mode}, --shards={SHARDS}, {jobflows} JobFlows")
    namespaces = balanced_namespaces(f"el-{uuid.uuid4().hex[:4]}", SHARDS, NAMESPACES_PER_SHARD)
    with control_plane(watchdog) as plane:
        run = _Run(plane, namespaces, watchdog)
        seed_namespaces(run.clientset, namespaces, "abc", SCRIPT)
        try:
            run.simulator.start()
            for _ in range(replicas):
                run.start_replica()
            wait_until(lambda: sum(run.held()) == SHARDS and run.balanced(), 120.0, "shards spread", interval=0.2)
            wait_until(lambda: all(p.get("/readyz")[0] == 200 for p in run.procs), 60.0, "every replica Ready")
            cpu0 = {id(p): cpu_seconds(p.popen.pid) for p in run.procs}
            job_log = JobLog(run.clientset.jobs().lister_watcher())
            try:
                flows = [
                    flow(f"chain-{i:04d}", namespaces[i % len(namespaces)], chain("a", "b", "c"))
                    for i in range(jobflows)
                ]
                started = time.monotonic()
                create_job_flows(run.clientset, flows, CREATE_WORKERS, timeout=300.0)
                churned = _churn(run, job_log, jobflows) if churn else None
                elapsed = _wait_all_succeed(run, jobflows, started)
                time.sleep(1.0)
                events = job_log.snapshot()
            finally:
                job_log.close()
            log(f"all {jobflows} Succeed after {elapsed:.1f}s")
            creates = _creates_per_job(events, namespaces)
            victim_cpu = churned["victim_cpu_at_kill"] if churned else None
            per_replica = [
                _per_replica(p, cpu0.get(id(p), 0.0), victim_cpu if (churned and i == 0) else None)
                for i, p in enumerate(run.procs)
            ]
        finally:
            run.stop()
    result: dict[str, Any] = {
        "mode": "churn" if churn else "steady",
        "replicas": replicas,
        "seconds_to_all_succeed": round(elapsed, 2),
        "jobflows_not_succeeded": 0,  # _wait_all_succeed raised otherwise
        "jobs_seen": len(creates),
        "max_creates_per_job_name": max(creates.values(), default=0),
        "jobs_created_twice": sum(1 for n in creates.values() if n > 1),
        "per_replica": per_replica,
        "load_average_after": load_average(),
    }
    if churned:
        churned.pop("victim_cpu_at_kill")
        result.update(churned)
    _shares(result)
    return result


def _shares(result: dict[str, Any]) -> None:
    """Each replica's share of the JobFlow syncs and of the created objects, in percent."""
    rows = [r for r in result["per_replica"] if r["jobflow_syncs"] is not None]
    for field, share in (("jobflow_syncs", "share_of_syncs_pct"), ("posts_created", "share_of_creates_pct")):
        total = sum(r[field] for r in rows) or 1
        for row in rows:
            row[share] = round(100.0 * row[field] / total, 1)


def elastic(jobflows: int, watchdog: Watchdog) -> dict[str, Any]:
    """The three runs and the figures the issue asks for."""
    one = elastic_run(jobflows, 1, watchdog)
    three = elastic_run(jobflows, 3, watchdog)
    churn = elastic_run(jobflows, 3, watchdog, churn=True)
    one_cpu = one["per_replica"][0]["cpu_seconds_run"]
    three_cpu = sum(r["cpu_seconds_run"] for r in three["per_replica"])
    shares = [r["share_of_syncs_pct"] for r in three["per_replica"]]
    creates = [r["share_of_creates_pct"] for r in three["per_replica"]]
    return {
        "shards": SHARDS,
        "jobflows": jobflows,
        "namespaces": SHARDS * NAMESPACES_PER_SHARD,
        "runs": {"one_replica": one, "three_replicas": three, "churn": churn},
        "cpu_three_replicas_vs_one": round(three_cpu / one_cpu, 3) if one_cpu else None,
        "share_of_syncs_pct_min_max": [min(shares), max(shares)],
        "share_of_creates_pct_min_max": [min(creates), max(creates)],
        "churn_max_creates_per_job_name": churn["max_creates_per_job_name"],
        "churn_seconds_to_every_shard_held": churn["seconds_to_every_shard_held"],
        "churn_seconds_to_every_replica_at_quota": churn["seconds_to_every_replica_at_quota"],
    }
