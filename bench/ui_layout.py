"""The `kubectl jobflow ui` DAG layout of a 500-flow JobFlow (issue 24: drawn in under 2 s).

Prints one JSON document: the layout's time in Python (median and max of 5 runs) for 10 layers of
50 flows, each depending on up to 3 flows of the layers before it, plus a finally flow; the edges and
the crossings left. The browser's drawing time is measured by tests/e2e/test_e2e_ui_scale.py.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT))
sys.path.insert(0, str(_ROOT / "tests" / "unit" / "kubectl_jobflow"))

from test_ui_layout import five_hundred_flows  # noqa: E402

from kubectl_jobflow.ui.layout import layout  # noqa: E402

BUDGET_MS = 2000.0


def main() -> int:
    names, targets = five_hundred_flows()
    times = []
    result = None
    for _ in range(5):
        start = time.perf_counter()
        result = layout(names, targets, ["notify"])
        times.append((time.perf_counter() - start) * 1000)
    assert result is not None
    doc = {
        "flows": 500,
        "layout_ms_median": round(statistics.median(times), 1),
        "layout_ms_max": round(max(times), 1),
        "budget_ms": BUDGET_MS,
        "edges": len(result.edges),
        "crossings": result.crossings,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(doc, indent=2))
    return 0 if doc["layout_ms_median"] < BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
