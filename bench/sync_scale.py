"""How one JobFlow's sync grows with its flow count: the whole sync, in-process, at 500 to 5,000 flows.

No control plane: the JobFlow controller runs on its real informers' indexers (filled directly) and
a fake API that answers the status write, as the unit tests build it
(tests/unit/jobflow/jobflow_fakes.py). Two shapes per size, each synced ``REPEAT`` times:

* ``chain``: flow i depends on flow i-1; the first half of the Jobs exist and are Completed, the next
  one is Running, the rest wait (each waiting flow has a `patch`, so the patch check runs too);
* ``fan_in``: one last flow depends on every other; all others exist, half Completed, half Running.

Reports the median and max seconds per sync and their ratio to the smallest size's (a linear sync
keeps seconds-per-flow flat). Then ``validation_once_per_generation``: the CPU of a sync (the
``chain`` shape, median of ``VALIDATION_REPEAT`` syncs after the first) with the JobFlow's
validation remembered per (uid, generation), as the controller runs, and with it forgotten before
each sync (validated every time, as before): the difference is the CPU that memory saves per sync.
Prints one JSON document.
"""

from __future__ import annotations

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

SIZES = (500, 1000, 5000)
REPEAT = 3
PATCH = {"jobSpec": {"tasks": [{"name": "main", "replicas": 2}]}}
TEMPLATE_SPEC = {"tasks": [{"name": "main", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}]}


def chain(n: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
    flows: list[dict[str, Any]] = [{"name": "f0"}]
    for i in range(1, n):
        flows.append({"name": f"f{i}", "dependsOn": {"targets": [f"f{i - 1}"]}, "patch": PATCH})
    phases = {f"f{i}": "Completed" for i in range(n // 2)} | {f"f{n // 2}": "Running"}
    return flows, phases


def fan_in(n: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
    flows: list[dict[str, Any]] = [{"name": f"f{i}"} for i in range(n - 1)]
    flows.append({"name": "last", "dependsOn": {"targets": [f"f{i}" for i in range(n - 1)]}})
    return flows, {f"f{i}": ("Completed" if i % 2 else "Running") for i in range(n - 1)}


def time_syncs(flows: list[dict[str, Any]], phases: dict[str, str]) -> list[float]:
    controller, _, _ = new_fake_controller()
    obj = job_flow("big", flows=flows, uid="uid-big", phase="Running")
    controller.job_flow_informer.get_indexer().add(obj)
    templates = controller.job_template_informer.get_indexer()
    jobs = controller.job_informer.get_indexer()
    for i, flow in enumerate(flows):
        templates.add(job_template(flow["name"], spec=TEMPLATE_SPEC))
        phase = phases.get(flow["name"])
        if phase is not None:
            created = f"2024-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
            jobs.add(job(f"big-{flow['name']}", flow="big", owner_uid="uid-big", phase=phase, created=created))
    req = FlowRequest("default", "big", action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)
    out = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        controller.sync.handle_job_flow(req)
        out.append(time.perf_counter() - start)
    return out


VALIDATION_REPEAT = 7


def validation_saving(n: int) -> dict[str, Any]:
    """CPU seconds per sync with the validation remembered, and with it done at every sync."""
    controller, _, _ = new_fake_controller()
    flows, phases = chain(n)
    obj = job_flow("big", flows=flows, uid="uid-big", phase="Running")
    controller.job_flow_informer.get_indexer().add(obj)
    for i, flow in enumerate(flows):
        controller.job_template_informer.get_indexer().add(job_template(flow["name"], spec=TEMPLATE_SPEC))
        phase = phases.get(flow["name"])
        if phase is not None:
            created = f"2024-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
            job_obj = job(f"big-{flow['name']}", flow="big", owner_uid="uid-big", phase=phase, created=created)
            controller.job_informer.get_indexer().add(job_obj)
    req = FlowRequest("default", "big", action=Action.SYNC_JOB_FLOW, event=Event.OUT_OF_SYNC)
    controller.sync.handle_job_flow(req)  # the first sync validates in both cases
    cpu: dict[str, list[float]] = {"remembered": [], "every_sync": []}
    for _ in range(VALIDATION_REPEAT):
        for mode in ("remembered", "every_sync"):
            if mode == "every_sync":
                controller.sync.validated.forget_job_flow("default", "big", None)
            start = time.process_time()
            controller.sync.handle_job_flow(req)
            cpu[mode].append(time.process_time() - start)
    remembered, every = statistics.median(cpu["remembered"]), statistics.median(cpu["every_sync"])
    return {
        "flows": n,
        "cpu_per_sync_remembered_s": round(remembered, 5),
        "cpu_per_sync_validated_every_sync_s": round(every, 5),
        "cpu_saved_per_sync_s": round(every - remembered, 5),
        "saved_fraction": round((every - remembered) / every, 3) if every else 0.0,
    }


def main() -> None:
    result: dict[str, Any] = {"benchmark": "sync_scale", "load_average_at_start": list(os.getloadavg()), "shapes": {}}
    for name, shape in (("chain", chain), ("fan_in", fan_in)):
        rows = []
        for n in SIZES:
            times = time_syncs(*shape(n))
            rows.append({"flows": n, "median_s": round(statistics.median(times), 4), "max_s": round(max(times), 4)})
            print(f"{name} {n}: {rows[-1]}", file=sys.stderr)
        base = rows[0]["median_s"] / rows[0]["flows"]
        for row in rows:
            row["per_flow_vs_smallest"] = round(row["median_s"] / row["flows"] / base, 2)
        result["shapes"][name] = rows
    result["validation_once_per_generation"] = [validation_saving(n) for n in (50, *SIZES)]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
