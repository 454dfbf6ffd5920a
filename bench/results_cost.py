"""What results cost (docs/results.md): API requests, memory and sync CPU per JobFlow, with results and without.

In-process, as bench/sync_cpu.py: the controller on its real informers' indexers (filled directly) and
the unit tests' fake API (tests/unit/jobflow/jobflow_fakes.py), which records every request. 200
three-step chains (a -> b -> c) are driven to Succeed twice: once as upstream writes them, once with each
flow declaring two results (each Job's pod reports them, ~40 bytes each) and b and c reading a's.
Each round syncs every JobFlow not yet Succeed, then moves each Job one phase on ("" -> Pending ->
Running -> Completed; a Completed Job's pod appears as it ends). Reported per JobFlow: the requests by
resource and verb, the memory the process keeps once every JobFlow Succeeded (tracemalloc, after the
fake API's own records are dropped: the controller's state and its informers' caches), the size of a
JobFlow's status, and the syncs' CPU. A JobFlow without results must send no request about pods.
Prints one JSON document.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import logging
import os
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(_ROOT))
sys.path.insert(0, str(_ROOT / "tests" / "unit" / "jobflow"))

import structlog  # noqa: E402
from jobflow_fakes import FakeClientset, FakeResourceClient, job_flow, job_template, new_fake_controller  # noqa: E402

from jobflow_controller.apis import Action, Event, FlowRequest  # noqa: E402
from jobflow_controller.kube.resources import PODS  # noqa: E402

NEXT = {"": "Pending", "Pending": "Running", "Running": "Completed"}
CHAIN = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}, {"name": "c", "dependsOn": {"targets": ["b"]}}]
NAMES = ["accuracy", "model"]
ARGS = ["--acc=$(flows.a.results.accuracy)", "--model=$(flows.a.results.model)"]


class PodsClient(FakeResourceClient):
    """The fake API's pods: a LIST by name is a lookup (the fake's own copies the whole namespace, which
    would be the benchmark's cost, not the controller's)."""

    def list(self, label_selector: str | None = None, field_selector: str | None = None) -> list[dict[str, Any]]:
        name = (field_selector or "").removeprefix("metadata.name=")
        self._record("list", name)
        found = self.api.objects.get(self._key(name))
        return [copy.deepcopy(found)] if found is not None else []


class Clientset(FakeClientset):
    """The fake API with pods (the results reader's LIST by name)."""

    def pods(self, namespace: str | None = None) -> FakeResourceClient:
        return PodsClient(self.api, PODS, namespace)


def flows(with_results: bool) -> list[dict[str, Any]]:
    return [{**f, "results": {"names": NAMES}} for f in CHAIN] if with_results else CHAIN


def _pod(job_name: str) -> dict[str, Any]:
    message = json.dumps({"accuracy": "0.9312", "model": f"s3://models/{job_name}/final"})
    owner = {"kind": "Job", "uid": f"uid-{job_name}", "controller": True}
    terminated = {"name": "main", "state": {"terminated": {"exitCode": 0, "message": message}}}
    return {
        "metadata": {"name": f"{job_name}-m-0", "namespace": "default", "ownerReferences": [owner]},
        "status": {"phase": "Succeeded", "containerStatuses": [terminated]},
    }


def _phase(controller: Any, name: str) -> str:
    cached = controller.job_flow_lister.job_flows("default").get(name)
    return str(((controller.status_writer.newest(cached).get("status") or {}).get("state") or {}).get("phase") or "")


def _advance(controller: Any, clientset: Clientset, phases: dict[str, str], with_results: bool) -> None:
    """Each Job created one phase on; a Job that completes gets its pod (with results) first."""
    jobs = controller.job_informer.get_indexer()
    for plural, _ns, job_name in [k for k in clientset.api.objects if k[0] == "jobs"]:
        body = clientset.api.objects[(plural, _ns, job_name)]
        phases[job_name] = "" if job_name not in phases else NEXT.get(phases[job_name], phases[job_name])
        if phases[job_name] == "Completed" and with_results:
            clientset.api.objects[(PODS.plural, "default", f"{job_name}-m-0")] = _pod(job_name)
        metadata = {**body["metadata"], "uid": f"uid-{job_name}", "resourceVersion": str(len(phases))}
        metadata["creationTimestamp"] = "2024-01-01T00:00:00Z"
        jobs.update({**body, "metadata": metadata, "status": {"state": {"phase": phases[job_name]}}})


def run(count: int, with_results: bool, memory: bool) -> dict[str, Any]:
    """One pass; `memory`: under tracemalloc (which slows every allocation: its CPU figure is not kept)."""
    gc.collect()
    if memory:
        tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    clientset = Clientset()
    controller, _, _ = new_fake_controller(clientset=clientset)
    task = {"name": "m", "template": {"spec": {"containers": [{"name": "main", "image": "b", "args": ARGS}]}}}
    for name in "abc":
        controller.job_template_informer.get_indexer().add(job_template(name, spec={"tasks": [task]}))
    names = [f"c{i}" for i in range(count)]
    for name in names:
        controller.job_flow_informer.get_indexer().add(job_flow(name, flows=flows(with_results), uid=f"uid-{name}"))
    phases: dict[str, str] = {}
    cpu, rounds = 0.0, 0
    while rounds < 40:
        left = [n for n in names if _phase(controller, n) != "Succeed"]
        if not left:
            break
        rounds += 1
        for name in left:
            start = time.process_time()
            controller.sync.handle_job_flow(
                FlowRequest("default", name, action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)
            )
            cpu += time.process_time() - start
        for (plural, _ns, _name), stored in list(clientset.api.objects.items()):
            if plural == "jobflows":
                controller.job_flow_informer.get_indexer().update(stored)
        _advance(controller, clientset, phases, with_results)
    requests = Counter(f"{a.resource} {a.verb}" for a in clientset.api.actions)
    status_bytes = sum(
        len(json.dumps(o.get("status") or {})) for k, o in clientset.api.objects.items() if k[0] == "jobflows"
    )
    clientset.api.actions.clear()
    clientset.api.objects.clear()
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del controller
    if memory:
        return {"memory_kept_bytes_per_jobflow": round(kept / count)}
    return {
        "with_results": with_results,
        "jobflows": count,
        "rounds": rounds,
        "succeeded": count - len([n for n in names if phases.get(f"{n}-c") != "Completed"]),
        "requests_per_jobflow": {k: round(v / count, 2) for k, v in sorted(requests.items())},
        "pod_requests_per_jobflow": round(sum(v for k, v in requests.items() if k.startswith("pods ")) / count, 2),
        "requests_total_per_jobflow": round(sum(requests.values()) / count, 2),
        "status_bytes_per_jobflow": round(status_bytes / count),
        "sync_cpu_ms_per_jobflow": round(cpu / count * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobflows", type=int, default=200)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    without = {**run(args.jobflows, False, False), **run(args.jobflows, False, True)}
    with_results = {**run(args.jobflows, True, False), **run(args.jobflows, True, True)}
    before, after = without["requests_per_jobflow"], with_results["requests_per_jobflow"]
    extra = {k: round(after.get(k, 0) - before.get(k, 0), 2) for k in sorted({*before, *after})}
    doc = {
        "benchmark": "results_cost",
        "load_average_at_start": list(os.getloadavg()),
        "without_results": without,
        "with_results": with_results,
        "extra_requests_per_jobflow_with_results": {k: v for k, v in extra.items() if v},
        "extra_memory_bytes_per_jobflow_with_results": with_results["memory_kept_bytes_per_jobflow"]
        - without["memory_kept_bytes_per_jobflow"],
    }
    print(json.dumps(doc, indent=2))
    sys.exit(0 if without["pod_requests_per_jobflow"] == 0 and without["succeeded"] == args.jobflows else 1)


if __name__ == "__main__":
    main()
