"""The JobFlow controller's sync CPU per JobFlow, in-process: 300 JobFlows driven to Succeed.

The workload of bench/e2e_flows.py (200 three-step chains and 100 diamonds, JobTemplates ``a``..``d``)
without a control plane or threads: the controller runs on its real informers' indexers (filled
directly) and the unit tests' fake API (tests/unit/jobflow/jobflow_fakes.py). Each round syncs every
JobFlow not yet Succeed (``JobFlowController.sync.handle_job_flow``), then moves each Job one phase on
("" -> Pending -> Running -> Completed), until every JobFlow is Succeed. Only the syncs' CPU
(``time.process_time``) is counted: it is what a change to the planner changes, and unlike
bench/e2e_flows.py's process CPU it can be measured on a loaded machine. ``--repeat`` runs the whole
workload that many times (median reported). Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import logging
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

import structlog  # noqa: E402
from jobflow_fakes import job, job_flow, job_template, new_fake_controller  # noqa: E402

from jobflow_controller.apis import Action, Event, FlowRequest  # noqa: E402

CHAINS, DIAMONDS = 200, 100
CREATED = "2024-01-01T00:00:00Z"
NEXT = {"": "Pending", "Pending": "Running", "Running": "Completed"}
CHAIN = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}, {"name": "c", "dependsOn": {"targets": ["b"]}}]
DIAMOND = [
    {"name": "a"},
    {"name": "b", "dependsOn": {"targets": ["a"]}},
    {"name": "c", "dependsOn": {"targets": ["a"]}},
    {"name": "d", "dependsOn": {"targets": ["b", "c"]}},
]


def run_once() -> dict[str, Any]:
    controller, clientset, _ = new_fake_controller()
    flows_of = {f"c{i}": CHAIN for i in range(CHAINS)} | {f"d{i}": DIAMOND for i in range(DIAMONDS)}
    for name in "abcd":
        controller.job_template_informer.get_indexer().add(job_template(name, spec={"tasks": [{"name": "m"}]}))
    for name, flows in flows_of.items():
        controller.job_flow_informer.get_indexer().add(job_flow(name, flows=flows, uid=f"uid-{name}"))
    jobs, phases = controller.job_informer.get_indexer(), dict[str, str]()
    cpu, syncs, rounds = 0.0, 0, 0
    while rounds < 40:
        left = [n for n in flows_of if _phase(controller, n) != "Succeed"]
        if not left:
            break
        rounds += 1
        for name in left:
            req = FlowRequest("default", name, action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)
            start = time.process_time()
            controller.sync.handle_job_flow(req)
            cpu += time.process_time() - start
            syncs += 1
        for plural, _ns, job_name in list(clientset.api.objects):
            if plural != "jobs":
                continue
            flow = job_name.rsplit("-", 1)[0]
            phases[job_name] = "" if job_name not in phases else NEXT.get(phases[job_name], phases[job_name])
            created = "2024-01-01T00:00:00Z"
            obj = job(
                job_name,
                flow=flow,
                owner_uid=f"uid-{flow}",
                phase=phases[job_name],
                created=created,
                rv=str(rounds + 1),
            )
            jobs.update(obj)
    return {"rounds": rounds, "syncs": syncs, "jobs": len(phases), "cpu_s": cpu}


def _phase(controller: Any, name: str) -> str:
    cached = controller.job_flow_lister.job_flows("default").get(name)
    return str(((controller.status_writer.newest(cached).get("status") or {}).get("state") or {}).get("phase") or "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    runs = [run_once() for _ in range(args.repeat)]
    per_job_flow = [r["cpu_s"] / (CHAINS + DIAMONDS) * 1000 for r in runs]
    print(
        json.dumps(
            {
                "benchmark": "sync_cpu",
                "load_average_at_start": list(os.getloadavg()),
                "jobflows": CHAINS + DIAMONDS,
                "runs": [{**r, "cpu_s": round(r["cpu_s"], 3)} for r in runs],
                "sync_cpu_ms_per_jobflow": [round(x, 2) for x in per_job_flow],
                "median_sync_cpu_ms_per_jobflow": round(statistics.median(per_job_flow), 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
