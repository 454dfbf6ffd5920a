"""JobFlows sharded over three controller replicas (issue 13), on the real control plane.

Three `jobflow-controller --shards=3` processes, each preferring its own shard, share JobFlows spread
over twelve namespaces (four per shard). One replica is killed with SIGKILL mid-run; its shard's
Lease expires and a survivor takes the shard over. Every JobFlow must Succeed, no Job may be
created twice (a watch of every Job sees one uid per name), and no status write may conflict
between replicas (no 409 in any replica's rest_client_requests_total). bench/shards.py runs the
same shape with 300 JobFlows; here 60 keep the test within a few minutes on a loaded machine.
"""

from __future__ import annotations

import contextlib
import datetime
import re
import signal
import time
import uuid
from collections import defaultdict
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import FAST_LEASE_FLAGS, LEASE_SECONDS, RETRY_SECONDS, ControllerProcess, balanced_namespaces, wait_for
from faults import LISTED, JobLog, random_workload
from jobflows import chain, create_all, flow, job_names, phase_of, template

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ConflictError
from jobflow_controller.local.resources import NAMESPACES
from jobflow_controller.local.simulator import JobSimulator
from jobflow_controller.sharding import shard_for_namespace

pytestmark = pytest.mark.e2e

SHARDS = 3
NAMESPACES_PER_SHARD = 4
FLOWS_PER_NAMESPACE = 5


#: A log line's time and the namespace of the object it is about (the controllers name it
#: `jobflow=ns/name` or `jobtemplate=ns/name`, the event log `object=ns/name`).
OBJECT_LINE = re.compile(r"^(\S+Z) .*?\b(?:jobflow|jobtemplate|object)=['\"]?([a-z0-9-]+)/")


def namespaces_logged(proc: ControllerProcess) -> list[tuple[datetime.datetime, str]]:
    found = []
    for line in proc.log().splitlines():
        match = OBJECT_LINE.match(line)
        if match:
            found.append((datetime.datetime.fromisoformat(match.group(1)), match.group(2)))
    return found


def holds(proc: ControllerProcess, lease: str) -> bool:
    return proc.metric("leader_election_master_status", name=lease) == 1.0


def job_uids_created_once(events: list[tuple[str, Any]], namespaces: Collection[str]) -> dict[str, set[str]]:
    """Each Job of `namespaces` the log saw made, by `ns/name`, with the uids it had; fails when a
    name had more than one uid (a Job created twice: two replicas ran its shard at once)."""
    uids: dict[str, set[str]] = defaultdict(set)
    for kind, obj in events:
        if kind in ("ADDED", LISTED) and meta.namespace(obj) in namespaces:
            uids[f"{meta.namespace(obj)}/{meta.name(obj)}"].add(meta.uid(obj))
    created_twice = {name: ids for name, ids in uids.items() if len(ids) > 1}
    assert not created_twice, f"Jobs created more than once: {created_twice}"
    return uids


@pytest.fixture
def namespaces(clientset: Clientset) -> Iterator[list[str]]:
    names = balanced_namespaces(f"shard-{uuid.uuid4().hex[:6]}", SHARDS, NAMESPACES_PER_SHARD)
    for name in names:
        clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield names
    for name in names:
        with contextlib.suppress(Exception):
            clientset.resource(NAMESPACES).delete(name)


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[list[ControllerProcess]]:
    started: list[ControllerProcess] = []
    yield started
    for proc in started:
        proc.stop()


def test_three_replicas_split_the_shards_and_a_killed_replicas_shard_is_taken_over_without_duplicates(
    kubeconfig: Path,
    tmp_path: Path,
    clientset: Clientset,
    simulator: JobSimulator,
    namespaces: list[str],
    replicas: list[ControllerProcess],
) -> None:
    base = f"jf-{uuid.uuid4().hex[:6]}"
    leases = [f"{base}-shard-{i}" for i in range(SHARDS)]
    flags = (*FAST_LEASE_FLAGS, f"--leader-elect-resource-name={base}", f"--shards={SHARDS}", "--worker-threads=3")
    for index in range(SHARDS):
        replicas.append(
            ControllerProcess(str(kubeconfig), tmp_path, *flags, f"--shard-index={index}", name=f"replica-{index}")
        )
    # At start-up each replica takes its own shard; the others are campaigned for only a lease later.
    wait_for(lambda: all(holds(proc, leases[i]) for i, proc in enumerate(replicas)), 60, interval=0.2, what="shards")
    wait_for(lambda: all(proc.get("/readyz")[0] == 200 for proc in replicas), 60, what="every replica Ready")
    time.sleep(LEASE_SECONDS + 2 * RETRY_SECONDS)  # past the takeover delay: nobody may have taken a second shard
    assert [proc.metric("jobflow_controller_shards_held") for proc in replicas] == [1.0, 1.0, 1.0]

    job_log = JobLog(clientset.jobs().lister_watcher())
    try:
        workloads = [random_workload(seed, ns, FLOWS_PER_NAMESPACE, prefix="sh") for seed, ns in enumerate(namespaces)]
        for work in workloads:
            work.create(clientset)
        total = sum(len(work.names) for work in workloads)

        def started_flows() -> int:
            return len({(meta.namespace(o), meta.name(o).rsplit("-", 1)[0]) for _k, o in job_log.snapshot()})

        wait_for(lambda: started_flows() >= total // 3, 120, interval=0.2, what="a third of the flows started")
        victim = replicas[0]
        killed_at = time.monotonic()
        killed_wall = datetime.datetime.now(datetime.UTC)
        victim.signal(signal.SIGKILL)
        survivors = replicas[1:]
        wait_for(lambda: any(holds(p, leases[0]) for p in survivors), 30, interval=0.1, what="shard 0 taken over")
        took = time.monotonic() - killed_at
        taker = next(p for p in survivors if holds(p, leases[0]))
        # Expiry (one lease) plus the survivors' retry period (jittered up to 2.2x) plus a loaded machine's slack.
        assert took <= LEASE_SECONDS + 2.2 * RETRY_SECONDS + 4.0, f"shard 0 was taken over only after {took:.1f}s"

        def phases() -> dict[str, str]:
            return {f"{ns}/{meta.name(f)}": jf.phase(f) for ns in namespaces for f in clientset.job_flows(ns).list()}

        wait_for(
            lambda: list(phases().values()).count("Succeed") == total,
            180,
            interval=1.0,
            what=f"all {total} JobFlows Succeed",
        )
        assert set(phases().values()) == {"Succeed"}
        time.sleep(1.0)  # let the last Job events reach the log
        events = job_log.snapshot()
    finally:
        job_log.close()

    uids = job_uids_created_once(events, namespaces)
    deleted = [obj for kind, obj in events if kind == "DELETED" and meta.namespace(obj) in namespaces]
    assert not deleted, "a retained Job was deleted"
    expected_jobs = {
        f"{work.namespace}/{meta.name(doc)}-{f['name']}"
        for work in workloads
        for doc in work.job_flows
        for f in doc["spec"]["flows"]
    }
    assert set(uids) == expected_jobs

    # Each replica wrote only to the shards it held: its own, and shard 0 for the taker after the kill.
    for index, proc in enumerate(replicas):
        seen = namespaces_logged(proc)
        assert seen, f"replica {index} logged no object"
        foreign = sorted(
            {
                ns
                for at, ns in seen
                if ns in namespaces
                and shard_for_namespace(ns, SHARDS) != index
                and not (proc is taker and shard_for_namespace(ns, SHARDS) == 0 and at >= killed_wall)
            }
        )
        assert not foreign, f"replica {index} touched namespaces of shards it did not hold: {foreign}"
    assert any(shard_for_namespace(ns, SHARDS) == 0 for _at, ns in namespaces_logged(taker))
    held = sorted(proc.metric("jobflow_controller_shards_held") for proc in survivors)
    assert held == [1.0, 2.0]


def test_a_fixed_shard_without_leader_election_runs_only_its_own_namespaces(
    kubeconfig: Path,
    tmp_path: Path,
    clientset: Clientset,
    simulator: JobSimulator,
    namespaces: list[str],
    replicas: list[ControllerProcess],
) -> None:
    """`--leader-elect=false --shards=3 --shard-index=1`: no Lease, shard 1 only, the others untouched."""
    ours = next(ns for ns in namespaces if shard_for_namespace(ns, SHARDS) == 1)
    theirs = next(ns for ns in namespaces if shard_for_namespace(ns, SHARDS) == 2)
    proc = ControllerProcess(
        str(kubeconfig), tmp_path, "--leader-elect=false", f"--shards={SHARDS}", "--shard-index=1", name="fixed"
    )
    replicas.append(proc)
    wait_for(lambda: proc.get("/readyz")[0] == 200, 60, what="Ready")
    assert proc.metric("jobflow_controller_shards_held") == 1.0
    for ns in (ours, theirs):
        create_all(clientset, [template(n, ns, "Pending:0.1s,Running:0.2s,Completed") for n in "ab"])
        create_all(clientset, [flow("pair", ns, chain("a", "b"))])
    wait_for(lambda: phase_of(clientset, ours, "pair") == "Succeed", 60, what="shard 1's JobFlow to Succeed")
    time.sleep(2.0)  # shard 2's JobFlow has had every chance to be picked up by mistake
    assert job_names(clientset, theirs) == []
    assert phase_of(clientset, theirs, "pair") == ""
    assert not [ns for _at, ns in namespaces_logged(proc) if ns in namespaces and ns != ours]


def test_a_replica_that_loses_one_shards_lease_stops_that_shard_only_and_wins_it_back_later(
    kubeconfig: Path, tmp_path: Path, clientset: Clientset, replicas: list[ControllerProcess]
) -> None:
    """Unlike the single leader, which exits 1, a replica that loses one shard keeps its others."""
    base = f"jf-{uuid.uuid4().hex[:6]}"
    proc = ControllerProcess(
        str(kubeconfig),
        tmp_path,
        *FAST_LEASE_FLAGS,
        f"--leader-elect-resource-name={base}",
        "--shards=2",
        "--shard-index=0",
    )
    replicas.append(proc)
    # Alone, it takes its own shard at once and the other one a lease duration later.
    wait_for(lambda: proc.metric("jobflow_controller_shards_held") == 2.0, 30, interval=0.2, what="both shards")
    stolen_for = 8

    def steal() -> bool:
        lease = clientset.leases("default").get(f"{base}-shard-1")
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        lease["spec"].update(
            holderIdentity="someone-else", leaseDurationSeconds=stolen_for, renewTime=now, acquireTime=now
        )
        try:
            clientset.leases("default").update(lease)
        except ConflictError:  # renewed in between: read it again
            return False
        return True

    wait_for(steal, 10, what="shard 1's Lease to be taken")
    wait_for(lambda: "lost=True shard=1" in proc.log(), 3 + 5, interval=0.1, what="shard 1's unit to stop")
    assert proc.metric("jobflow_controller_shards_held") == 1.0
    assert proc.popen.poll() is None
    assert holds(proc, f"{base}-shard-0")
    assert "shard=0" not in "".join(line for line in proc.log().splitlines() if "shard unit stopped" in line)
    # The thief never renews: once its lease has run out on our clock, shard 1 is ours again.
    wait_for(
        lambda: proc.metric("jobflow_controller_shards_held") == 2.0,
        stolen_for + 10,
        interval=0.2,
        what="shard 1 won back",
    )


ELASTIC_SHARDS = 6


def shards_held(proc: ControllerProcess) -> int:
    return int(proc.metric("jobflow_controller_shards_held"))


def test_elastic_shards_move_to_new_replicas_without_a_restart_and_a_killed_replicas_shards_are_taken(
    kubeconfig: Path,
    tmp_path: Path,
    clientset: Clientset,
    simulator: JobSimulator,
    replicas: list[ControllerProcess],
) -> None:
    """Issue 47: six shards, one replica, then three (2 each, handed over gracefully), then one SIGKILLed
    (its shards taken within a lease and a few retries: 3 each), then one SIGTERMed (its shards handed to
    the last one at once). JobFlows created before, during each handover and after all Succeed, and no
    Job is created twice."""
    names = balanced_namespaces(f"el-{uuid.uuid4().hex[:6]}", ELASTIC_SHARDS, 1)
    for name in names:
        clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    base = f"jf-{uuid.uuid4().hex[:6]}"
    flags = (*FAST_LEASE_FLAGS, f"--leader-elect-resource-name={base}", f"--shards={ELASTIC_SHARDS}")

    def start_replica() -> ControllerProcess:
        proc = ControllerProcess(str(kubeconfig), tmp_path, *flags, name=f"elastic-{len(replicas)}")
        replicas.append(proc)
        return proc

    batches: list[Any] = []

    def create_batch(seed: int) -> None:
        for index, ns in enumerate(names):
            work = random_workload(seed * 100 + index, ns, 2, prefix=f"b{seed}-")
            if seed == 0:
                work.create(clientset)
            else:
                for doc in work.job_flows:
                    clientset.job_flows(ns).create(doc)
            batches.append(work)

    job_log = JobLog(clientset.jobs().lister_watcher())
    try:
        first = start_replica()
        wait_for(lambda: shards_held(first) == ELASTIC_SHARDS, 60, interval=0.2, what="one replica holds every shard")
        create_batch(0)
        second, third = start_replica(), start_replica()
        create_batch(1)  # during the handover
        wait_for(
            lambda: [shards_held(p) for p in (first, second, third)] == [2, 2, 2],
            60,
            interval=0.2,
            what="each of three replicas holds its quota of 2",
        )
        assert first.popen.poll() is None, "the first replica was restarted"
        assert "lost=True" not in first.log() and "handed_over=True" in first.log()
        members = [lease for lease in clientset.leases("default").list() if f"{base}-member-" in meta.name(lease)]
        assert len(members) == 3

        first.signal(signal.SIGKILL)
        killed_at = time.monotonic()
        create_batch(2)  # during the takeover
        wait_for(
            lambda: shards_held(second) + shards_held(third) == ELASTIC_SHARDS,
            30,
            interval=0.1,
            what="the killed replica's shards taken",
        )
        took = time.monotonic() - killed_at
        # Expiry (one lease), the rebalancing tick (a retry), an acquire retry (jittered up to 2.2x), slack.
        assert took <= LEASE_SECONDS + 3.2 * RETRY_SECONDS + 4.0, f"taken over only after {took:.1f}s"
        wait_for(lambda: sorted([shards_held(second), shards_held(third)]) == [3, 3], 30, what="3 shards each")

        second.signal(signal.SIGTERM)
        wait_for(lambda: shards_held(third) == ELASTIC_SHARDS, 30, interval=0.1, what="the last replica holds all")
        wait_for(lambda: second.popen.poll() is not None, 30, what="the SIGTERMed replica exits")
        assert second.popen.returncode == 0
        create_batch(3)

        total = sum(len(work.names) for work in batches)

        def succeeded() -> int:
            return sum(jf.phase(f) == "Succeed" for ns in names for f in clientset.job_flows(ns).list())

        wait_for(lambda: succeeded() == total, 180, interval=1.0, what=f"all {total} JobFlows Succeed")
        time.sleep(1.0)  # let the last Job events reach the log
        events = job_log.snapshot()
    finally:
        job_log.close()

    uids = job_uids_created_once(events, names)
    expected = {
        f"{work.namespace}/{meta.name(doc)}-{f['name']}"
        for work in batches
        for doc in work.job_flows
        for f in doc["spec"]["flows"]
    }
    assert set(uids) == expected

    # The SIGTERMed replica deleted its membership Lease on the way out, a survivor the killed one's
    # once it had been dead a lease duration: only the last replica's is left.
    def member_leases() -> set[str]:
        leases = clientset.leases("default").list()
        return {meta.name(lease) for lease in leases if f"{base}-member-" in meta.name(lease)}

    wait_for(lambda: len(member_leases()) == 1, 30, what="the dead replicas' membership Leases deleted")
