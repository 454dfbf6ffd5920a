"""Loaded by the controller when a benchmark puts this folder on its PYTHONPATH (``--gc-probe``).

Counts the cyclic garbage collector's passes by generation and the CPU each took, read with
``time.thread_time()`` in the thread that collects (so other processes' load does not count), and
writes them as JSON to ``$JOBFLOW_BENCH_GC_PROBE`` when the process exits. Not part of the product.
"""

import atexit
import gc
import json
import os
import time

_out = os.environ.get("JOBFLOW_BENCH_GC_PROBE")
if _out:
    _stats = {str(g): {"collections": 0, "cpu_seconds": 0.0, "collected": 0} for g in range(3)}
    _started = [0.0]

    def _callback(phase, info):
        if phase == "start":
            _started[0] = time.thread_time()
        else:
            s = _stats[str(info["generation"])]
            s["collections"] += 1
            s["cpu_seconds"] += time.thread_time() - _started[0]
            s["collected"] += info["collected"]

    def _write():
        result = {
            "by_generation": _stats,
            "cpu_seconds": round(sum(s["cpu_seconds"] for s in _stats.values()), 3),
            "process_cpu_seconds": round(time.process_time(), 3),
            "thresholds": gc.get_threshold(),
            "frozen_objects": gc.get_freeze_count(),
            "tracked_objects_at_exit": len(gc.get_objects()),
        }
        with open(_out, "w", encoding="utf-8") as f:
            json.dump(result, f)

    gc.callbacks.append(_callback)
    atexit.register(_write)
