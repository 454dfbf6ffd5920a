"""Informer benchmarks against a real kube-apiserver: initial sync, memory per object, watch throughput.

Starts its own etcd + kube-apiserver (no kube-controller-manager: its garbage collector would watch
the 10,000 Jobs too and compete for the two CPUs), installs the CRDs and creates ``COUNT`` Volcano
Jobs of realistic shape the way they come to exist in a cluster: POSTed by the JobFlow controller
(field manager ``jobflow-controller``), then their status written by Volcano's job controller
(a merge patch of the status subresource, field manager ``vc-controller-manager``), so each carries
two managedFields entries. Each has labels, annotations, a controller ownerReference, two tasks with
pod templates (container, command, env, resources) and a status.

Every variant runs in a fresh child process (``--child``), so its RSS is its own. Memory is read
after ``gc.collect()`` as RSS (/proc/self/statm) and as pymalloc's accounting
(``sys._debugmallocstats``: live blocks vs free blocks still held in arenas), each minus the
baseline taken after imports and a first request, divided by the object count:

* ``raw_list``: the reflector's first LIST (RV "0", pages of 500) through the REST layer, items
  kept in a list, no informer: the floor under the sync time and the memory of the bare JSON dicts.
* ``raw_list_consistent_pages``: the same with RV "" (a consistent read, which the API server
  pages): the paginated first LIST a reflector could do instead of a watch-list.
* ``sync_plain`` and ``sync_strip_managed_fields``: a ``SharedIndexInformer`` (namespace index, one
  counting handler, the first LIST as above, no watch-list) without and with the
  ``strip_managed_fields`` transform: seconds until
  ``has_synced()`` and until the handler has seen every add, peak RSS, the deep ``sys.getsizeof``
  of one cached object (by part and by type) and of the whole cache per object (strings shared
  between objects counted once), and the store's own key and index overhead.
* ``sync_product``: the Job informer exactly as the controller-manager builds it
  (``VolcanoInformerFactory``: its three indexes, its transform ``strip_managed_fields`` then the
  ``Interner``, and the initial state streamed by a watch-list), same measurements.
* ``watch``: the product's configuration again. After sync the parent merge-patches the
  status of ``EVENTS`` Jobs from a thread pool and the child's handler counts the updates as they
  arrive (``live``: bounded by how fast the API server takes writes). Then a second informer lists
  at the resourceVersion from before those writes (``resourceVersionMatch=Exact``) and watches from
  there: the API server replays all ``EVENTS`` updates from its watch cache at once, so ``replay``
  measures how fast the informer itself takes a burst (decode, DeltaFIFO, indexer, handler).

The parent reports the JSON size of one Job with and without managedFields, and ``summary.targets``
compares the product's figures with issue 11's targets (RSS per cached Job, peak RSS during the
initial sync over the steady state after it, seconds to sync). Prints one JSON
document on stdout, progress on stderr; a watchdog fails it after ``TIME_LIMIT`` seconds. Other
processes on the machine perturb every timing here (the load average is reported).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

# This script is named like the package it measures: run as ``python bench/informers.py`` its own
# directory comes first on sys.path and ``import informers`` would import this file. Drop it.
_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))

from bench._common import (  # noqa: E402
    BenchError,
    Watchdog,
    control_plane,
    cpu_seconds,
    create_namespace,
    deep_sizeof,
    emit,
    log,
    machine,
    proc_status_kib,
    pymalloc_bytes,
    rest_client,
    rss_bytes,
    run_pool,
    wait_until,
)
from informers import (  # noqa: E402
    ListOptions,
    ListResult,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    strip_managed_fields,
)
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from jobflow_controller.kube.informers import VolcanoInformerFactory, default_transform  # noqa: E402
from jobflow_controller.kube.listwatch import ResourceListerWatcher  # noqa: E402
from jobflow_controller.kube.resources import JOBS  # noqa: E402

COUNT = 10_000
EVENTS = 5_000
NAMESPACE = "bench-informers"
CREATE_WORKERS = 32
TIME_LIMIT = 1200.0
CHILD_TIMEOUT = 150.0
MIB = 1024.0 * 1024.0


# -- the objects ---------------------------------------------------------------------------------


def _task(name: str, replicas: int, cpu: str, memory: str) -> dict[str, Any]:
    env = [{"name": "DATA_DIR", "value": "/data/train"}, {"name": "ROLE", "value": name}]
    resources = {"cpu": cpu, "memory": memory}
    return {
        "name": name,
        "replicas": replicas,
        "minAvailable": replicas,
        "template": {
            "metadata": {
                "labels": {"app": "trainer", "role": name},
                "annotations": {"prometheus.io/scrape": "true"},
            },
            "spec": {
                "restartPolicy": "OnFailure",
                "containers": [
                    {
                        "name": name,
                        "image": "registry.example.com/ml/trainer:v1.4.2",
                        "command": ["python", "-m", "trainer", "--role", name],
                        "env": env,
                        "resources": {"requests": resources, "limits": resources},
                    }
                ],
            },
        },
    }


def realistic_job(index: int, namespace: str, owner_uid: str) -> dict[str, Any]:
    """A Job as the JobFlow controller creates it from a template: labels, annotations, owner."""
    flow = f"pipeline-{index // 3:05d}"
    created_by = {"volcano.sh/createdByJobFlow": f"{namespace}.{flow}", "volcano.sh/createdByJobTemplate": "train"}
    return {
        "apiVersion": JOBS.group_version,
        "kind": JOBS.kind,
        "metadata": {
            "name": f"{flow}-train-{index % 3}",
            "namespace": namespace,
            "labels": {"app": "trainer", **created_by},
            "annotations": dict(created_by),
            "ownerReferences": [
                {
                    "apiVersion": "flow.volcano.sh/v1alpha1",
                    "kind": "JobFlow",
                    "name": flow,
                    "uid": owner_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "schedulerName": "volcano",
            "queue": "default",
            "minAvailable": 3,
            "maxRetry": 3,
            "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
            "plugins": {"env": [], "svc": []},
            "tasks": [_task("master", 1, "1", "2Gi"), _task("worker", 2, "2", "4Gi")],
        },
    }


def running_status(stamp: str, running: int = 3) -> dict[str, Any]:
    """The status Volcano's job controller writes for a running two-task Job."""
    return {
        "status": {
            "state": {"phase": "Running", "lastTransitionTime": stamp},
            "minAvailable": 3,
            "pending": 0,
            "running": running,
            "succeeded": 0,
            "failed": 0,
            "version": 1,
            "retryCount": 0,
            "taskStatusCount": {"master": {"phase": {"Running": 1}}, "worker": {"phase": {"Running": 2}}},
            "conditions": [
                {"status": "Pending", "lastTransitionTime": stamp},
                {"status": "Running", "lastTransitionTime": stamp},
            ],
        }
    }


def _compact_len(obj: Any) -> int:
    return len(json.dumps(obj, separators=(",", ":")).encode())


# -- parent: the cluster side ----------------------------------------------------------------------


def create_jobs(rest: Any, names_out: list[str], apiserver_pid: int) -> dict[str, Any]:
    owner_uid = str(uuid.uuid4())
    stamp = "2026-01-01T10:00:00Z"

    def create(index: int) -> str:
        job = realistic_job(index, NAMESPACE, owner_uid)
        name: str = job["metadata"]["name"]
        rest.request("POST", JOBS.path(NAMESPACE), query={"fieldManager": "jobflow-controller"}, body=job)
        rest.request(
            "PATCH",
            JOBS.path(NAMESPACE, name, "status"),
            query={"fieldManager": "vc-controller-manager"},
            body=running_status(stamp),
            content_type="application/merge-patch+json",
        )
        return name

    started = time.monotonic()
    cpu_self, cpu_apiserver = cpu_seconds(), cpu_seconds(apiserver_pid)
    names_out.extend(run_pool(create, list(range(COUNT)), CREATE_WORKERS, "create jobs", timeout=900.0))
    seconds = time.monotonic() - started
    cpu_self, cpu_apiserver = cpu_seconds() - cpu_self, cpu_seconds(apiserver_pid) - cpu_apiserver
    log(f"created {COUNT} jobs in {seconds:.1f}s ({COUNT / seconds:.0f}/s)")
    return {
        "count": COUNT,
        "requests_per_job": "POST (fieldManager=jobflow-controller) + status merge PATCH (vc-controller-manager)",
        "threads": CREATE_WORKERS,
        "seconds": round(seconds, 1),
        "jobs_per_s": round(COUNT / seconds, 1),
        "cpu_seconds": {"benchmark_client": round(cpu_self, 1), "kube_apiserver": round(cpu_apiserver, 1)},
    }


def object_sizes(clientset: Clientset, name: str) -> dict[str, Any]:
    job = clientset.jobs(NAMESPACE).get(name)
    stripped = strip_managed_fields(job)
    managed = job["metadata"].get("managedFields") or []
    return {
        "json_bytes_with_managed_fields": _compact_len(job),
        "json_bytes_without_managed_fields": _compact_len(stripped),
        "json_bytes_of_managed_fields": _compact_len(managed),
        "managed_fields_entries": [
            "/".join(str(m.get(k, "")) for k in ("manager", "operation", "subresource")) for m in managed
        ],
        "json_bytes_by_part": {
            "metadata_without_managed_fields": _compact_len(stripped["metadata"]),
            "spec": _compact_len(job.get("spec")),
            "status": _compact_len(job.get("status")),
        },
    }


def patch_statuses(rest: Any, names: list[str]) -> dict[str, Any]:
    """Merge-patch ``running`` and the transition time of each Job's status: one MODIFIED event each."""
    stamp = "2026-01-01T11:00:00Z"

    def patch(name: str) -> None:
        rest.request(
            "PATCH",
            JOBS.path(NAMESPACE, name, "status"),
            query={"fieldManager": "vc-controller-manager"},
            body=running_status(stamp, running=2),
            content_type="application/merge-patch+json",
        )

    started_wall = time.time()
    started = time.monotonic()
    run_pool(patch, names, CREATE_WORKERS, "patch statuses", timeout=300.0)
    seconds = time.monotonic() - started
    return {"started_wall": started_wall, "finished_wall": started_wall + seconds, "seconds": seconds}


class Child:
    """One ``--child`` variant in its own process: stdout lines are its protocol, stderr its log."""

    def __init__(self, variant: str, kubeconfig: Path) -> None:
        self.variant = variant
        args = [sys.executable, str(Path(__file__).resolve()), "--child", variant, "--kubeconfig", str(kubeconfig)]
        args += ["--count", str(COUNT), "--events", str(EVENTS)]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, name=f"child-{variant}", daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def expect(self, prefix: str, timeout: float) -> str:
        """The rest of the next line starting with ``prefix``; a BenchError on exit or timeout."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                raise BenchError(f"child {self.variant}: no {prefix!r} line within {timeout:.0f}s") from None
            if line is None:
                code = self.proc.wait()
                raise BenchError(f"child {self.variant} exited with code {code} before printing {prefix!r}")
            if line.startswith(prefix):
                return line[len(prefix) :]

    def result(self, timeout: float) -> dict[str, Any]:
        payload: dict[str, Any] = json.loads(self.expect("RESULT ", timeout))
        self.proc.wait(timeout=30)
        return payload

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run_sync_child(variant: str, kubeconfig: Path, watchdog: Watchdog) -> dict[str, Any]:
    log(f"child {variant}: starting")
    child = Child(variant, kubeconfig)
    watchdog.on_timeout(child.kill)
    result = child.result(CHILD_TIMEOUT)
    log(f"child {variant}: done, {result['rss_bytes_per_object']} B RSS per object")
    return result


def run_watch_child(kubeconfig: Path, rest: Any, names: list[str], watchdog: Watchdog) -> dict[str, Any]:
    log("child watch: starting")
    child = Child("watch", kubeconfig)
    watchdog.on_timeout(child.kill)
    child.expect("READY", CHILD_TIMEOUT)
    log(f"child watch: synced; patching the status of {EVENTS} jobs")
    writes = patch_statuses(rest, names[:EVENTS])
    result = child.result(CHILD_TIMEOUT)
    live = result["live"]
    live["writer_seconds"] = round(writes["seconds"], 2)
    live["writer_patches_per_s"] = round(EVENTS / writes["seconds"])
    live["last_event_after_last_write_ms"] = round((live.pop("last_receipt_wall") - writes["finished_wall"]) * 1e3, 1)
    live["first_event_after_first_write_ms"] = round((live.pop("first_receipt_wall") - writes["started_wall"]) * 1e3, 1)
    log(f"child watch: live {live['events_per_s']}/s, replay {result['replay']['events_per_s']}/s")
    return result


# -- child: one informer variant -------------------------------------------------------------------


class _Counter:
    """A handler that counts adds and updates and remembers when the first and last update came."""

    def __init__(self) -> None:
        self.adds = 0
        self.updates = 0
        self.last_add = 0.0
        self.first_update_wall = 0.0
        self.last_update_wall = 0.0

    def on_add(self, obj: Any) -> None:
        self.adds += 1
        self.last_add = time.monotonic()

    def on_update(self, old: Any, new: Any) -> None:
        now = time.time()
        if not self.updates:
            self.first_update_wall = now
        self.updates += 1
        self.last_update_wall = now

    def funcs(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(add_func=self.on_add, update_func=self.on_update)


class _ListAtRevision:
    """A ListerWatcher whose first list reads exactly ``revision`` (from etcd), then is ordinary.

    Its informer then watches from ``revision`` and so is handed every change made since, in one burst.
    """

    def __init__(self, inner: ResourceListerWatcher, revision: str) -> None:
        self.inner = inner
        self.revision = revision
        self._first = True

    def list(self, options: ListOptions) -> ListResult:
        if self._first and not options.continue_token:
            self._first = False
            options = ListOptions(resource_version=self.revision, resource_version_match="Exact", limit=options.limit)
        return self.inner.list(options)

    def watch(self, options: ListOptions) -> Any:
        return self.inner.watch(options)


def _start(informer: SharedIndexInformer, stop: threading.Event) -> None:
    threading.Thread(target=informer.run, args=(stop,), name=f"informer-{informer.name}", daemon=True).start()


def _cache_report(informer: SharedIndexInformer) -> dict[str, Any]:
    objects = informer.get_indexer().list()
    one = objects[len(objects) // 2]
    metadata = one["metadata"]
    parts = {
        "metadata.managedFields": deep_sizeof(metadata.get("managedFields", [])),
        "metadata_rest": deep_sizeof({k: v for k, v in metadata.items() if k != "managedFields"}),
        "spec": deep_sizeof(one.get("spec")),
        "status": deep_sizeof(one.get("status")),
    }
    by_type: dict[str, dict[str, int]] = {}
    seen: set[int] = set()
    stack: list[Any] = [one]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        entry = by_type.setdefault(type(item).__name__, {"count": 0, "bytes": 0})
        entry["count"] += 1
        entry["bytes"] += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    shared: set[int] = set()
    total = sum(deep_sizeof(obj, shared) for obj in objects)
    # The store's own dict of keys and its namespace index, objects excluded (already in `shared`).
    storage = getattr(informer.get_indexer(), "_storage", None)
    store_overhead = 0
    if storage is not None:
        store_overhead = deep_sizeof(getattr(storage, "_items", {}), shared) + deep_sizeof(
            getattr(storage, "_indices", {}), shared
        )
    return {
        "cached_objects": len(objects),
        "one_object_deep_sizeof_bytes": deep_sizeof(one),
        "one_object_deep_sizeof_by_part": parts,
        "one_object_deep_sizeof_by_type": dict(sorted(by_type.items(), key=lambda kv: -kv[1]["bytes"])),
        "one_object_json_bytes": _compact_len(one),
        "cache_deep_sizeof_bytes_per_object": round(total / len(objects)),
        "store_keys_and_index_bytes_per_object": round(store_overhead / len(objects)),
    }


class _Memory:
    """RSS, pymalloc and CPU readings around one measured step of a child."""

    def __init__(self) -> None:
        gc.collect()
        self.rss = rss_bytes()
        self.pymalloc = pymalloc_bytes()
        self.cpu = cpu_seconds()

    def report(self, objects: int) -> dict[str, Any]:
        cpu = cpu_seconds() - self.cpu
        gc.collect()
        rss = rss_bytes()
        heap = pymalloc_bytes()
        return {
            "cpu_seconds": round(cpu, 2),
            "rss_baseline_mib": round(self.rss / MIB, 1),
            "rss_after_mib": round(rss / MIB, 1),
            "rss_peak_mib": round(proc_status_kib("self", "VmHWM") / 1024.0, 1),
            "rss_bytes_per_object": round((rss - self.rss) / objects),
            "pymalloc_bytes_per_object": {
                key: round((heap.get(key, 0) - self.pymalloc.get(key, 0)) / objects)
                for key in ("arenas", "allocated_blocks", "available_blocks", "unused_pools")
            },
        }


def child_raw_list(lw: ResourceListerWatcher, first_rv: str = "0", variant: str = "raw_list") -> dict[str, Any]:
    """The reflector's first LIST (RV "0", pages of 500) through the REST layer, items kept, no informer.

    With ``first_rv`` "" (``raw_list_consistent_pages``) it is the paginated consistent LIST the
    API server does honour ``limit`` for: what a reflector would cost if it paged its first list.
    """
    memory = _Memory()
    started = time.monotonic()
    items: list[dict[str, Any]] = []
    pages = 0
    token: str | None = None
    while True:
        page = lw.list(ListOptions(resource_version=None if token else first_rv, limit=500, continue_token=token))
        pages += 1
        items.extend(page.items)
        token = page.continue_token
        if not token:
            break
    seconds = time.monotonic() - started
    return {
        "variant": variant,
        "objects": len(items),
        "pages": pages,
        "list_seconds": round(seconds, 2),
        "objects_per_s": round(len(items) / seconds),
        **memory.report(len(items)),
    }


PRODUCT_VARIANTS = ("sync_product", "watch")


def _new_informer(variant: str, lw: ResourceListerWatcher) -> SharedIndexInformer:
    """The product's Job informer for the product variants, else a bare one that LISTs."""
    if variant in PRODUCT_VARIANTS:
        factory = VolcanoInformerFactory(Clientset(lw.client), namespace=NAMESPACE)
        return factory.jobs().informer()
    transform = None if variant == "sync_plain" else strip_managed_fields
    return SharedIndexInformer(lw, 0.0, transform=transform, name="jobs", use_watch_list=False)


def child_sync(variant: str, lw: ResourceListerWatcher, stop: threading.Event) -> tuple[dict[str, Any], Any]:
    """Run one informer until synced and every add handled; report time and memory."""
    counter = _Counter()
    memory = _Memory()
    informer = _new_informer(variant, lw)
    informer.add_event_handler(counter.funcs())
    started = time.monotonic()
    _start(informer, stop)
    wait_until(informer.has_synced, CHILD_TIMEOUT, f"{variant}: has_synced")
    synced = time.monotonic()
    wait_until(lambda: counter.adds >= COUNT, CHILD_TIMEOUT, f"{variant}: {COUNT} adds at the handler")
    objects = len(informer.get_indexer().list())
    result: dict[str, Any] = {
        "variant": variant,
        "transform": {"sync_plain": None, "sync_strip_managed_fields": "strip_managed_fields"}.get(
            variant, "strip_managed_fields + Interner"
        ),
        "initial_state": "watch-list" if variant in PRODUCT_VARIANTS else "LIST",
        "objects": objects,
        "sync_seconds": round(synced - started, 2),
        "all_adds_handled_seconds": round(counter.last_add - started, 2),
        "objects_per_s": round(objects / (synced - started)),
        **memory.report(objects),
    }
    return result, (informer, counter)


def child_watch(lw: ResourceListerWatcher, stop: threading.Event) -> dict[str, Any]:
    result, (informer, counter) = child_sync("watch", lw, stop)
    # Live: the parent writes EVENTS status patches now; count them as they arrive.
    revision = informer.last_sync_resource_version()
    print(f"READY {revision}", flush=True)
    wait_until(lambda: counter.updates >= EVENTS, CHILD_TIMEOUT, f"watch: {EVENTS} live updates")
    span = counter.last_update_wall - counter.first_update_wall
    result["live"] = {
        "events": counter.updates,
        "receive_seconds": round(span, 2),
        "events_per_s": round((counter.updates - 1) / span) if span > 0 else None,
        "first_receipt_wall": counter.first_update_wall,
        "last_receipt_wall": counter.last_update_wall,
    }
    # Objects decoded one by one from watch events share no dictionary keys with each other.
    objects = informer.get_indexer().list()
    updated = [o for o in objects if (o.get("status") or {}).get("running") == 2]
    listed = [o for o in objects if (o.get("status") or {}).get("running") != 2]
    for label, group in (("from_watch_events", updated), ("from_initial_list", listed)):
        seen: set[int] = set()
        total = sum(deep_sizeof(o, seen) for o in group)
        result["live"][f"deep_sizeof_bytes_per_object_{label}"] = round(total / len(group)) if group else None
    stop.set()

    # Replay: list at the revision from before the writes; the watch then hands over all of them at once.
    replay_stop = threading.Event()
    replay_counter = _Counter()
    replay = SharedIndexInformer(_ListAtRevision(lw, revision), 0.0, transform=default_transform(), name="jobs-replay")
    replay.add_event_handler(replay_counter.funcs())
    started = time.monotonic()
    _start(replay, replay_stop)
    wait_until(replay.has_synced, CHILD_TIMEOUT, "replay: has_synced")
    listed_seconds = time.monotonic() - started
    wait_until(
        lambda: replay_counter.updates >= EVENTS, CHILD_TIMEOUT, f"replay: {EVENTS} updates from the watch cache"
    )
    span = replay_counter.last_update_wall - replay_counter.first_update_wall
    result["replay"] = {
        "events": replay_counter.updates,
        "list_at_revision_seconds": round(listed_seconds, 2),
        "receive_seconds": round(span, 3),
        "events_per_s": round((replay_counter.updates - 1) / span) if span > 0 else None,
    }
    replay_stop.set()
    return result


def child_main(variant: str, kubeconfig: str) -> None:
    rest = rest_client(kubeconfig, agent=f"bench-informers-{variant}")
    lw = ResourceListerWatcher(rest, JOBS, NAMESPACE)
    rest.get(JOBS.path(NAMESPACE), {"limit": 1})  # TLS and the connection pool warm before the baseline
    stop = threading.Event()
    if variant == "raw_list":
        result = child_raw_list(lw)
    elif variant == "raw_list_consistent_pages":
        result = child_raw_list(lw, "", variant)
    elif variant == "watch":
        result = child_watch(lw, stop)
    else:
        result, (informer, _) = child_sync(variant, lw, stop)
        result.update(_cache_report(informer))
    stop.set()
    print("RESULT " + json.dumps(result), flush=True)


# -- main ------------------------------------------------------------------------------------------


def main() -> None:
    global COUNT, EVENTS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--child",
        choices=[
            "raw_list",
            "raw_list_consistent_pages",
            "sync_plain",
            "sync_strip_managed_fields",
            "sync_product",
            "watch",
        ],
    )
    parser.add_argument("--kubeconfig")
    parser.add_argument("--count", type=int, default=COUNT, help="Jobs to create and sync")
    parser.add_argument("--events", type=int, default=EVENTS, help="status patches for the watch measurement")
    args = parser.parse_args()
    COUNT, EVENTS = args.count, min(args.events, args.count)
    if args.child:
        try:
            child_main(args.child, args.kubeconfig)
        except BenchError as err:
            log(f"child {args.child}: ERROR: {err}")
            sys.exit(1)
        os._exit(0)  # informer threads are daemons; do not wait for their watches to time out

    watchdog = Watchdog(TIME_LIMIT, "bench/informers.py")
    result: dict[str, Any] = {"benchmark": "informers", **machine()}
    try:
        with control_plane(watchdog, controller_manager=False) as plane:
            rest = rest_client(plane.kubeconfig_path, agent="bench-informers")
            clientset = Clientset(rest)
            create_namespace(clientset, NAMESPACE)
            names: list[str] = []
            apiserver_pid = plane.processes["kube-apiserver"].pid
            result["setup"] = create_jobs(rest, names, apiserver_pid)
            result["object"] = object_sizes(clientset, names[0])
            variants = (
                "raw_list",
                "raw_list_consistent_pages",
                "sync_plain",
                "sync_strip_managed_fields",
                "sync_product",
            )
            for variant in variants:
                apiserver_cpu = cpu_seconds(apiserver_pid)
                result[variant] = run_sync_child(variant, plane.kubeconfig_path, watchdog)
                # What the API server spent serving it (the child's start and warm-up GET included).
                result[variant]["apiserver_cpu_seconds"] = round(cpu_seconds(apiserver_pid) - apiserver_cpu, 2)
            try:
                result["watch"] = run_watch_child(plane.kubeconfig_path, rest, names, watchdog)
            except BenchError as err:
                # The sync figures stand on their own; a watch stage that fails (on a loaded
                # machine the replay can outlast the watch cache's history) is reported, not fatal.
                log(f"child watch: ERROR: {err}")
                result["watch"] = {"error": str(err)}
            rest.close()
    except BenchError as err:
        log(f"ERROR: {err}")
        sys.exit(1)
    finally:
        watchdog.cancel()
    raw, plain, strip = result["raw_list"], result["sync_plain"], result["sync_strip_managed_fields"]
    product = result["sync_product"]

    def per_variant(key: str) -> dict[str, Any]:
        return {
            "raw_list": raw.get(key),
            "raw_list_consistent_pages": result["raw_list_consistent_pages"].get(key),
            "plain": plain.get(key),
            "strip_managed_fields": strip.get(key),
            "product": product.get(key),
        }

    result["summary"] = {
        "objects": COUNT,
        "json_bytes_per_object": {
            "with_managed_fields": result["object"]["json_bytes_with_managed_fields"],
            "without_managed_fields": result["object"]["json_bytes_without_managed_fields"],
        },
        "initial_sync_seconds": {
            "raw_list": raw["list_seconds"],
            "raw_list_consistent_pages": result["raw_list_consistent_pages"]["list_seconds"],
            "plain": plain["sync_seconds"],
            "strip_managed_fields": strip["sync_seconds"],
            "product": product["sync_seconds"],
        },
        "rss_bytes_per_object": per_variant("rss_bytes_per_object"),
        "pymalloc_live_bytes_per_object": {
            "raw_list": raw["pymalloc_bytes_per_object"]["allocated_blocks"],
            "plain": plain["pymalloc_bytes_per_object"]["allocated_blocks"],
            "strip_managed_fields": strip["pymalloc_bytes_per_object"]["allocated_blocks"],
            "product": product["pymalloc_bytes_per_object"]["allocated_blocks"],
        },
        "deep_sizeof_bytes_per_cached_object": {
            "plain": plain["cache_deep_sizeof_bytes_per_object"],
            "strip_managed_fields": strip["cache_deep_sizeof_bytes_per_object"],
            "product": product["cache_deep_sizeof_bytes_per_object"],
        },
        "rss_peak_mib": per_variant("rss_peak_mib"),
        "watch_events_per_s": {
            "live_while_writing": result["watch"].get("live", {}).get("events_per_s"),
            "writer_patches_per_s": result["watch"].get("live", {}).get("writer_patches_per_s"),
            "replay_burst": result["watch"].get("replay", {}).get("events_per_s"),
        },
        "load_average_at_end": [round(v, 2) for v in os.getloadavg()],
        "targets": _targets(product),
    }
    emit(result)


def _targets(product: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Issue 11's memory and sync targets against the product's figures."""

    def row(value: float, target: float) -> dict[str, Any]:
        return {"value": value, "target": target, "pass": value <= target}

    return {
        "rss_bytes_per_cached_job": row(product["rss_bytes_per_object"], 8192),
        "peak_over_steady_rss": row(round(product["rss_peak_mib"] / product["rss_after_mib"], 2), 1.3),
        # The same without the process's own ~50 MiB (interpreter, kubernetes client): the cache alone.
        "peak_over_steady_rss_above_baseline": row(
            round(
                (product["rss_peak_mib"] - product["rss_baseline_mib"])
                / max(0.1, product["rss_after_mib"] - product["rss_baseline_mib"]),
                2,
            ),
            1.3,
        ),
        "initial_sync_seconds": row(product["sync_seconds"], 2.0),
    }


if __name__ == "__main__":
    main()
