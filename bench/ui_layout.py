"""The `kubectl jobflow ui` DAG layout: a 500-flow JobFlow (issue 24: drawn in under 2 s) and the
adversarial shape of issue 33 (item 3) at 100, 200 and 500 flows.

Prints one JSON document:
- `typical`: the layout's time in Python (median and max of 5 runs) for 10 layers of 50 flows, each
  depending on up to 3 flows of the layers before it, plus a finally flow; the edges, the crossings
  left and the drawing's mode;
- `adversarial`: flows where each depends on the previous one and on the first 99 (admissible: 500
  flows, 100 targets each at most). Each size runs in a child process with a time limit and an
  address-space limit, so the bench survives a layout that explodes; each reports its time, the
  child's peak resident memory before and after it (ru_maxrss), the drawing's mode, the dummy nodes
  placed (or needed), the edges drawn, and the size of those edges as JSON.

`--sizes 100,200` picks the adversarial sizes; `--limit-s` and `--limit-mib` the child's limits.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT))
sys.path.insert(0, str(_ROOT / "tests" / "unit" / "kubectl_jobflow"))

from test_ui_layout import adversarial_flows, five_hundred_flows  # noqa: E402

from kubectl_jobflow.ui.layout import layout  # noqa: E402

BUDGET_MS = 2000.0


def typical() -> dict[str, object]:
    names, targets = five_hundred_flows()
    times = []
    result = None
    for _ in range(5):
        start = time.perf_counter()
        result = layout(names, targets, ["notify"])
        times.append((time.perf_counter() - start) * 1000)
    assert result is not None
    return {
        "flows": 500,
        "layout_ms_median": round(statistics.median(times), 1),
        "layout_ms_max": round(max(times), 1),
        "budget_ms": BUDGET_MS,
        "edges": len(result.edges),
        "crossings": result.crossings,
        "mode": getattr(result, "mode", "layered"),
    }


def one_adversarial(flows: int) -> dict[str, object]:
    """Run in the child: one layout, its time and the process's peak resident memory."""
    names, targets = adversarial_flows(flows)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = layout(names, targets)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    drawing = [[e.source, e.target, e.points] for e in result.edges]
    return {
        "flows": flows,
        "edges_in_spec": sum(len(t) for t in targets.values()),
        "seconds": round(seconds, 3),
        "rss_before_mib": round(baseline / 1024, 1),
        "rss_peak_mib": round(peak / 1024, 1),
        "mode": getattr(result, "mode", "layered"),
        "dummies": getattr(result, "dummies", None),
        "edges_drawn": len(result.edges),
        "edge_json_kib": round(len(json.dumps(drawing)) / 1024, 1),
    }


def adversarial(flows: int, limit_s: float, limit_mib: int) -> dict[str, object]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_mib * 2**20, limit_mib * 2**20))

    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(flows)],
            capture_output=True,
            text=True,
            timeout=limit_s,
            preexec_fn=limit,  # a fresh interpreter, nothing threaded yet
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"flows": flows, "outcome": f"not finished within {limit_s:g} s (killed)"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"flows": flows, "outcome": f"failed under a {limit_mib} MiB address-space limit: {last}"}
    return {**json.loads(done.stdout), "outcome": "laid out"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,200,500")
    parser.add_argument("--limit-s", type=float, default=120.0)
    parser.add_argument("--limit-mib", type=int, default=3072)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_adversarial(args.child)))
        return 0
    doc = {
        "typical": typical(),
        "adversarial": [adversarial(int(n), args.limit_s, args.limit_mib) for n in args.sizes.split(",")],
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(doc, indent=2))
    return 0 if doc["typical"]["layout_ms_median"] < BUDGET_MS else 1  # type: ignore[operator]


if __name__ == "__main__":
    sys.exit(main())
