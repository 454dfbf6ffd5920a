"""Issue 10, "no flow is ever stranded": the controller under faults, on a real control plane.

Every scenario runs `jobflow-controller --worker-threads 3` as a child process against 20-odd random
DAG JobFlows (chains, diamonds, fan-ins; Jobs taking 0.3-2 s in the Volcano job simulator), injects
one kind of fault mid-run, and ends with the same checks (`faults.assert_no_flow_stranded`): every
JobFlow in its final phase; its status lists, condition keys and jobStatusList naming exactly the
Jobs it controls; no Job created before all its targets were seen Completed, in the watch's order;
no Job created twice unless the test deleted it; every Job controlled by its JobFlow's current uid;
the controller process still alive.

These tests restart kube-apiserver and compact etcd, so the module has a control plane of its own;
the scenarios that restart it come last (a restart makes the garbage collector and the quota
controller rediscover the custom resources, up to 30 s later). `--resync-period=5s` keeps them
quick; the quota scenario at `--max-requeue-num 0` keeps the default (30s) to prove the default bound.
The letters are issue 10's scenarios (a: annotations, b: API server restarts, c: SIGKILL, d: SIGSTOP,
e: foreign Job, f: re-created JobFlow, g: ResourceQuota).
"""

from __future__ import annotations

import contextlib
import random
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from e2e_helpers import ControllerProcess, wait_for
from faults import (
    Annotator,
    JobLog,
    PatientClientset,
    Workload,
    assert_no_flow_stranded,
    controller_uid,
    create_retrying,
    foreign_job,
    random_workload,
    safely,
    targets_of,
    warnings,
)
from jobflows import chain, flow, template

from informers.errors import NotFoundError
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.event_sink import KubeEventSink
from jobflow_controller.kube.resources import Resource
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.local import controlplane
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import install_crds
from jobflow_controller.local.resources import NAMESPACES
from jobflow_controller.local.simulator import COMPONENT as SIMULATOR_COMPONENT
from jobflow_controller.local.simulator import JobSimulator
from jobflow_controller.record import EventBroadcaster
from jobflow_controller.record.events_cache import DEFAULT_SPAM_BURST

CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
RESOURCE_QUOTAS = Resource("", "v1", "resourcequotas", "ResourceQuota")
FLOWS = 20
FAST = "Pending:0.2s,Running:0.4s,Completed"
#: Ours on the old Jobs of a re-created JobFlow, so they outlive the garbage collector's delete.
HOLD = "e2e.jobflow.volcano.sh/hold"
#: `--max-requeue-num`: upstream's default (the flag left out) and a low one, where drops come fast.
REQUEUE = [pytest.param(None, id="requeue-default"), pytest.param(3, id="requeue-3")]


# -- the module's own control plane -----------------------------------------------------------------
@pytest.fixture(scope="module")
def control_plane() -> Iterator[ControlPlane]:
    """Ours, not the session's: these tests restart its API server and compact its etcd.

    Named like the session fixture so that a failing test gets this plane's logs in its report.
    The resource-quota controller runs too, so a ResourceQuota's usage is counted as in a cluster.
    """
    quota = (*controlplane.KCM_CONTROLLERS, "resourcequota-controller")
    with mock.patch.object(controlplane, "KCM_CONTROLLERS", quota):
        # Without a watch grace period a SIGTERMed kube-apiserver stops listening at once and then
        # waits for every open watch (ours, the controller's, kube-controller-manager's) until
        # Process.stop's 20 s grace runs out: a 22 s outage instead of a ~3 s restart.
        plane = ControlPlane(apiserver_args=["--shutdown-watch-termination-grace-period=1s"]).start()
    try:
        install_crds(plane.kubeconfig_path)
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="module")
def clients(control_plane: ControlPlane) -> Iterator[Clientset]:
    rest = RestClient(build_config(str(control_plane.kubeconfig_path)), qps=500, burst=1000, user_agent="e2e-faults")
    clientset = Clientset(rest)
    # The lease of the tests that keep leader election on lives where the Deployment puts it.
    clientset.resource(NAMESPACES).create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}}
    )
    yield clientset
    rest.close()


@pytest.fixture(scope="module")
def job_simulator(control_plane: ControlPlane) -> Iterator[JobSimulator]:
    """The plane's one Volcano job simulator, with a client (and user agent) of its own.

    Its watch waits out API server restarts rather than backing off (see `PatientListerWatcher`), so
    the time a scenario takes to recover is the controller's, not the stand-in's.
    """
    import threading

    rest = RestClient(
        build_config(str(control_plane.kubeconfig_path)), qps=500, burst=1000, user_agent="volcano-job-simulator"
    )
    stop = threading.Event()
    clientset = PatientClientset(rest, stop)
    broadcaster = EventBroadcaster()
    broadcaster.start_recording_to_sink(KubeEventSink.from_rest_client(rest))
    sim = JobSimulator(clientset, recorder=broadcaster.new_recorder(SIMULATOR_COMPONENT))
    thread = threading.Thread(target=sim.run, args=(stop,), name="fault-job-simulator", daemon=True)
    thread.start()
    yield sim
    stop.set()
    thread.join(timeout=10)
    broadcaster.shutdown(timeout=5)
    rest.close()


@pytest.fixture
def new_namespace(clients: Clientset) -> Iterator[Callable[[], str]]:
    made: list[str] = []

    def make() -> str:
        name = f"faults-{uuid.uuid4().hex[:8]}"
        clients.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        made.append(name)
        return name

    yield make
    for name in made:
        with contextlib.suppress(Exception):
            clients.resource(NAMESPACES).delete(name)


@pytest.fixture
def job_log(clients: Clientset, job_simulator: JobSimulator) -> Iterator[JobLog]:
    """Every Job event of the plane, in the API server's order, from before the run starts."""
    log = JobLog(clients.jobs().lister_watcher())
    yield log
    log.close()


class Controllers:
    """`jobflow-controller` processes of one test; the last one started is the one that must survive."""

    def __init__(self, kubeconfig: Path, log_dir: Path) -> None:
        self.kubeconfig = kubeconfig
        self.log_dir = log_dir
        self.started: list[ControllerProcess] = []

    def start(self, max_requeue: int | None, *flags: str, resync: str | None = "5s") -> ControllerProcess:
        args = ["--worker-threads=3", *flags]
        if max_requeue is not None:
            args.append(f"--max-requeue-num={max_requeue}")
        if resync is not None:
            args.append(f"--resync-period={resync}")
        proc = ControllerProcess(str(self.kubeconfig), self.log_dir, *args, name=f"controller-{len(self.started)}")
        self.started.append(proc)
        wait_for(lambda: proc.get("/readyz")[0] == 200 or proc.popen.poll() is not None, 60, what="/readyz")
        assert proc.popen.poll() is None, proc.log()
        return proc

    def stop_all(self) -> None:
        for proc in self.started:
            proc.signal(signal.SIGCONT)
            proc.stop()


@pytest.fixture
def controllers(control_plane: ControlPlane, tmp_path: Path) -> Iterator[Controllers]:
    procs = Controllers(control_plane.kubeconfig_path, tmp_path)
    yield procs
    procs.stop_all()


# -- helpers -------------------------------------------------------------------------------------------
def succeed_all(work: Workload) -> dict[str, dict[str, str]]:
    return {work.namespace: dict.fromkeys(work.names, "Succeed")}


def phases(clients: Clientset, namespace: str) -> dict[str, str]:
    return {meta.name(f): jf.phase(f) for f in clients.job_flows(namespace).list()}


def get_or_none(clients: Clientset, namespace: str, kind: str, name: str) -> dict[str, Any] | None:
    client = clients.jobs(namespace) if kind == "Job" else clients.job_flows(namespace)
    try:
        return client.get(name)
    except NotFoundError:
        return None


def create_in_waves(clients: Clientset, work: Workload, waves: int) -> Iterator[int]:
    """Create the templates, then the JobFlows in `waves` batches, one batch per step of the caller."""
    for doc in work.templates:
        create_retrying(clients.job_templates(work.namespace), doc)
    size = -(-len(work.job_flows) // waves)
    for wave in range(waves):
        for doc in work.job_flows[wave * size : (wave + 1) * size]:
            create_retrying(clients.job_flows(work.namespace), doc)
        yield wave


def job_count(clients: Clientset, namespace: str) -> int:
    return len(clients.jobs(namespace).list())


def more_jobs_than(clients: Clientset, namespace: str, count: int) -> Callable[[], bool]:
    return lambda: job_count(clients, namespace) > count


# -- a. another client annotating every JobFlow -------------------------------------------------------
@pytest.mark.parametrize("max_requeue", REQUEUE)
def test_a_client_annotating_every_jobflow_every_50ms_strands_no_flow(
    clients: Clientset,
    control_plane: ControlPlane,
    job_log: JobLog,
    controllers: Controllers,
    new_namespace: Callable[[], str],
    max_requeue: int | None,
) -> None:
    """Status writes that conflict with the annotations are retried, never dropped (issue 10, item 1)."""
    namespace = new_namespace()
    proc = controllers.start(max_requeue)
    work = random_workload(101, namespace, FLOWS)
    annotator = Annotator(clients, [(namespace, n) for n in work.names])
    work.create(clients)
    annotator.start()
    try:
        assert_no_flow_stranded(clients, job_log, control_plane.etcd_url, succeed_all(work), proc, timeout=90)
    finally:
        annotator.stop()
    assert annotator.rounds >= 10 and annotator.patches >= 10 * len(work.names), vars(annotator)
    annotations = [meta.metadata(f).get("annotations") or {} for f in clients.job_flows(namespace).list()]
    assert all("e2e.jobflow.volcano.sh/counter" in a for a in annotations)


# -- e. a foreign Job squatting a JobFlow's Job name -----------------------------------------------------
def test_a_foreign_job_squatting_a_name_is_never_adopted_and_the_flow_waits_for_it(
    clients: Clientset,
    control_plane: ControlPlane,
    job_log: JobLog,
    controllers: Controllers,
    new_namespace: Callable[[], str],
) -> None:
    """sample-controller's ErrResourceExists rule (item 3): never adopted, counted or modified; a Warning."""
    namespace = new_namespace()
    work = random_workload(505, namespace, 20)
    for name in ("sa", "sb", "ma", "mb", "mc"):
        work.templates.append(template(name, namespace, FAST))
    owner = clients.resource(CONFIG_MAPS, namespace).create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "squatter", "namespace": namespace}}
    )
    other_ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "squatter",
        "uid": meta.uid(owner),
        "controller": True,
    }
    # Before the JobFlows: one with the JobFlow's labels and no owner, one controlled by a ConfigMap.
    squats = {
        "squat-root-sa": foreign_job(namespace, "squat-root-sa", "squat-root", "sa", FAST),
        "squat-mid-mb": foreign_job(namespace, "squat-mid-mb", "squat-mid", "mb", FAST, ownerReferences=[other_ref]),
    }
    made = {name: clients.jobs(namespace).create(doc) for name, doc in squats.items()}
    squatted = [flow("squat-root", namespace, chain("sa", "sb")), flow("squat-mid", namespace, chain("ma", "mb", "mc"))]
    work.job_flows.extend(squatted)

    proc = controllers.start(None)
    work.create(clients)
    uids = {n: meta.uid(clients.job_flows(namespace).get(n)) for n in ("squat-root", "squat-mid")}

    def warned(job_flow: str, job: str) -> int:
        message = f'Resource "{job}" already exists and is not managed by JobFlow'
        return sum(
            count for msg, count in warnings(clients, namespace, uids[job_flow], "ErrResourceExists") if msg == message
        )

    wait_for(lambda: warned("squat-root", "squat-root-sa"), 30, what="the Warning about squat-root-sa")
    wait_for(lambda: warned("squat-mid", "squat-mid-mb"), 30, what="the Warning about squat-mid-mb")
    # The squatters run to Completed (the simulator plays them): still not ours, so nothing follows.
    wait_for(lambda: all(vcjob.phase(clients.jobs(namespace).get(n)) == "Completed" for n in squats), 30)
    wait_for(lambda: vcjob.phase(get_or_none(clients, namespace, "Job", "squat-mid-ma") or {}) == "Completed", 30)
    counts = {"squat-root": warned("squat-root", "squat-root-sa"), "squat-mid": warned("squat-mid", "squat-mid-mb")}

    def said_again(job_flow: str, job: str) -> bool:
        """A later sync repeats the Warning, unless the recorder's spam filter (client-go's: 25
        Warnings per object, then one per 5 minutes) has already let through all it will: with
        --resync-period=5s on a loaded machine that happens within a couple of minutes."""
        if warned(job_flow, job) > counts[job_flow]:
            return True
        every = sum(count for _, count in warnings(clients, namespace, uids[job_flow], "ErrResourceExists"))
        return every >= DEFAULT_SPAM_BURST

    # A sync after the squatters completed (a resync at the latest) says it again, and still waits.
    wait_for(lambda: said_again("squat-root", "squat-root-sa"), 30, what="a later sync of squat-root")
    wait_for(lambda: said_again("squat-mid", "squat-mid-mb"), 30, what="a later sync of squat-mid")
    # And it still waits, several resync periods later.
    time.sleep(3 * 5)
    names = {meta.name(j) for j in clients.jobs(namespace).list()}
    assert "squat-root-sb" not in names and "squat-mid-mc" not in names, sorted(names)
    for job_flow in ("squat-root", "squat-mid"):
        status = jf.status(clients.job_flows(namespace).get(job_flow))
        listed = [n for key, v in status.items() if key.endswith("Jobs") for n in v]
        listed += list(status.get("conditions") or {}) + [e.get("name") for e in status.get("jobStatusList") or []]
        assert not set(listed) & set(squats), (job_flow, status)
    for name, before in made.items():
        now = clients.jobs(namespace).get(name)
        for key in ("labels", "annotations", "ownerReferences", "finalizers"):
            assert meta.metadata(now).get(key) == meta.metadata(before).get(key), (name, key)
        assert now["spec"] == before["spec"]
        managers = {m.get("manager") for m in meta.metadata(now).get("managedFields") or []}
        assert managers <= {"e2e-faults", "volcano-job-simulator"}, (name, managers)

    for name in squats:
        clients.jobs(namespace).delete(name)
    foreign = {meta.uid(j) for j in made.values()}
    assert_no_flow_stranded(
        clients, job_log, control_plane.etcd_url, succeed_all(work), proc, timeout=60, foreign=foreign
    )


# -- f. a JobFlow deleted and re-created under the same name ----------------------------------------------
def test_a_recreated_jobflow_never_counts_the_jobs_of_the_one_it_replaced(
    clients: Clientset,
    control_plane: ControlPlane,
    job_log: JobLog,
    controllers: Controllers,
    new_namespace: Callable[[], str],
) -> None:
    """The old Jobs are controlled by the old uid; the new JobFlow waits for the garbage collector."""
    namespace = new_namespace()
    work = random_workload(606, namespace, 20)
    work.templates += [
        template("ra", namespace, FAST),
        template("rb", namespace, "Pending:0.2s,Running:3s,Completed"),
        template("rc", namespace, FAST),
    ]
    reborn = flow("reborn", namespace, chain("ra", "rb", "rc"))
    work.job_flows.append(reborn)
    proc = controllers.start(None)
    work.create(clients)
    old = clients.job_flows(namespace).get("reborn")
    old_uid = meta.uid(old)
    wait_for(lambda: get_or_none(clients, namespace, "Job", "reborn-rb"), 30, what="the old reborn-rb")
    # Keep the old Jobs past the garbage collector's delete, so the new JobFlow meets them.
    held = [j for j in clients.jobs(namespace).list() if controller_uid(j) == old_uid]
    assert sorted(meta.name(j) for j in held) == ["reborn-ra", "reborn-rb"]
    for job in held:
        clients.jobs(namespace).patch(meta.name(job), {"metadata": {"finalizers": [HOLD]}})
    clients.job_flows(namespace).delete("reborn", propagation_policy="Background")
    wait_for(lambda: get_or_none(clients, namespace, "JobFlow", "reborn") is None, 30, what="the old JobFlow gone")
    new_uid = meta.uid(clients.job_flows(namespace).create(reborn))
    assert new_uid != old_uid

    def collected() -> bool:
        jobs = [get_or_none(clients, namespace, "Job", meta.name(j)) for j in held]
        return all(j is not None and meta.metadata(j).get("deletionTimestamp") for j in jobs)

    # kube-controller-manager's garbage collector learns of custom resources at its discovery resync
    # (every 30 s; an API server restart can make it drop and re-add them), hence the long deadline.
    wait_for(collected, 75, what="the garbage collector to delete the old Jobs")
    message = 'Resource "reborn-ra" already exists and is not managed by JobFlow'
    wait_for(
        lambda: any(m == message for m, _ in warnings(clients, namespace, new_uid, "ErrResourceExists")),
        30,
        what="the new JobFlow's ErrResourceExists Warning about the old reborn-ra",
    )
    # The old reborn-rb finishes (the simulator still plays it); its update brings the new JobFlow
    # back, which must not take it for its own and create reborn-rc.
    wait_for(lambda: vcjob.phase(clients.jobs(namespace).get("reborn-rb")) == "Completed", 30)
    seen = sum(c for _, c in warnings(clients, namespace, new_uid, "ErrResourceExists"))
    wait_for(
        lambda: sum(c for _, c in warnings(clients, namespace, new_uid, "ErrResourceExists")) > seen,
        30,
        what="a sync of the new JobFlow after the old reborn-rb Completed",
    )
    assert get_or_none(clients, namespace, "Job", "reborn-rc") is None
    status = jf.status(clients.job_flows(namespace).get("reborn"))
    assert not any(v for k, v in status.items() if k.endswith("Jobs")), status
    assert not status.get("conditions") and not status.get("jobStatusList"), status

    for job in held:
        clients.jobs(namespace).patch(meta.name(job), {"metadata": {"finalizers": None}})
    history = {(namespace, "reborn", old_uid): targets_of(old)}
    assert_no_flow_stranded(
        clients, job_log, control_plane.etcd_url, succeed_all(work), proc, timeout=60, history=history
    )
    for job in clients.jobs(namespace).list():
        if meta.name(job).startswith("reborn-"):
            assert controller_uid(job) == new_uid


# -- g. a ResourceQuota refusing Jobs in one namespace ---------------------------------------------------
@pytest.mark.parametrize(
    ("max_requeue", "resync"),
    [pytest.param(None, "5s", id="requeue-default"), pytest.param(0, None, id="requeue-0-default-resync")],
)
def test_a_quota_refusing_jobs_warns_naming_it_and_leaves_other_namespaces_alone(
    clients: Clientset,
    control_plane: ControlPlane,
    job_log: JobLog,
    controllers: Controllers,
    new_namespace: Callable[[], str],
    max_requeue: int | None,
    resync: str | None,
) -> None:
    """FailedCreate names the quota at each refusal; at 0 retries the request is dropped with upstream's
    SyncJobFlow Warning, and only the resync (default 30 s) brings the flow back once the quota is gone."""
    quota_ns, other_ns = new_namespace(), new_namespace()
    quotas = clients.resource(RESOURCE_QUOTAS, quota_ns)
    quotas.create(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "one-job", "namespace": quota_ns},
            "spec": {"hard": {"count/jobs.batch.volcano.sh": "1"}},
        }
    )
    wait_for(lambda: (quotas.get("one-job").get("status") or {}).get("used"), 60, what="the quota to be counted")
    limited = Workload(quota_ns)
    limited.templates = [template(n, quota_ns, FAST) for n in ("qa", "qb")]
    limited.job_flows = [flow(f"q{i}", quota_ns, chain("qa", "qb")) for i in range(3)]
    others = random_workload(707, other_ns, 20)

    proc = controllers.start(max_requeue, resync=resync)
    limited.create(clients)
    others.create(clients)
    uids = {n: meta.uid(clients.job_flows(quota_ns).get(n)) for n in limited.names}

    def refusals(reason: str) -> list[tuple[str, str]]:
        return [(n, m) for n, uid in uids.items() for m, _ in warnings(clients, quota_ns, uid, reason)]

    def failed_create() -> list[tuple[str, str]]:
        return [
            (n, m)
            for n, m in refusals("FailedCreate")
            if m.startswith(f"Error creating job {n}-q") and "exceeded quota: one-job" in m
        ]

    wait_for(failed_create, 30, what="a FailedCreate Warning naming the quota")
    for name, message in failed_create():
        job_name = message.removeprefix("Error creating job ").split(":", 1)[0]
        assert job_name in {f"{name}-qa", f"{name}-qb"}, message
    if max_requeue == 0:
        dropped = wait_for(
            lambda: [(n, m) for n, m in refusals("SyncJobFlow") if "exceeded quota: one-job" in m],
            30,
            what="upstream's SyncJobFlow Warning as the request is dropped",
        )
        assert all(m.startswith("SyncJobFlow JobFlow failed for ") for _, m in dropped), dropped
    # Other namespaces are not held up by the refusals.
    assert_no_flow_stranded(clients, job_log, control_plane.etcd_url, succeed_all(others), proc, timeout=60)
    stuck = {n for n, p in phases(clients, quota_ns).items() if p != "Succeed"}
    assert stuck, "the quota held no flow back"
    assert job_count(clients, quota_ns) == 1

    quotas.delete("one-job")
    gone_at = time.monotonic()
    bound = 30.0 if resync is None else 5.0
    # Within the resync bound plus the flows' own run (two 0.6 s Jobs) and a margin for this machine.
    assert_no_flow_stranded(clients, job_log, control_plane.etcd_url, succeed_all(limited), proc, timeout=bound + 20)
    took = time.monotonic() - gone_at
    assert took < bound + 20, took


# -- c. the controller killed with SIGKILL --------------------------------------------------------------
def test_a_controller_killed_three_times_mid_run_strands_no_flow(
    clients: Clientset,
    control_plane: ControlPlane,
    job_log: JobLog,
    controllers: Controllers,
    new_namespace: Callable[[], str],
) -> None:
    """A new process takes over what the killed one left half done, creating no Job twice.

    At the default --max-requeue-num only: a killed process's queue dies with it and the next one's
    initial list enqueues every JobFlow afresh, so no retry count survives a kill to be used up.
    """
    max_requeue = None
    namespace = new_namespace()
    rng = random.Random(303)
    proc = controllers.start(max_requeue, "--leader-elect=false")
    work = random_workload(303, namespace, FLOWS)
    for _ in create_in_waves(clients, work, 3):
        wait_for(more_jobs_than(clients, namespace, job_count(clients, namespace)), 30, what="new Jobs")
        time.sleep(rng.uniform(0.3, 1.5))
        proc.signal(signal.SIGKILL)
        assert proc.popen.wait(timeout=10) == -signal.SIGKILL
        proc = controllers.start(max_requeue, "--leader-elect=false")
    assert_no_flow_stranded(clients, job_log, control_plane.etcd_url, succeed_all(work), proc, timeout=90)


# -- b. kube-apiserver restarts -----------------------------------------------------------------------
@pytest.mark.parametrize("max_requeue", REQUEUE)
def test_three_apiserver_restarts_mid_run_strand_no_flow(
    clients: Clientset,
    control_plane: ControlPlane,
    job_log: JobLog,
    controllers: Controllers,
    new_namespace: Callable[[], str],
    max_requeue: int | None,
) -> None:
    """Requests that fail or are dropped during the outages are picked up again (item 2)."""
    namespace = new_namespace()
    proc = controllers.start(max_requeue)
    work = random_workload(202, namespace, FLOWS)
    last_restart = 0.0
    for wave in create_in_waves(clients, work, 3):
        wait_for(safely(lambda: job_count(clients, namespace) > 0), 30, what="the run to get going")
        # The first restart once Jobs run, then one every ~3 s (start to start), each wave in between.
        time.sleep(1.0 if wave == 0 else max(0.0, last_restart + 3.0 - time.monotonic()))
        last_restart = time.monotonic()
        control_plane.restart_apiserver()
    # docs/operations.md's bound: the informers' reconnect backoff (grown over three outages, up to
    # 30 s jittered to 60 s, as client-go's) plus one resync period, plus the flows' own run.
    assert_no_flow_stranded(clients, job_log, control_plane.etcd_url, succeed_all(work), proc, timeout=120)


# -- d. the controller frozen while the world changes under it -------------------------------------------
@pytest.mark.parametrize("max_requeue", REQUEUE)
def test_a_frozen_controller_recovers_from_deleted_jobs_compaction_and_a_restart(
    clients: Clientset,
    control_plane: ControlPlane,
    job_log: JobLog,
    controllers: Controllers,
    new_namespace: Callable[[], str],
    max_requeue: int | None,
) -> None:
    """SIGSTOP; Jobs deleted by hand, etcd compacted (its watches expire), API server restarted; SIGCONT."""
    namespace = new_namespace()
    proc = controllers.start(max_requeue, "--leader-elect=false")
    work = random_workload(404, namespace, FLOWS)
    work.create(clients)

    def mid_run() -> bool:
        jobs = clients.jobs(namespace).list()
        done = sum(1 for j in jobs if vcjob.phase(j) == "Completed")
        unfinished = sum(1 for p in phases(clients, namespace).values() if p != "Succeed")
        return done >= 8 and unfinished >= 8

    wait_for(mid_run, 60, what="a run half done")
    proc.signal(signal.SIGSTOP)
    try:
        unfinished = {n for n, p in phases(clients, namespace).items() if p != "Succeed"}
        jobs = [j for j in clients.jobs(namespace).list() if controller_uid(j) and _owner(j) in unfinished]
        done = [j for j in jobs if vcjob.phase(j) == "Completed"][:3]
        busy = [j for j in jobs if vcjob.phase(j) != "Completed"][:2]
        doomed = done + busy
        assert len(doomed) >= 3, [meta.name(j) for j in jobs]
        for job in doomed:
            clients.jobs(namespace).delete(meta.name(job))
        uids = {meta.uid(j) for j in doomed}
        wait_for(lambda: uids <= job_log.deleted_uids(), 30, what="our watch to see the deletions")
        # The simulator kept running: a Job listed as busy may have Completed just before its
        # delete. What counts is its phase when it was deleted, which the DELETED event carries.
        last = {meta.uid(o): o for kind, o in job_log.snapshot() if kind == "DELETED" and meta.uid(o) in uids}
        done = [j for j in doomed if vcjob.phase(last[meta.uid(j)]) == "Completed"]
        busy = [j for j in doomed if vcjob.phase(last[meta.uid(j)]) != "Completed"]
        relists = job_log.relists
        control_plane.compact_etcd()
        control_plane.restart_apiserver()
        # Our own watch expired too (410) and relisted: what the controller does next is seen in order.
        wait_for(lambda: job_log.relists > relists, 30, what="our watch to relist after the compaction")
    finally:
        proc.signal(signal.SIGCONT)
    redone = {(namespace, meta.name(j)) for j in doomed}
    assert_no_flow_stranded(
        clients, job_log, control_plane.etcd_url, succeed_all(work), proc, timeout=90, redone=redone
    )
    # A Job deleted before it completed runs again. One deleted after it completed is not re-run
    # (issue 14) once the controller knew it Completed; the freeze may have come first, in which
    # case it never learnt that and runs the Job again. Either way the flow Succeeded (checked above).
    for job in busy:
        again = clients.jobs(namespace).get(meta.name(job))
        assert meta.uid(again) != meta.uid(job), f"{meta.name(job)} was not re-created"
    for job in done:
        try:
            again = clients.jobs(namespace).get(meta.name(job))
        except NotFoundError:
            record = {e.get("name"): e for e in jf.job_status_list(clients.job_flows(namespace).get(_owner(job)))}
            assert record[meta.name(job)].get("state") == "Completed", record
        else:
            assert meta.uid(again) != meta.uid(job)


def _owner(job: dict[str, Any]) -> str:
    return str((meta.get_controller_of(job) or {}).get("name") or "")
