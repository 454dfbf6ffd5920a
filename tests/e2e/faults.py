"""The fault suite's toolkit: random DAG JobFlows, a client that keeps annotating them, and the one
invariant checker every fault scenario ends with ("no flow is ever stranded", issue 10).

The checker reads only what the real API server says and what a watch of Jobs saw, in the server's
order; it never asks the controller anything but whether its process is still alive.
"""

from __future__ import annotations

import base64
import contextlib
import json
import random
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from e2e_helpers import ControllerProcess
from jobflows import template

from informers.errors import ApiStatusError, ExpiredError
from informers.listwatch import ListerWatcher, ListOptions, ListResult, Watch, WatchEvent
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import CREATED_BY_JOB_FLOW, CREATED_BY_JOB_TEMPLATE
from jobflow_controller.kube.clientset import Clientset, ResourceClient
from jobflow_controller.kube.errors import AlreadyExistsError
from jobflow_controller.kube.listwatch import ResourceListerWatcher

Obj = Mapping[str, Any]

#: The annotation the meddling client bumps on every JobFlow.
COUNTER_ANNOTATION = "e2e.jobflow.volcano.sh/counter"
#: Each status list and the Job phase it holds; Completing and Terminating are in none (as upstream).
STATUS_LISTS = {
    "pendingJobs": "Pending",
    "runningJobs": "Running",
    "completedJobs": "Completed",
    "failedJobs": "Failed",
    "terminatedJobs": "Terminated",
}
_LISTED_ELSEWHERE = frozenset(STATUS_LISTS.values()) | {"Completing", "Terminating"}
SHAPES = ("chain", "diamond", "fan-in", "fan-out-in", "random")


def safely(fn: Callable[[], Any]) -> Callable[[], Any]:
    """A `wait_for` predicate that reads an API server which may be restarting: errors mean "not yet"."""

    def predicate() -> Any:
        try:
            return fn()
        except Exception:  # noqa: BLE001 - connection refused, 503 while the server comes up, ...
            return None

    return predicate


# -- the workload ------------------------------------------------------------------------------------
@dataclass
class Workload:
    """Random DAG JobFlows over a pool of JobTemplates whose Jobs take 0.3-2 s each (most under 1.5 s)."""

    namespace: str
    templates: list[dict[str, Any]] = field(default_factory=list)
    job_flows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [meta.name(d) for d in self.job_flows]

    def create(self, clientset: Clientset) -> None:
        for doc in self.templates:
            clientset.job_templates(self.namespace).create(doc)
        for doc in self.job_flows:
            clientset.job_flows(self.namespace).create(doc)


def random_script(rng: random.Random, slow: bool = False) -> str:
    """A Job of 0.3-1.5 s, or of 2 s for the pool's `slow` template."""
    pending = rng.uniform(0.1, 0.3)
    running = 1.7 if slow else rng.uniform(0.2, 1.2)
    return f"Pending:{pending:.2f}s,Running:{running:.2f}s,Completed"


def random_flows(rng: random.Random, pool: list[str]) -> list[dict[str, Any]]:
    """One random DAG: a chain, a diamond, a fan-in, a fan-out then fan-in, or any DAG of 2-4 flows."""
    shape = rng.choice(SHAPES)
    edges: list[list[int]]
    if shape == "chain":
        edges = [[]] + [[i - 1] for i in range(1, rng.randint(2, 4))]
    elif shape == "diamond":
        edges = [[], [0], [0], [1, 2]]
    elif shape == "fan-in":
        roots = rng.randint(2, 3)
        edges = [[] for _ in range(roots)] + [list(range(roots))]
    elif shape == "fan-out-in":
        edges = [[], [0], [0], [0], [1, 2, 3]]
    else:
        edges = [[]]
        for i in range(1, rng.randint(2, 4)):
            edges.append(sorted(j for j in range(i) if rng.random() < 0.5))
    names = rng.sample(pool, len(edges))
    flows: list[dict[str, Any]] = []
    for name, targets in zip(names, edges, strict=True):
        entry: dict[str, Any] = {"name": name}
        if targets:
            entry["dependsOn"] = {"targets": [names[t] for t in targets]}
        flows.append(entry)
    return flows


def random_workload(seed: int, namespace: str, count: int, *, prefix: str = "jf", pool_size: int = 12) -> Workload:
    rng = random.Random(seed)
    pool = [f"t{i:02d}" for i in range(pool_size)]
    work = Workload(namespace)
    work.templates = [template(name, namespace, random_script(rng, slow=i == 0)) for i, name in enumerate(pool)]
    for index in range(count):
        work.job_flows.append(
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": "JobFlow",
                "metadata": {"name": f"{prefix}{index:02d}", "namespace": namespace},
                "spec": {"jobRetainPolicy": "retain", "flows": random_flows(rng, pool)},
            }
        )
    return work


def foreign_job(namespace: str, name: str, job_flow: str, flow: str, script: str, **metadata: Any) -> dict[str, Any]:
    """A Volcano Job someone else made under the name `<jobflow>-<flow>`, wearing the JobFlow's labels."""
    keys = {
        CREATED_BY_JOB_TEMPLATE: meta.generate_object_string(namespace, flow),
        CREATED_BY_JOB_FLOW: meta.generate_object_string(namespace, job_flow),
    }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": keys, "annotations": dict(keys), **metadata},
        "spec": template(flow, namespace, script)["spec"],
    }


# -- a log of every Job event, in the API server's order ----------------------------------------------
LISTED = "LISTED"


class JobLog:
    """Every Job event the API server sends, in its order, and every relist marked as one.

    The e2e `EventLog` goes through an informer, which turns a relist (after an API server restart
    or a compaction, the watch's resourceVersion is gone: 410) into ADDED and MODIFIED events in the
    LIST's order, by name, not in the order things happened. Here a relist's objects are recorded as
    `LISTED`, so the order check knows which sightings are in watch order and which are not.
    A lost watch is re-opened within 0.2 s, to keep the unordered windows short.
    """

    def __init__(self, lister_watcher: ListerWatcher) -> None:
        self.lw = lister_watcher
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.relists = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watch: Watch | None = None
        self._listed = threading.Event()
        threading.Thread(target=self._run, name="job-log", daemon=True).start()
        if not self._listed.wait(30):
            raise AssertionError("the Job log could not list Jobs")

    def _run(self) -> None:
        rv: str | None = None
        while not self._stop.is_set():
            try:
                if rv is None:
                    result = self.lw.list(ListOptions())
                    with self._lock:
                        self.events.extend((LISTED, item) for item in result.items)
                        self.relists += 1
                    rv = result.resource_version
                    self._listed.set()
                self._watch = self.lw.watch(
                    ListOptions(resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=300)
                )
                for event in self._watch:
                    obj_rv = meta.resource_version(event.object)
                    if event.type == "ERROR":
                        if int(event.object.get("code") or 0) == 410:
                            rv = None
                        else:
                            self._stop.wait(0.2)
                        break
                    if event.type != "BOOKMARK":
                        with self._lock:
                            self.events.append((event.type, event.object))
                    rv = obj_rv or rv
            except ExpiredError:
                rv = None
            except Exception:  # noqa: BLE001 - the server is restarting: try again shortly
                self._stop.wait(0.2)

    def snapshot(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return list(self.events)

    def deleted_uids(self) -> set[str]:
        return {meta.uid(obj) for kind, obj in self.snapshot() if kind == "DELETED"}

    def close(self) -> None:
        self._stop.set()
        if self._watch is not None:
            self._watch.stop()


def etcd_create_revisions(etcd_url: str, namespace: str) -> dict[str, int]:
    """The etcd revision at which each Job of `namespace` that exists now was created.

    A Job's resourceVersion is its last write's revision; only etcd knows its creation's. Together
    they order a Job's creation against its targets' completion exactly, whatever any watch missed.
    """
    prefix = f"/registry/batch.volcano.sh/jobs/{namespace}/".encode()
    end = prefix[:-1] + bytes([prefix[-1] + 1])
    body = {"key": base64.b64encode(prefix).decode(), "range_end": base64.b64encode(end).decode(), "keys_only": True}
    req = urllib.request.Request(
        etcd_url + "/v3/kv/range", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        reply = json.loads(resp.read())
    out: dict[str, int] = {}
    for kv in reply.get("kvs") or []:
        name = base64.b64decode(kv["key"])[len(prefix) :].decode()
        out[name] = int(kv["create_revision"])
    return out


def creation_order_problems(
    jobs: Sequence[Obj], job_flows: Sequence[Obj], created_at: Mapping[str, int], redone: Collection[str]
) -> list[str]:
    """Each Job created after each of its targets' Jobs Completed, by etcd revision.

    A Completed Job is never written again (the simulator's last write, and the controller never
    modifies Jobs), so its resourceVersion is the revision at which it Completed. A target deleted by
    hand and run again (`redone`) completed twice: that Job is left to the watch order check.
    """
    problems: list[str] = []
    by_name = {meta.name(j): j for j in jobs}
    for job_flow in job_flows:
        for flow, targets in targets_of(job_flow).items():
            job = by_name.get(jf.job_name(meta.name(job_flow), flow))
            if job is None or controller_uid(job) != meta.uid(job_flow):
                continue
            for target in targets:
                target_name = jf.job_name(meta.name(job_flow), target)
                dep = by_name.get(target_name)
                if dep is None or target_name in redone:
                    continue
                if vcjob.phase(dep) != "Completed":
                    problems.append(f"{meta.name(job)} exists while its target {target_name} is {vcjob.phase(dep)!r}")
                elif created_at.get(meta.name(job), 0) <= int(meta.resource_version(dep)):
                    problems.append(
                        f"{meta.name(job)} created at revision {created_at.get(meta.name(job))}, before its target "
                        f"{target_name} Completed at revision {meta.resource_version(dep)}"
                    )
    return problems


# -- a Volcano stand-in that comes back with the API server ---------------------------------------------
class PatientListerWatcher:
    """A ListerWatcher that rides out an API server outage instead of failing.

    A reflector (client-go's, and ours) backs off 0.8 s doubling to 30 s, reset only after 2 minutes
    without failures: after three restarts it may sleep half a minute. That is the controller's
    own behaviour under test, but the job simulator stands in for Volcano and must not add such a
    stall of its own to every scenario. So its list and watch retry every 0.2 s while the server is
    unreachable (or answers 5xx/429), and a stream that breaks ends like a normal close; a 410 and
    every other API error still reach the reflector as they are.
    """

    def __init__(self, inner: ResourceListerWatcher, closed: threading.Event) -> None:
        self.inner = inner
        self.closed = closed

    def _patiently(self, call: Callable[[], Any]) -> Any:
        while True:
            try:
                return call()
            except ApiStatusError as err:
                if self.closed.is_set() or not (err.code >= 500 or err.code == 429):
                    raise
            except Exception:
                if self.closed.is_set():
                    raise
            self.closed.wait(0.2)

    def list(self, options: ListOptions) -> ListResult:
        result: ListResult = self._patiently(lambda: self.inner.list(options))
        return result

    def watch(self, options: ListOptions) -> Watch:
        return _PatientWatch(self._patiently(lambda: self.inner.watch(options)))


class _PatientWatch:
    def __init__(self, inner: Watch) -> None:
        self.inner = inner

    def __iter__(self) -> Iterator[WatchEvent]:
        try:
            yield from self.inner
        except ApiStatusError:
            raise
        except Exception:  # noqa: BLE001 - the connection broke: end as a close, the reflector re-watches
            return

    def stop(self) -> None:
        self.inner.stop()


class PatientClientset(Clientset):
    """The simulator's clientset: its Job watch is a `PatientListerWatcher`."""

    def __init__(self, rest: Any, closed: threading.Event) -> None:
        super().__init__(rest)
        self.closed = closed

    def jobs(self, namespace: str | None = None) -> ResourceClient:
        client = super().jobs(namespace)
        closed = self.closed

        class _Jobs(ResourceClient):
            def lister_watcher(self, label_selector: str | None = None) -> Any:
                return PatientListerWatcher(super().lister_watcher(label_selector), closed)

        return _Jobs(client.rest, client.resource, client.namespace)


# -- a client that keeps writing JobFlow metadata -------------------------------------------------------
class Annotator:
    """Merge-patches an annotation with a counter onto every named JobFlow, a round every `interval`.

    What `kubectl annotate`, GitOps tools and dashboards do: each patch bumps the resourceVersion,
    so a status PUT carrying the cached one conflicts.
    """

    def __init__(self, clientset: Clientset, targets: list[tuple[str, str]], interval: float = 0.05) -> None:
        self.clientset = clientset
        self.targets = targets
        self.interval = interval
        self.patches = 0
        self.errors = 0
        self.rounds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="annotator", daemon=True)

    def start(self) -> Annotator:
        self._thread.start()
        return self

    def _run(self) -> None:
        counter = 0
        while not self._stop.is_set():
            for namespace, name in self.targets:
                counter += 1
                patch = {"metadata": {"annotations": {COUNTER_ANNOTATION: str(counter)}}}
                try:
                    self.clientset.job_flows(namespace).patch(name, patch)
                    self.patches += 1
                except Exception:  # noqa: BLE001 - keep meddling whatever the server says
                    self.errors += 1
            self.rounds += 1
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


# -- the invariants ------------------------------------------------------------------------------------
def controller_uid(obj: Obj) -> str:
    """The uid of `obj`'s controlling JobFlow, or "" if a JobFlow does not control it."""
    ref = meta.get_controller_of(obj)
    if ref is None or ref.get("kind") != "JobFlow" or ref.get("apiVersion") != "flow.volcano.sh/v1alpha1":
        return ""
    return str(ref.get("uid") or "")


def targets_of(job_flow: Obj) -> dict[str, tuple[str, ...]]:
    return {f.name: f.targets or () for f in jf.flows(job_flow)}


def status_problems(
    job_flow: Obj, jobs: Sequence[Obj], expected_phase: str, deleted: Collection[str] = ()
) -> list[str]:
    """What is wrong with one JobFlow's final status, given every Job of its namespace.

    `deleted` names the Jobs the test deleted by hand. One that had run to completion is not run
    again (issue 14): it may be missing at the end, and then its `jobStatusList` entry, which upstream
    never prunes, must record it Completed. Every other list names exactly the Jobs that exist.
    """
    name, uid = meta.name(job_flow), meta.uid(job_flow)
    where = f"{meta.namespace(job_flow)}/{name}"
    problems: list[str] = []
    phase = jf.phase(job_flow)
    if phase != expected_phase:
        problems.append(f"{where}: phase {phase!r}, expected {expected_phase!r}")
    controlled = {meta.name(j): j for j in jobs if controller_uid(j) == uid}
    wanted = {jf.job_name(name, flow) for flow in targets_of(job_flow)}
    records = {str(e.get("name")): e for e in jf.job_status_list(job_flow)}
    finished_and_gone = {
        n for n in wanted - set(controlled) if n in deleted and (records.get(n) or {}).get("state") == "Completed"
    }
    if expected_phase == "Succeed" and set(controlled) | finished_and_gone != wanted:
        problems.append(f"{where}: controls Jobs {sorted(controlled)}, expected {sorted(wanted)}")
    for job in jobs:
        if meta.name(job) in wanted and meta.name(job) not in controlled:
            problems.append(f"{where}: Job {meta.name(job)} exists but is not controlled by uid {uid}")
    status = jf.status(job_flow)
    for key, job_phase in STATUS_LISTS.items():
        listed = list(status.get(key) or [])
        expected = sorted(n for n, j in controlled.items() if vcjob.phase(j) == job_phase)
        if sorted(listed) != expected:
            problems.append(f"{where}: status.{key} {sorted(listed)}, Jobs say {expected}")
    unknown = sorted(n for n, j in controlled.items() if vcjob.phase(j) not in _LISTED_ELSEWHERE)
    if sorted(status.get("unKnowJobs") or []) != unknown:
        problems.append(f"{where}: status.unKnowJobs {sorted(status.get('unKnowJobs') or [])}, Jobs say {unknown}")
    conditions = status.get("conditions") or {}
    if sorted(conditions) != sorted(controlled):
        problems.append(f"{where}: status.conditions keys {sorted(conditions)}, controlled Jobs {sorted(controlled)}")
    for job_name, condition in conditions.items():
        current = controlled.get(job_name)
        if current is not None and condition.get("phase") != vcjob.phase(current):
            problems.append(
                f"{where}: conditions[{job_name}].phase {condition.get('phase')!r}, Job {vcjob.phase(current)!r}"
            )
    entries = [str(e.get("name")) for e in jf.job_status_list(job_flow)]
    if sorted(entries) != sorted(set(controlled) | finished_and_gone):
        problems.append(f"{where}: jobStatusList names {sorted(entries)}, controlled Jobs {sorted(controlled)}")
    return problems


def final_state_problems(
    clientset: Clientset, namespace: str, expected: Mapping[str, str], deleted: Collection[str] = ()
) -> list[str]:
    """Every expected JobFlow in its phase, its status equal to its Jobs, every Job controlled by one."""
    flows = {meta.name(f): f for f in clientset.job_flows(namespace).list()}
    jobs = clientset.jobs(namespace).list()
    problems: list[str] = []
    for name, phase in expected.items():
        if name not in flows:
            problems.append(f"{namespace}/{name}: JobFlow missing")
            continue
        problems.extend(status_problems(flows[name], jobs, phase, deleted))
    uids = {meta.uid(f): f for f in flows.values()}
    for job in jobs:
        owner = uids.get(controller_uid(job))
        if owner is None:
            problems.append(f"{namespace}/{meta.name(job)}: not controlled by any current JobFlow")
        elif meta.name(job) not in {jf.job_name(meta.name(owner), f) for f in targets_of(owner)}:
            problems.append(f"{namespace}/{meta.name(job)}: controlled by {meta.name(owner)} but no flow of it")
    return problems


def _job_of(obj: Any) -> Obj | None:
    inner = getattr(obj, "obj", obj)  # a DeletedFinalStateUnknown tombstone carries the last state
    return inner if isinstance(inner, Mapping) else None


def watch_order_problems(
    events: list[tuple[str, Any]],
    specs: Mapping[tuple[str, str, str], Mapping[str, tuple[str, ...]]],
    *,
    namespaces: Collection[str],
    redone: Collection[tuple[str, str]] = (),
    foreign: Collection[str] = (),
) -> list[str]:
    """Replay a watch of Jobs in the API server's order.

    `specs` maps (namespace, jobflow name, jobflow uid) to its flows' targets. At the first sight of
    each Job (a new uid) in watch order, every target's Job controlled by the same JobFlow uid must
    already have been seen Completed (a Job first seen in a relist is left to `creation_order_problems`),
    and the Job must be controlled by a JobFlow (unless its uid is `foreign`).
    No (name, owner uid) may get two Jobs, unless (namespace, name) is in `redone` (deleted by hand).
    """
    problems: list[str] = []
    completed: set[tuple[str, str, str]] = set()  # (namespace, job name, owner uid)
    seen: set[str] = set()
    creations: Counter[tuple[str, str, str]] = Counter()
    for kind, raw in events:
        job = _job_of(raw)
        if job is None or meta.namespace(job) not in namespaces or kind == "DELETED":
            continue
        ns, name, uid = meta.namespace(job), meta.name(job), meta.uid(job)
        owner_uid = controller_uid(job)
        ref = meta.get_controller_of(job) or {}
        if uid not in seen:
            seen.add(uid)
            in_order = kind != LISTED  # a relist's objects come by name, not in the order they happened
            if not owner_uid:
                if uid not in foreign:
                    problems.append(f"{ns}/{name} (uid {uid}) appeared without a JobFlow controlling it")
            else:
                creations[(ns, name, owner_uid)] += 1
                owner = str(ref.get("name") or "")
                flows = specs.get((ns, owner, owner_uid))
                flow = name.removeprefix(f"{owner}-")
                if flows is None or flow not in flows:
                    problems.append(f"{ns}/{name} is controlled by {owner} (uid {owner_uid}), which has no such flow")
                elif in_order:
                    missing = [t for t in flows[flow] if (ns, jf.job_name(owner, t), owner_uid) not in completed]
                    if missing:
                        problems.append(f"{ns}/{name} was created before its targets {missing} were seen Completed")
        if owner_uid and vcjob.phase(job) == "Completed":
            completed.add((ns, name, owner_uid))
    for (ns, name, owner_uid), count in creations.items():
        if count > 1 and (ns, name) not in redone:
            problems.append(f"{ns}/{name} was created {count} times for JobFlow uid {owner_uid}")
    return problems


def assert_no_flow_stranded(
    clientset: Clientset,
    log: JobLog,
    etcd_url: str,
    expected: Mapping[str, Mapping[str, str]],
    controller: ControllerProcess,
    *,
    timeout: float = 60.0,
    redone: Collection[tuple[str, str]] = (),
    foreign: Collection[str] = (),
    history: Mapping[tuple[str, str, str], Mapping[str, tuple[str, ...]]] | None = None,
) -> None:
    """The end of every fault scenario.

    `expected` is namespace -> JobFlow name -> final phase. `history` adds the flows of JobFlows that
    existed during the run but are gone now (deleted and re-created), keyed as in `watch_order_problems`.
    """
    deadline = time.monotonic() + timeout
    problems: list[str] = ["not checked yet"]
    while time.monotonic() < deadline:
        try:
            problems = [
                p
                for ns, names in expected.items()
                for p in final_state_problems(clientset, ns, names, {name for n, name in redone if n == ns})
            ]
        except Exception as err:  # noqa: BLE001 - the server may still be coming back
            problems = [f"reading the final state failed: {err}"]
        if not problems:
            break
        time.sleep(0.2)
    assert not problems, _report("JobFlows stranded or wrong at the deadline", problems, controller)

    specs: dict[tuple[str, str, str], Mapping[str, tuple[str, ...]]] = dict(history or {})
    final_jobs: dict[str, Obj] = {}
    creation: list[str] = []
    for ns in expected:
        job_flows = clientset.job_flows(ns).list()
        jobs = clientset.jobs(ns).list()
        for job_flow in job_flows:
            specs[(ns, meta.name(job_flow), meta.uid(job_flow))] = targets_of(job_flow)
        final_jobs.update({meta.uid(j): j for j in jobs})
        hand = {name for n, name in redone if n == ns}
        created_at = etcd_create_revisions(etcd_url, ns)
        creation += [f"{ns}/{p}" for p in creation_order_problems(jobs, job_flows, created_at, hand)]
    assert not creation, _report("Jobs created before their targets Completed (etcd revisions)", creation, controller)

    def caught_up() -> bool:
        """Our watch may lag the server: wait until it has seen every final Job in its final phase."""
        seen = {(meta.uid(j), vcjob.phase(j)) for _, j in log.snapshot()}
        return all((uid, vcjob.phase(j)) in seen for uid, j in final_jobs.items())

    watch_deadline = time.monotonic() + 30
    while not caught_up():
        assert time.monotonic() < watch_deadline, "the Job watch never caught up with the API server"
        time.sleep(0.1)
    order = watch_order_problems(log.snapshot(), specs, namespaces=set(expected), redone=redone, foreign=foreign)
    assert not order, _report("Jobs created out of order or twice", order, controller)
    assert controller.popen.poll() is None, _report(
        f"the controller exited with {controller.popen.returncode}", [], controller
    )


def _report(title: str, problems: list[str], controller: ControllerProcess, tail: int = 60) -> str:
    lines = [title + ":", *(f"  {p}" for p in problems[:40])]
    if len(problems) > 40:
        lines.append(f"  ... and {len(problems) - 40} more")
    with contextlib.suppress(OSError):
        log_lines = controller.log().splitlines()
        lines.append(f"--- controller log ({controller.log_path}), last {tail} lines ---")
        lines.extend(log_lines[-tail:])
    return "\n".join(lines)


def events_for(clientset: Clientset, namespace: str, uid: str) -> list[dict[str, Any]]:
    """The events whose involved object is the object with `uid` (a re-created JobFlow has a new one)."""
    return [e for e in clientset.events(namespace).list() if (e.get("involvedObject") or {}).get("uid") == uid]


def warnings(clientset: Clientset, namespace: str, uid: str, reason: str) -> list[tuple[str, int]]:
    """(message, count) of the Warning events with `reason` on the object with `uid`."""
    return [
        (str(e.get("message")), int(e.get("count") or 1))
        for e in events_for(clientset, namespace, uid)
        if e.get("type") == "Warning" and e.get("reason") == reason
    ]


def create_retrying(client: ResourceClient, doc: dict[str, Any], timeout: float = 30.0) -> None:
    """Create `doc`, riding out an API server that is coming back (custom resources are served last)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.create(doc)
            return
        except AlreadyExistsError:
            return  # an earlier attempt got through before its answer was lost
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
