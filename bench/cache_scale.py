"""Does a JobFlow's sync cost more CPU when the caches hold more? In-process, 300 against 3,000.

Why: at 3,000 JobFlows in flight the controller spent 1.22x the CPU per JobFlow it spends at 300
(docs/performance.md, issue 25). A cost that grows with the cache (a lister scan, the cyclic
garbage collector walking a larger heap) shows here without the control plane, the REST path or
the machine's load (CPU is this thread's, ``time.thread_time``).

No control plane: the JobFlow controller on its real informers' indexers, filled directly, and a
fake API that answers the writes (tests/unit/jobflow/jobflow_fakes.py, as bench/sync_scale.py).
Per size N: N three-step chains (a Completed, b Running, c waiting) and their 2N Jobs in the caches,
then one sync of each of 300 of them (the same 300 at every size), ``--rounds`` times; the CPU per
sync (median of the rounds) and the garbage collector's passes and CPU in those syncs, with the
collector as it is and with ``gc.freeze()`` after the caches are filled. One JSON document.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(_ROOT))
sys.path.insert(0, str(_ROOT / "tests" / "unit" / "jobflow"))

from jobflow_fakes import job, job_flow, job_template, new_fake_controller  # noqa: E402

from jobflow_controller.apis import Action, Event, FlowRequest  # noqa: E402

SIZES = (300, 3000)
SAMPLE = 300
TEMPLATE_SPEC = {"tasks": [{"name": "main", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}]}
FLOWS = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}, {"name": "c", "dependsOn": {"targets": ["b"]}}]


class GcMeter:
    """The collector's passes and their CPU in this thread, while `on`."""

    def __init__(self) -> None:
        self.passes = [0, 0, 0]
        self.cpu = 0.0
        self._t0 = 0.0
        self.on = False

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._t0 = time.thread_time()
        else:
            self.passes[info["generation"]] += 1
            self.cpu += time.thread_time() - self._t0


def run(size: int, freeze: bool, rounds: int) -> dict[str, Any]:
    controller, _, _ = new_fake_controller()
    flows_index = controller.job_flow_informer.get_indexer()
    jobs = controller.job_informer.get_indexer()
    templates = controller.job_template_informer.get_indexer()
    for step in "abc":
        templates.add(job_template(step, spec=TEMPLATE_SPEC))
    for i in range(size):
        name = f"jf-{i:05d}"
        flows_index.add(job_flow(name, flows=FLOWS, uid=f"uid-{i}", phase="Running"))
        jobs.add(job(f"{name}-a", flow=name, owner_uid=f"uid-{i}", phase="Completed", created="2024-01-01T00:00:00Z"))
        jobs.add(job(f"{name}-b", flow=name, owner_uid=f"uid-{i}", phase="Running", created="2024-01-01T00:00:01Z"))
    gc.collect()
    if freeze:
        gc.freeze()
    meter = GcMeter()
    gc.callbacks.append(meter)
    per_round = []
    requests = [
        FlowRequest("default", f"jf-{i:05d}", action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)
        for i in range(0, size, max(1, size // SAMPLE))
    ][:SAMPLE]
    try:
        for _ in range(rounds):
            meter.on = True
            start = time.thread_time()
            for request in requests:
                controller.sync.handle_job_flow(request)
            per_round.append((time.thread_time() - start) / len(requests))
            meter.on = False
    finally:
        gc.callbacks.remove(meter)
        if freeze:
            gc.unfreeze()
    return {
        "jobflows_cached": size,
        "jobs_cached": 2 * size,
        "gc_freeze": freeze,
        "tracked_objects": len(gc.get_objects()),
        "cpu_us_per_sync": round(statistics.median(per_round) * 1e6, 1),
        "cpu_us_per_sync_rounds": [round(v * 1e6, 1) for v in per_round],
        "gc_passes_by_generation": meter.passes,
        "gc_cpu_share": round(meter.cpu / sum(per_round) / len(requests), 3) if per_round else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    result: dict[str, Any] = {"benchmark": "cache_scale", "load_average_at_start": list(os.getloadavg()), "runs": []}
    for freeze in (False, True):
        for size in (int(s) for s in args.sizes.split(",")):
            row = run(size, freeze, args.rounds)
            print(f"{row}", file=sys.stderr)
            result["runs"].append(row)
    by = {(r["gc_freeze"], r["jobflows_cached"]): r["cpu_us_per_sync"] for r in result["runs"]}
    sizes = [int(s) for s in args.sizes.split(",")]
    result["largest_over_smallest"] = {
        ("frozen" if f else "default"): round(by[(f, sizes[-1])] / by[(f, sizes[0])], 2) for f in (False, True)
    }
    result["load_average_at_end"] = list(os.getloadavg())
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
