"""On SIGUSR2, write a tracemalloc snapshot of the controller's heap to a file (off by default).

Why: RSS that creeps over an hour of churn can be a cache filling, a leak, or the allocator's
fragmentation; only snapshots of the live Python allocations taken at two times, compared, tell
which code holds the difference. `bench/soak.py --tracemalloc` takes them at minutes 15, 30 and 60.

Off unless both are set in the environment: Python's own `PYTHONTRACEMALLOC=N` (tracing from the
interpreter's start, N frames per allocation: it costs memory and CPU, so never in production) and
`JOBFLOW_CONTROLLER_HEAP_SNAPSHOT_DIR`, where each signal writes `heap-<pid>-<n>.tracemalloc` (load
it with `tracemalloc.Snapshot.load`) and the process's `/proc/self/smaps_rollup` beside it. Without
the directory SIGUSR2 keeps its default action; with it but without tracing, a signal logs why it
wrote nothing.
"""

from __future__ import annotations

import os
import signal
import tracemalloc
from pathlib import Path

import structlog

log = structlog.get_logger("jobflow_controller.manager")

#: The environment variable naming the directory snapshots are written to.
SNAPSHOT_DIR_ENV = "JOBFLOW_CONTROLLER_HEAP_SNAPSHOT_DIR"


def write_snapshot(directory: Path, index: int) -> Path | None:
    """Write snapshot number `index` and a copy of smaps_rollup; the snapshot's path, or None."""
    if not tracemalloc.is_tracing():
        log.warning("SIGUSR2: tracemalloc is not tracing (set PYTHONTRACEMALLOC); no heap snapshot written")
        return None
    path = directory / f"heap-{os.getpid()}-{index}.tracemalloc"
    tracemalloc.take_snapshot().dump(str(path))
    rollup = Path("/proc/self/smaps_rollup")
    if rollup.exists():
        (directory / f"heap-{os.getpid()}-{index}.smaps_rollup").write_text(rollup.read_text())
    traced, peak = tracemalloc.get_traced_memory()
    log.info(
        "heap snapshot written",
        path=str(path),
        traced_bytes=traced,
        traced_peak_bytes=peak,
        tracemalloc_overhead_bytes=tracemalloc.get_tracemalloc_memory(),
    )
    return path


def install_from_environment(environ: dict[str, str] | None = None) -> bool:
    """Install the SIGUSR2 handler when the directory is set; True when installed."""
    env = os.environ if environ is None else environ
    directory = env.get(SNAPSHOT_DIR_ENV)
    if not directory:
        return False
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    taken = [0]

    def handle(_signum: int, _frame: object) -> None:
        taken[0] += 1
        try:
            write_snapshot(target, taken[0])
        except OSError as err:
            log.warning("SIGUSR2: cannot write the heap snapshot", error=str(err))

    signal.signal(signal.SIGUSR2, handle)
    return True
